//! The files a run writes, as types: every writer serializes these and every reader
//! (`--resume`, `runner report`, the run's page, `runner merge`, `runner pull`) deserializes
//! them, so renaming or retyping a field is a compile error in every place that uses it, never a
//! silent `n/a` on a page. Nothing here reads or writes a file; the methods of the types that do
//! work (a record's PGN, a summary's figures) live with that work (`store`, `report`, ...).
//!
//! - `run.json`: [`RunFile`] (the plan and its hash).
//! - `games.jsonl`: one [`GameRecord`] per line.
//! - `summary.json` of a match, tournament, tune, merge or pulled fleet run: [`RunSummary`]; of a
//!   sweep: [`SweepSummary`] (the same keys plus the sweep's).
//! - `plan.json` of `runner calibrate` and `runner searchtest`: [`CalibratePlanFile`],
//!   [`SearchtestPlanFile`]; their `summary.json`: [`CalibrateSummary`], [`SearchtestSummary`].
//!
//! Optional keys are left out when absent, as the writers always did, so a file read and written
//! back is the file it was (the round trip `tests/tests/formats.rs` checks on a real run).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use stats::bradley_terry::Ratings;
use stats::{Penta, Summary, Wdl};

use crate::plan::engine_spec::EngineSpec;
use crate::plan::limits::SideLimit;
use crate::plan::run_plan::RunPlan;
use crate::play::game::{Forfeit, GameResult};
use crate::play::probe::{Limit, ScoreMode};
use crate::play::termination::Termination;
use crate::play::uci_info::Eval;
use crate::store::merge::ShardSet;
use crate::store::move_fields::MoveFields;

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
    /// Statistics over complete pairs (`None` before the first pair completes).
    pub stats: Option<Summary>,
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
    /// Each pairing as the fleet decided it (`sweep::analysis::PointStatus`, a layer above
    /// this one, hence JSON here): a pulled sweep's table shows these, `runner report` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<serde_json::Value>,
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

/// `summary.json` of a sweep: the runner's keys ([`RunSummary`], at the top level so tools
/// reading a match summary read a sweep's too) and the sweep's analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// Always `sweep`.
    pub kind: String,
    /// What was compared: the engine, baseline, fixed options, time control, book, seed, ...
    pub context: Value,
    /// The swept parameters' names.
    pub params: Vec<String>,
    /// The analysis options (`sweep::analysis::AnalysisOptions`).
    pub options: Value,
    pub best: Option<BestPoint>,
    /// One row per point (`sweep::analysis::PointRow`).
    pub points: Vec<Value>,
    /// The fitted quadratic (`sweep::surface`).
    pub surface: Option<Value>,
    #[serde(flatten)]
    pub run: RunSummary,
}

/// A sweep's best point and how sure the sweep is of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestPoint {
    pub label: String,
    pub index: usize,
    pub score: f64,
    pub elo: Option<f64>,
    pub elo_ci: Option<[f64; 2]>,
    /// `None` while a point has fewer than `crate::report::figures::MIN_PAIRS` pairs, or with one
    /// point.
    pub p_best: Option<f64>,
    /// The fewest complete pairs of any point played.
    pub fewest_pairs: u64,
    pub method: String,
}

/// `plan.json` of `runner calibrate`: what is compared on resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibratePlanFile {
    pub engine: EngineSpec,
    pub positions_file: String,
    pub positions: usize,
    pub positions_sha256: String,
    pub depths: Vec<u32>,
    pub mode: ScoreMode,
}

/// `plan.json` of `runner searchtest`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchtestPlanFile {
    pub engine: EngineSpec,
    pub variants: Vec<SearchVariant>,
    pub positions_file: String,
    pub positions: usize,
    pub limit: Limit,
    pub concurrency: usize,
    /// The oracle's spec (`searchtest::oracle_spec::OracleSpec`), if one scores the moves.
    pub oracle: Option<Value>,
}

/// A search test's variant: a named set of UCI option values (`searchtest::variant`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchVariant {
    pub name: String,
    pub options: Vec<(String, String)>,
    /// This variant's own limit instead of the test's (e.g. half the node budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

/// `summary.json` of `runner calibrate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrateSummary {
    pub engine: EngineSpec,
    pub positions_file: String,
    pub positions: usize,
    pub searched: usize,
    pub searched_middlegame: usize,
    pub searched_endgame: usize,
    pub faults: usize,
    /// Stopped before every position was searched.
    pub partial: bool,
    pub mode: ScoreMode,
    /// Per depth pair and stage (`calibrate::pairs`).
    pub pairs: Vec<Value>,
    pub max_abs: i32,
    pub elapsed_s: f64,
    /// The fitted parameters (`calibrate::pairs::ParamRow`).
    pub rows: Vec<Value>,
    /// `pair stage: why`, per fit that failed.
    pub not_fitted: Vec<String>,
}

/// `summary.json` of `runner searchtest`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchtestSummary {
    pub engine: EngineSpec,
    pub limit: Limit,
    pub positions_file: String,
    pub positions: usize,
    pub searches: usize,
    pub faults: usize,
    /// Stopped before every position was searched by every variant.
    pub partial: bool,
    /// Per variant, over every position searched by all of them.
    pub variants: Vec<VariantSummary>,
    /// The same per stage of the positions (`middlegame`, `endgame`).
    pub by_stage: BTreeMap<String, Vec<VariantSummary>>,
    /// The oracle's figures (`null` without an oracle).
    pub oracle: Value,
    /// Solve rates of EPD `bm`/`am` (`null` without them).
    pub suite: Value,
}

/// The summary of one variant of a search test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantSummary {
    pub name: String,
    pub options: Vec<(String, String)>,
    /// Positions in the summary: those every variant searched without a fault.
    pub positions: usize,
    pub faults: usize,
    pub depth_mean: Option<f64>,
    pub depth_median: Option<f64>,
    pub nodes_mean: Option<f64>,
    pub nodes_median: Option<f64>,
    pub nodes_sd: Option<f64>,
    pub time_ms_mean: Option<f64>,
    /// Total nodes / total wall time.
    pub nps: Option<f64>,
    /// Positions compared with the first variant (equal to `positions`).
    pub paired: usize,
    /// Mean depth minus the first variant's, over paired positions.
    pub depth_gain: Option<f64>,
    /// First variant's total nodes / this variant's, over paired positions.
    pub speedup: Option<f64>,
    pub same_move_pct: Option<f64>,
    pub same_value_pct: Option<f64>,
    /// Sums of the `info string mpc` counters.
    pub mpc: BTreeMap<String, u64>,
}
