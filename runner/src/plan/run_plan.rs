//! The plan of a run: everything that decides which games are played and how (engines,
//! pairings, time control, book, seed, adjudication, SPRT, shard), and its hash, which guards
//! `--resume` and tells `runner merge` which shards belong together.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::hex::sha256_hex;
use crate::plan::adjudication::Adjudication;
use crate::plan::engine_spec::EngineSpec;
use crate::plan::limits::SideLimit;
use crate::plan::openings::BookOrder;
use crate::plan::schedule::{Pairing, Scheduling, Shard};
use crate::plan::time_control::TimeControl;
use crate::plan::tournament::Tournament;
use crate::plan::variant::Variant;

/// What kind of run a plan is, stored in run.json as the strings runners always wrote there
/// (`"match"`, `"gauntlet"`, `"round-robin"`, `"sweep"`, `"tune"`), so older run.json files
/// still read and keep their hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// Two engines (or one playing itself) at one time control.
    Match,
    /// More engines or time controls, gauntlet pairings.
    Gauntlet,
    /// More engines or time controls, everyone against everyone.
    RoundRobin,
    /// `runner sweep`: one pairing per point of the swept parameter.
    Sweep,
    /// `runner tune`: SPSA, the two perturbed engines of each iteration.
    Tune,
}

impl RunKind {
    /// The string stored in run.json and shown to the user.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Match => "match",
            RunKind::Gauntlet => "gauntlet",
            RunKind::RoundRobin => "round-robin",
            RunKind::Sweep => "sweep",
            RunKind::Tune => "tune",
        }
    }

    /// The kind of a tournament's plan.
    pub fn of_tournament(t: Tournament) -> RunKind {
        match t {
            Tournament::Gauntlet => RunKind::Gauntlet,
            Tournament::RoundRobin => RunKind::RoundRobin,
        }
    }

    /// A gauntlet or round-robin: its outputs are a tournament's tables and ratings.
    pub fn is_tournament(self) -> bool {
        matches!(self, RunKind::Gauntlet | RunKind::RoundRobin)
    }
}

impl std::fmt::Display for RunKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The opening book a run uses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookInfo {
    /// `None`: the standard start position only.
    pub path: Option<String>,
    /// SHA-256 of the book file's bytes.
    pub sha256: Option<String>,
    pub openings: usize,
    pub plies: Option<usize>,
}

/// Everything that decides which games a run plays and how. Two runs with equal plans play the
/// same games; the plan's hash guards `--resume`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// What kind of run this is (a match, a tournament, a sweep, a tune).
    pub kind: RunKind,
    pub engines: Vec<EngineSpec>,
    pub pairings: Vec<Pairing>,
    pub tc: TimeControl,
    pub timemargin_ms: u64,
    pub book: BookInfo,
    pub book_order: BookOrder,
    pub seed: u64,
    /// Game pairs per pairing (the cap when an SPRT may stop earlier).
    pub pairs: usize,
    pub adjudication: Adjudication,
    pub sprt: Option<stats::SprtSpec>,
    pub shard: Option<Shard>,
    /// Standard chess (left out of run.json, so older plans keep their hash) or Chess960.
    #[serde(default, skip_serializing_if = "Variant::is_standard")]
    pub variant: Variant,
    /// `--event`, `--site`: the PGN tags of games.pgn and `--pgnout` (left out of run.json when
    /// not given, so older plans keep their hash).
    #[serde(default, skip_serializing_if = "PgnTags::is_default")]
    pub pgn: PgnTags,
    /// A node cap beside a clock (`--tc 10+0.1 --nodes 50000`): `go wtime .. nodes N`. Left out
    /// of run.json when none (older plans keep their hash), as are the depth cap and the
    /// scheduling options below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// A depth cap beside a clock or a node limit (`--tc 10+0.1 --depth 12`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// `--repeat`, `--noswap`, `--reverse`, `--book-start`, `--wait`.
    #[serde(default, skip_serializing_if = "Scheduling::is_default")]
    pub scheduling: Scheduling,
}

/// The PGN `Event` and `Site` tags a run was given (`None`: the runner's defaults).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgnTags {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

impl PgnTags {
    pub fn is_default(&self) -> bool {
        *self == PgnTags::default()
    }

    /// `--event NAME`, `--site NAME`: one line of text each (a control character, a newline
    /// among them, would break the tag line), at most 1000 bytes.
    pub fn new(event: Option<&str>, site: Option<&str>) -> Result<PgnTags> {
        let check = |flag: &str, v: Option<&str>| -> Result<Option<String>> {
            let Some(v) = v else { return Ok(None) };
            if v.chars().any(char::is_control) {
                anyhow::bail!(
                    "{flag} {v:?}: control characters (a newline, a tab, ...) are not allowed in a PGN tag"
                );
            }
            if v.len() > 1000 {
                anyhow::bail!("{flag}: at most 1000 bytes");
            }
            Ok(Some(v.to_string()))
        };
        Ok(PgnTags { event: check("--event", event)?, site: check("--site", site)? })
    }
}

impl RunPlan {
    /// The time control of pairing `p`: its own, else the plan's.
    pub fn pairing_tc(&self, p: usize) -> TimeControl {
        self.pairings.get(p).and_then(|x| x.tc).unwrap_or(self.tc)
    }

    /// The run's own limits in pairing `p` (its time control, the caps beside it, the margin),
    /// for engines without limits of their own.
    pub fn run_limit(&self, p: usize) -> SideLimit {
        SideLimit::of_run(self.pairing_tc(p), self.nodes, self.depth, self.timemargin_ms)
    }

    /// What engine `e` may use in pairing `p`: its own limits, else the run's.
    pub fn side_limit(&self, p: usize, e: usize) -> SideLimit {
        let own = self.engines.get(e).map(|s| s.limits).unwrap_or_default();
        SideLimit::resolve(self.run_limit(p), &own)
    }

    /// The limits the run's engines play under, in one line: every display of a run's limits
    /// (the progress lines, table.md, the run page, the served list, `runner status`) says it
    /// with this. `tc=10+0.1` when every engine plays alike (a gauntlet's clocks joined by
    /// ` and `), else each engine's own: `n3000: nodes=3000; n600: nodes=600`. The time margin
    /// shows only when it is not the default.
    pub fn limits_text(&self) -> String {
        let each: Vec<(&str, Vec<String>)> = self
            .engines
            .iter()
            .enumerate()
            .map(|(e, spec)| {
                let mut words: Vec<String> = Vec::new();
                let played: Vec<usize> = (0..self.pairings.len())
                    .filter(|&p| self.pairings[p].first == e || self.pairings[p].second == e)
                    .collect();
                let played = if played.is_empty() { vec![0] } else { played };
                for p in played {
                    let w = self.side_limit(p, e).brief();
                    if !words.contains(&w) {
                        words.push(w);
                    }
                }
                (spec.name.as_str(), words)
            })
            .collect();
        match each.first() {
            None => self.run_limit(0).brief(),
            Some((_, first)) if each.iter().all(|(_, w)| w == first) => first.join(" and "),
            Some(_) => each
                .iter()
                .map(|(name, w)| format!("{name}: {}", w.join(" and ")))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// SHA-256 (hex) of the plan's canonical JSON.
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        sha256_hex(&json)
    }

    /// The hash of the plan without its shard: equal for every shard of one run (and for the
    /// unsharded run), so `runner merge` can tell which results belong together.
    pub fn merge_hash(&self) -> String {
        RunPlan { shard: None, ..self.clone() }.hash()
    }
}

/// SHA-256 (hex) of a file's bytes.
pub fn file_sha256(path: &Path) -> Result<String> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(sha256_hex(&bytes))
}

/// Games of a match (or of each sweep point) without and with `--sprt`.
pub const DEFAULT_GAMES: u64 = 64;
pub const DEFAULT_SPRT_CAP: u64 = 100_000;
/// Most games one run may schedule, all pairings (sweep points) together: the schedule is built
/// in memory (about 60 bytes per game), so larger counts are refused rather than exhausting it.
pub const MAX_GAMES: u64 = 10_000_000;

/// Game pairs per pairing for `games` games in each of `pairings` pairings; refused with one
/// line when the run would schedule more than [`MAX_GAMES`] games.
pub fn game_pairs(games: u64, pairings: usize) -> Result<usize> {
    let pairs = games.div_ceil(2);
    let total = pairs.checked_mul(2).and_then(|g| g.checked_mul(pairings.max(1) as u64));
    match total {
        Some(t) if t <= MAX_GAMES => Ok(pairs as usize),
        _ => anyhow::bail!(
            "--games {games} is too many: one run schedules at most {MAX_GAMES} games \
             ({pairings} pairing(s) x {games} games here)"
        ),
    }
}

/// The games to play per pairing: `--games`, else the default (a cap with an SPRT).
pub fn games_to_play(games: Option<u64>, sprt: bool) -> Result<u64> {
    match games {
        Some(0) => anyhow::bail!("--games must be > 0"),
        Some(g) => Ok(g),
        None if sprt => Ok(DEFAULT_SPRT_CAP),
        None => Ok(DEFAULT_GAMES),
    }
}

/// Names the top-level plan fields that differ.
pub fn plan_differences(old: &RunPlan, new: &RunPlan) -> Vec<String> {
    let (a, b) = (serde_json::to_value(old), serde_json::to_value(new));
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (a, b) else {
        return vec!["unreadable plan".into()];
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) if !x.is_object() && !x.is_array() => {
                format!("{k}: stored {x}, now {y}")
            }
            _ => format!("{k} changed"),
        })
        .collect();
    if diffs.is_empty() { vec!["hash mismatch".into()] } else { diffs }
}

/// A small plan for the tests of this crate (two engines on 100 nodes, one opening).
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    fn engine(name: &str) -> crate::plan::engine_spec::EngineSpec {
        let (name, cmd) = (name.into(), "e".into());
        let limits = Default::default();
        crate::plan::engine_spec::EngineSpec {
            name,
            cmd,
            args: vec![],
            dir: None,
            options: vec![],
            limits,
        }
    }

    pub(crate) fn plan() -> RunPlan {
        RunPlan {
            kind: crate::plan::run_plan::RunKind::Match,
            engines: ["A", "B"].map(engine).to_vec(),
            pairings: vec![Pairing { label: "A vs B".into(), first: 0, second: 1, tc: None }],
            tc: TimeControl::Nodes { nodes: 100 },
            timemargin_ms: 100,
            book: BookInfo { path: None, sha256: None, openings: 1, plies: None },
            book_order: BookOrder::Sequential,
            seed: 1,
            pairs: 2,
            adjudication: Adjudication::default(),
            sprt: None,
            shard: None,
            variant: Default::default(),
            pgn: Default::default(),
            nodes: None,
            depth: None,
            scheduling: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Engines on limits of their own (`--engine ..,nodes=3000 --engine ..,nodes=600`) are
    /// described each with its own; engines alike once; a gauntlet's clocks together.
    #[test]
    fn limits_text_names_each_engines_own_limits() {
        let mut plan = fixtures::plan();
        assert_eq!(plan.limits_text(), "nodes=100");
        plan.tc = TimeControl::parse_tc("10+0.1").unwrap();
        plan.nodes = Some(50);
        assert_eq!(plan.limits_text(), "tc=10+0.1 nodes=50");
        plan.timemargin_ms = 20;
        assert_eq!(plan.limits_text(), "tc=10+0.1 nodes=50 timemargin=20");
        plan.timemargin_ms = 100;
        plan.engines[0].limits.nodes = Some(3000);
        plan.engines[1].limits.nodes = Some(600);
        assert_eq!(plan.limits_text(), "A: nodes=3000; B: nodes=600");
        plan.engines[1].limits = plan.engines[0].limits;
        assert_eq!(plan.limits_text(), "nodes=3000");
        plan.engines[0].limits = Default::default();
        plan.engines[1].limits = Default::default();
        plan.nodes = None;
        plan.pairings[0].tc = Some(TimeControl::parse_tc("60+0.6").unwrap());
        let mut p2 = plan.pairings[0].clone();
        p2.tc = None;
        plan.pairings.push(p2);
        assert_eq!(plan.limits_text(), "tc=60+0.6 and tc=10+0.1");
    }

    /// Counts that cannot be scheduled are refused with one line, not a panic.
    #[test]
    fn huge_game_counts_are_refused() {
        assert_eq!(game_pairs(7, 3).unwrap(), 4);
        assert_eq!(game_pairs(MAX_GAMES, 1).unwrap() as u64, MAX_GAMES / 2);
        for (games, pairings) in
            [(u64::MAX, 1), (100_000_000, 1), (MAX_GAMES, 2), (u64::MAX - 1, 7)]
        {
            let e = game_pairs(games, pairings).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--games {games} is too many")) && !e.contains('\n'),
                "{e}"
            );
        }
    }
}
