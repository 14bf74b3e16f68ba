//! `run.json`, `games.jsonl` and the `summary.json` of a run that is not a sweep (a match, a
//! tournament, a tune, a merged or pulled folder); a sweep's summary holds this one's keys.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use stats::bradley_terry::Ratings;
use stats::{Penta, Summary, Wdl};

use crate::plan::limits::SideLimit;
use crate::plan::run_plan::RunPlan;
use crate::play::game::{Forfeit, GameResult};
use crate::play::tablebase::TbProbe;
use crate::play::termination::Termination;
use crate::play::uci_info::Eval;
use crate::store::merge::ShardSet;
use crate::store::move_fields::MoveFields;

use super::sweep::PointStatus;

/// The contents of `run.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    pub format: u32,
    pub runner_version: String,
    pub created: String,
    pub plan_hash: String,
    pub plan: RunPlan,
    /// `--affinity` of the invocation that created the run: the CPU of each concurrency slot.
    /// Not part of the plan (it does not change which games are played, as --concurrency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Vec<usize>>,
    /// A folder made by `runner merge`: the shards it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<ShardSet>,
    /// A folder made by `runner merge`: the folders merged, with their shards and games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedFrom>>,
}

/// One folder a merge read (run.json `merged_from`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedFrom {
    pub dir: String,
    /// The folder's 1-based shard indices.
    pub shards: BTreeSet<usize>,
    pub games: usize,
}

/// Summary figures of the runner's own latency in one game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Runner-measured time minus engine-reported time (ms), over moves where the engine
    /// reported a time.
    pub overhead_ms_mean: Option<f64>,
    pub overhead_ms_max: Option<f64>,
    /// From one engine's `bestmove` read to the opponent's `go` flushed (microseconds).
    pub turnaround_us_mean: Option<f64>,
    pub turnaround_us_max: Option<u64>,
}

/// One line of `games.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Schedule position of the job (game pair).
    pub seq: usize,
    /// Pairing index and its label.
    pub pairing: usize,
    pub label: String,
    pub pair: usize,
    /// 0: the pairing's first engine had White; 1: Black.
    pub game: u8,
    /// Opening index in the book.
    pub opening: usize,
    /// Start position (the opening's root, move counters kept).
    pub fen: String,
    pub white: String,
    pub black: String,
    pub result: GameResult,
    pub termination: Termination,
    /// Plies from `fen`, book moves included.
    pub plies: usize,
    /// How many of `moves` came from the book.
    pub book_plies: usize,
    /// Every move from `fen` in UCI notation, book moves first.
    pub moves: Vec<String>,
    /// Per engine move (aligned with `moves[book_plies..]`): score, depth, runner-measured time
    /// and engine-reported time.
    pub scores: Vec<Option<Eval>>,
    pub depths: Vec<Option<u32>>,
    pub times_ms: Vec<f64>,
    pub engine_times_ms: Vec<Option<u64>>,
    /// Seldepth, nodes, nps, hashfull, pv and time left per engine move (absent in records of
    /// older runners, and when no move had any).
    #[serde(default, skip_serializing_if = "MoveFields::is_empty")]
    pub move_info: MoveFields,
    pub latency: LatencyStats,
    /// The move an engine sent that was not legal (illegal-move endings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub illegal_move: Option<String>,
    /// How the flag fell (time forfeits): think time against clock and margin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forfeit: Option<Forfeit>,
    pub duration_ms: u64,
    /// `YYYY.MM.DD` when the game ended.
    pub date: String,
    /// The hash of the run's plan without its shard ([`RunPlan::merge_hash`]): a game of
    /// another run is refused by `--resume` and `runner merge`. Records of older runners have
    /// none and are refused there too (they cannot be checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// Whether the pairing's first engine had White, stored only when not the usual (game 0:
    /// White, game 1: Black), as under `--noswap` and `--reverse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_white: Option<bool>,
    /// What White and Black could use in this game: clock, node and depth caps, time margin
    /// (per-engine limits and time odds). Absent in records of older runners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<[SideLimit; 2]>,
    /// For a game the Syzygy tables ended (`adjudication-tablebase`): their WDL value for the
    /// side to move of the final position, its piece count and halfmove clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tablebase: Option<TbProbe>,
}

/// `summary.json` of a run: how it stopped, each pairing's counts and statistics, and what the
/// run measured or where its games came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// `complete`, `sprt`, `interrupted`; a merge also `partial`, `incomplete`; a sweep's live
    /// outputs `running`. Absent (with `pairings`) only in the summary.json that `runner report`
    /// writes for a tournament's tables when the run stopped before writing its own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stopped_by: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairings: Vec<PairingSummary>,
    /// The runner's own cost (`report::overhead`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_overhead: Option<OverheadReport>,
    /// `--affinity`: the CPU of each concurrency slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Vec<usize>>,
    /// The run's warnings (faulting engines, starved slots, games replayed after a pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    /// A folder of `runner merge`: what was merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeInfo>,
    /// A folder of `runner pull`: the fleet run's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetOrigin>,
    /// A gauntlet's or round-robin's tables and ratings (`gauntlet::files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauntlet: Option<GauntletTables>,
}

/// One pairing of [`RunSummary`], from its first engine's side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingSummary {
    pub label: String,
    pub first: String,
    pub second: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Games whose pair partner has not finished (not in `stats`).
    pub unpaired_games: usize,
    pub terminations: BTreeMap<Termination, u64>,
    /// Complete pairs whose two games played the same moves (`report::same_moves`); absent in
    /// summaries of older runners.
    #[serde(default)]
    pub same_moves: SameMoves,
    /// Statistics over complete pairs (`None` before the first pair completes).
    pub stats: Option<Summary>,
}

/// Complete pairs of one pairing whose two games played the same moves (`same_moves` of
/// [`PairingSummary`]; counted and worded by `report::same_moves`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SameMoves {
    /// Pairs whose two games (colours reversed) repeat each other's moves.
    pub identical: u64,
    /// Pairs whose games agree on every move both played, one of them ending sooner.
    pub alike: u64,
}

/// Figures of the runner's own cost in one run of the runner process (a resumed run counts only
/// the games it played itself; merged and pulled folders only what the records keep).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OverheadReport {
    pub games: u64,
    pub moves: u64,
    pub runner_cpu_s: Option<f64>,
    pub engines_cpu_s: Option<f64>,
    /// Runner CPU as a fraction of the engines' CPU.
    pub runner_cpu_share: Option<f64>,
    pub runner_cpu_per_game_ms: Option<f64>,
    pub runner_cpu_per_move_us: Option<f64>,
    pub turnaround_us_mean: Option<f64>,
    /// 99th percentile over the moves this process played (within 1/64 above 1 ms; not known for
    /// merged shards, whose records keep per-game figures only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turnaround_us_p99: Option<u64>,
    pub turnaround_us_max: Option<u64>,
    /// Runner-measured minus engine-reported think time, mean over moves that report a time.
    pub measured_minus_reported_ms_mean: Option<f64>,
}

/// The `merge` entry of a merged folder's summary.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// `"1/3, 2/3"`.
    pub shards: String,
    /// The shards missing, described as `shards`.
    pub missing: String,
    pub games: usize,
    pub scheduled_games: usize,
    pub sources: Vec<MergeSource>,
}

/// One folder of a merge, as the merged summary.json lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeSource {
    pub dir: String,
    /// The folder's 1-based shard indices.
    pub shards: BTreeSet<usize>,
    pub games: usize,
    /// What the folder's own summary.json said (`unknown` without one).
    pub stopped_by: String,
    pub runner_overhead: Option<OverheadReport>,
}

/// The `fleet` entry of a pulled folder's summary.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetOrigin {
    /// The run's state in the database (`running`, `decided`, ...).
    pub state: String,
    pub stop_reason: Option<String>,
    pub games: usize,
    pub scheduled_games: usize,
    /// Pairings the fleet stopped early (racing), and why.
    pub dropped: Vec<DroppedPairing>,
    /// Each pairing as the fleet decided it: a pulled sweep's table shows these, `runner
    /// report` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<PointStatus>>,
    /// The run's place in the fleet when it was pulled: owner, priority, share, rate, time left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<Box<FleetShare>>,
}

/// The `fleet.share` entry of a pulled folder's summary.json: what `runner status` says of the
/// run's share of the fleet, at the time of the pull.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetShare {
    /// The role that submitted the run.
    pub owner: String,
    pub priority: i32,
    pub throughput: i32,
    /// Its throughput divided among its owner's active runs of its priority (active runs only).
    pub weight: Option<f64>,
    /// Its part of every active run's pairs in flight (None when none is in flight or the run
    /// is not active).
    pub share_now: Option<f64>,
    /// Its weight over its priority level's (active runs only).
    pub share_target: Option<f64>,
    /// Pairs per hour now (None without two reported pairs).
    pub pairs_per_hour: Option<f64>,
    /// Time left of an active run (None for a finished one).
    pub time_left: Option<TimeLeft>,
    /// `runner status`'s line for it.
    pub words: String,
}

/// Time left of an active fleet run: the pairs it has left, with a range for an SPRT, and the
/// time those take at its current rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeLeft {
    /// `fixed` (a fixed length: exactly `pairs`), `sprt` (expected `pairs`, range `pairs_low`
    /// to `pairs_high`) or `at_most` (an SPRT with too few pairs for an estimate: the schedule).
    pub kind: String,
    pub pairs: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_high: Option<f64>,
    /// Seconds at the current rate (None without a rate), and the range's.
    pub seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_high: Option<f64>,
}

/// A pairing a fleet run dropped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedPairing {
    pub pairing: usize,
    pub label: String,
    pub why: String,
}

/// Where the games of a gathered folder came from: its summary.json's `merge` or `fleet` entry.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    Merge(MergeInfo),
    Fleet(FleetOrigin),
}

impl RunSummary {
    /// Sets the entry of `origin`.
    pub fn set_origin(&mut self, origin: Origin) {
        match origin {
            Origin::Merge(m) => self.merge = Some(m),
            Origin::Fleet(f) => self.fleet = Some(f),
        }
    }

    /// The ratings anchor (engine index, Elo) of a tournament's tables, if they were written.
    pub fn ratings_anchor(&self) -> Option<(usize, f64)> {
        let r = &self.gauntlet.as_ref()?.ratings.first()?.ratings;
        Some((r.anchor, r.anchor_elo))
    }

    /// Keeps what only the live run could measure (overhead, affinity, warnings) and where the
    /// games came from, from an earlier summary of the same folder, where this one has none.
    pub fn keep_measured(&mut self, old: RunSummary) {
        self.runner_overhead = self.runner_overhead.take().or(old.runner_overhead);
        self.affinity = self.affinity.take().or(old.affinity);
        self.warnings = self.warnings.take().or(old.warnings);
        self.merge = self.merge.take().or(old.merge);
        self.fleet = self.fleet.take().or(old.fleet);
        self.gauntlet = self.gauntlet.take().or(old.gauntlet);
    }
}

/// One pairing at one time control of a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingRow {
    /// `A vs B` (without the time control).
    pub pairing: String,
    pub tc: String,
    pub first: String,
    pub second: String,
    /// Every finished game.
    pub wdl: Wdl,
    /// Complete pairs only.
    pub penta: Penta,
    /// Statistics over complete pairs (`None` before the first pair completes).
    pub stats: Option<Summary>,
}

/// Ratings fitted over the games of one time control (or all).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingsTable {
    /// A time control, or `all` when pooled over several.
    pub tc: String,
    pub ratings: Ratings,
}

/// Everything a gauntlet prints and stores (summary.json `gauntlet`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GauntletTables {
    pub engines: Vec<String>,
    pub tcs: Vec<String>,
    pub rows: Vec<PairingRow>,
    pub ratings: Vec<RatingsTable>,
}
