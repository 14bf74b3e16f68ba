//! Merging the shards of one run (`--shard K/N`) into one results directory holding what the
//! unsharded run would: here the store's part, run.json (the plan without its shard), games.jsonl
//! and games.pgn in schedule order; the caller then writes summary.json, and for a sweep
//! sweep.json, the tables and the plot (`runner merge`, `crate::cmd::merge`).
//!
//! Shards belong together when their plans hash equal without the shard
//! ([`RunPlan::merge_hash`]) and they split the run the same N ways. A merged directory records
//! which shards it holds (`merged` in its run.json), so a partial merge can later be merged again
//! with the shards that were missing; `--resume` on it (without `--shard`) plays the missing games
//! on one machine instead.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::plan::run_plan::{RunPlan, plan_differences};
use crate::plan::schedule::{Job, build_schedule};
use crate::store::formats::{MergeInfo, MergeSource, MergedFrom, SweepPlan};
use crate::store::records_check::{CheckedRecords, RecordsFile, check_records};
use crate::store::{
    GAMES_FILE, GameRecord, RUN_FILE, RunFile, RunSummary, Store, parse_games_numbered,
    read_summary, write_atomic,
};

/// Which shards of an N-way split a results directory holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSet {
    /// N.
    pub count: usize,
    /// 1-based shard indices.
    pub shards: BTreeSet<usize>,
}

impl ShardSet {
    /// The shards a plain run holds: its own, or all of a run without `--shard` (1 of 1).
    pub fn of_plan(plan: &RunPlan) -> ShardSet {
        match plan.shard {
            Some(s) => ShardSet { count: s.count, shards: BTreeSet::from([s.index]) },
            None => ShardSet { count: 1, shards: BTreeSet::from([1]) },
        }
    }

    /// Whether the game pair at schedule position `seq` belongs to these shards.
    pub fn holds(&self, seq: usize) -> bool {
        self.shards.contains(&(seq % self.count + 1))
    }

    /// The shards not held, in order.
    pub fn missing(&self) -> Vec<usize> {
        (1..=self.count).filter(|k| !self.shards.contains(k)).collect()
    }

    /// `"1/3, 2/3"`.
    pub fn describe(&self) -> String {
        describe(&self.shards.iter().copied().collect::<Vec<_>>(), self.count)
    }
}

fn describe(shards: &[usize], count: usize) -> String {
    shards.iter().map(|k| format!("{k}/{count}")).collect::<Vec<_>>().join(", ")
}

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no results directories to merge")]
    NoInput,
    #[error("{dir} is not a shard of the same run as {first} (plan differs: {diffs})")]
    DifferentPlan { dir: String, first: String, diffs: String },
    #[error(
        "{dir} splits the run {count}-way but {first} splits it {first_count}-way: merge shards of one split"
    )]
    DifferentSplit { dir: String, count: usize, first: String, first_count: usize },
    #[error("shard {shard} is given twice: {a} and {b}")]
    Duplicate { shard: String, a: String, b: String },
    #[error("{dir} is not a sweep of the same points as {first} (sweep.json differs: {diffs})")]
    DifferentSweep { dir: String, first: String, diffs: String },
    /// A record that does not belong, or two different records of one game
    /// ([`check_records`]).
    #[error("{0}")]
    Records(String),
}

/// One results directory given to `runner merge`.
#[derive(Debug)]
pub struct ShardInput {
    pub dir: PathBuf,
    pub plan: RunPlan,
    pub set: ShardSet,
    /// The records of games.jsonl with their line numbers, as read (unchecked).
    pub records: Vec<(usize, GameRecord)>,
    /// A sweep's sweep.json; shards must agree on it.
    pub side_plan: Option<SweepPlan>,
    /// The shard's summary.json (absent when the shard was killed before writing it).
    pub summary: Option<RunSummary>,
}

impl ShardInput {
    /// Reads a results directory without changing it (a last line cut short by a kill is
    /// ignored, not repaired).
    pub fn load(dir: &Path, side_plan: SidePlan) -> Result<ShardInput> {
        // Refused while a runner writes the directory.
        let _lock = super::dir::lock_for_reading(dir)?;
        let run_path = dir.join(RUN_FILE);
        let text = fs::read_to_string(&run_path).with_context(|| {
            format!("{} is not a results directory (cannot read {RUN_FILE})", dir.display())
        })?;
        let run: RunFile = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid run file", run_path.display()))?;
        let set = run.merged.clone().unwrap_or_else(|| ShardSet::of_plan(&run.plan));
        let games = dir.join(GAMES_FILE);
        let records = match fs::read(&games) {
            Ok(b) => parse_games_numbered(&b).with_context(|| games.display().to_string())?.0,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", games.display())),
        };
        let summary = read_summary(dir);
        Ok(ShardInput {
            dir: dir.to_path_buf(),
            plan: run.plan,
            set,
            records,
            side_plan: side_plan(dir)?,
            summary,
        })
    }

    fn name(&self) -> String {
        self.dir.display().to_string()
    }

    fn stopped_by(&self) -> &str {
        self.summary.as_ref().map_or("unknown", |s| s.stopped_by.as_str())
    }
}

/// What [`check_inputs`] found: the shards the inputs hold together, and the checked records of
/// each input (exact copies kept once, with a warning each).
#[derive(Debug)]
pub struct CheckedInputs {
    pub set: ShardSet,
    pub records: CheckedRecords,
}

/// Checks that `inputs` are disjoint shards of one run and that every stored game belongs to its
/// directory's shards ([`check_records`]).
pub fn check_inputs(inputs: &[ShardInput]) -> Result<CheckedInputs, MergeError> {
    let first = inputs.first().ok_or(MergeError::NoInput)?;
    let hash = first.plan.merge_hash();
    let mut owner: BTreeMap<usize, &ShardInput> = BTreeMap::new();
    for inp in inputs {
        if inp.plan.merge_hash() != hash {
            let unsharded = |p: &RunPlan| RunPlan { shard: None, ..p.clone() };
            return Err(MergeError::DifferentPlan {
                dir: inp.name(),
                first: first.name(),
                diffs: plan_differences(&unsharded(&first.plan), &unsharded(&inp.plan)).join(", "),
            });
        }
        if inp.set.count != first.set.count {
            return Err(MergeError::DifferentSplit {
                dir: inp.name(),
                count: inp.set.count,
                first: first.name(),
                first_count: first.set.count,
            });
        }
        if inp.side_plan != first.side_plan {
            return Err(MergeError::DifferentSweep {
                dir: inp.name(),
                first: first.name(),
                diffs: sweep_differences(first.side_plan.as_ref(), inp.side_plan.as_ref()),
            });
        }
        for &k in &inp.set.shards {
            if let Some(prev) = owner.insert(k, inp) {
                return Err(MergeError::Duplicate {
                    shard: format!("{k}/{}", inp.set.count),
                    a: prev.name(),
                    b: inp.name(),
                });
            }
        }
    }
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.dir.join(GAMES_FILE)).collect();
    let files = inputs
        .iter()
        .zip(&paths)
        .map(|(i, path)| RecordsFile { path, set: &i.set, records: i.records.clone() })
        .collect();
    let records = check_records(&first.plan, files).map_err(MergeError::Records)?;
    let set = ShardSet { count: first.set.count, shards: owner.into_keys().collect() };
    Ok(CheckedInputs { set, records })
}

/// The unsharded schedule of a plan.
pub fn schedule_of(plan: &RunPlan) -> Vec<Job> {
    build_schedule(
        plan.pairings.len(),
        plan.pairs,
        plan.book.openings,
        plan.book_order,
        plan.seed,
        &plan.scheduling,
    )
}

fn sweep_differences(a: Option<&SweepPlan>, b: Option<&SweepPlan>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => {
            let d: Vec<String> =
                a.changed_fields(b).iter().map(|k| format!("{k} changed")).collect();
            if d.is_empty() { "plan changed".into() } else { d.join(", ") }
        }
        (Some(_), None) => "the first is a sweep, this one has no sweep.json".into(),
        (None, Some(_)) => "this one is a sweep, the first has no sweep.json".into(),
        _ => "unreadable sweep plan".into(),
    }
}

/// What a merge produced.
#[derive(Debug)]
pub struct Merged {
    pub dir: PathBuf,
    pub plan: RunPlan,
    /// Shards merged.
    pub set: ShardSet,
    /// Shards not given (a partial merge).
    pub missing: Vec<usize>,
    pub games: usize,
    /// Games of the whole unsharded schedule.
    pub scheduled_games: usize,
    /// `complete`, `sprt` (shards stopped on SPRT decisions), `incomplete` (some shard lacks
    /// games without such a stop) or `partial` (shards missing).
    pub stopped_by: String,
    /// Per shard that lacks games without an SPRT stop: which, and how many it holds.
    pub shortfalls: Vec<String>,
    /// The merged games, in schedule order.
    pub records: Vec<GameRecord>,
    /// The `merge` entry of summary.json: shards, missing, games, sources.
    pub merge_info: MergeInfo,
    /// The sweep plan the shards share (a sweep's sweep.json).
    pub side_plan: Option<SweepPlan>,
    /// The ratings anchor (engine index, Elo) of a tournament's shards.
    pub anchor: (usize, f64),
}

/// Reads a sweep's plan file from a results directory (`None`: there is none).
pub type SidePlan<'a> = &'a dyn Fn(&Path) -> Result<Option<SweepPlan>>;

/// Merges the stores of the results directories `inputs` into the new directory `out`: run.json,
/// games.jsonl and games.pgn. The summaries and tables are the caller's (they depend on the kind
/// of run); [`Merged`] holds what they need.
pub fn merge_dirs(inputs: &[PathBuf], out: &Path, side_plan: SidePlan) -> Result<Merged> {
    let loaded: Vec<ShardInput> =
        inputs.iter().map(|d| ShardInput::load(d, side_plan)).collect::<Result<_>>()?;
    let CheckedInputs { set, records: checked } = check_inputs(&loaded)?;
    check_out_dir(inputs, out)?;
    for w in &checked.warnings {
        errln!("warning: {w}");
    }
    let first = &loaded[0];
    let plan = RunPlan { shard: None, ..first.plan.clone() };
    let held: Vec<usize> = checked.files.iter().map(Vec::len).collect();
    let mut records = checked.into_records();
    records.sort_by_key(|r| (r.seq, r.game));
    let jobs = schedule_of(&plan);
    let scheduled_games = jobs.len() * 2;
    let missing = set.missing();
    // A shard short of games is fine only when it stopped on an SPRT (or racing) decision.
    let can_stop_early =
        plan.sprt.is_some() || first.side_plan.as_ref().is_some_and(|s| s.race.is_some());
    let shortfalls = shortfalls(&loaded, &held, &jobs, can_stop_early);
    let stopped_by = stopped_by(&missing, records.len() == scheduled_games, &shortfalls);
    let sources: Vec<MergeSource> = loaded
        .iter()
        .zip(&held)
        .map(|(i, &games)| MergeSource {
            dir: i.name(),
            shards: i.set.shards.clone(),
            games,
            stopped_by: i.stopped_by().to_string(),
            runner_overhead: i.summary.as_ref().and_then(|s| s.runner_overhead.clone()),
        })
        .collect();
    write_merged(out, &plan, &set, &sources, &records)?;
    let merge_info = MergeInfo {
        shards: set.describe(),
        missing: describe(&missing, set.count),
        games: records.len(),
        scheduled_games,
        sources,
    };
    Ok(Merged {
        dir: out.to_path_buf(),
        plan,
        set,
        missing,
        games: records.len(),
        scheduled_games,
        stopped_by,
        shortfalls,
        records,
        merge_info,
        side_plan: first.side_plan.clone(),
        anchor: gauntlet_anchor(&loaded),
    })
}

/// Per shard that holds fewer games than the schedule gives it, without an early stop that
/// explains it (`can_stop_early` and its summary says `sprt`): which, and how many it holds
/// (`held`, by shard).
fn shortfalls(
    loaded: &[ShardInput],
    held: &[usize],
    jobs: &[Job],
    can_stop_early: bool,
) -> Vec<String> {
    loaded
        .iter()
        .zip(held)
        .filter_map(|(i, &held)| {
            let due = jobs.iter().filter(|j| i.set.holds(j.seq)).count() * 2;
            let early = can_stop_early && i.stopped_by() == "sprt";
            (held < due && !early).then(|| {
                format!(
                    "shard {} ({}): {held} of {due} scheduled games (its summary says {})",
                    i.set.describe(),
                    i.name(),
                    i.stopped_by()
                )
            })
        })
        .collect()
}

/// [`Merged::stopped_by`]: `partial`, `complete`, `sprt` or `incomplete`.
fn stopped_by(missing: &[usize], all_games: bool, shortfalls: &[String]) -> String {
    if !missing.is_empty() {
        "partial"
    } else if all_games {
        "complete"
    } else if shortfalls.is_empty() {
        "sprt"
    } else {
        "incomplete"
    }
    .to_string()
}

/// Writes the merged run.json (the unsharded plan, whose hash is the unsharded run's, plus what
/// was merged) and games.jsonl into `out`, then reopens it as a run, which checks it and
/// rewrites games.pgn in schedule order.
fn write_merged(
    out: &Path,
    plan: &RunPlan,
    set: &ShardSet,
    sources: &[MergeSource],
    records: &[GameRecord],
) -> Result<()> {
    super::files::create_dir_all(out)?;
    let run = RunFile {
        merged: Some(set.clone()),
        merged_from: Some(
            sources
                .iter()
                .map(|s| MergedFrom {
                    dir: s.dir.clone(),
                    shards: s.shards.clone(),
                    games: s.games,
                })
                .collect(),
        ),
        ..RunFile::new(plan.clone())
    };
    write_atomic(&out.join(RUN_FILE), serde_json::to_string_pretty(&run)?.as_bytes())?;
    let mut jsonl = String::new();
    for r in records {
        jsonl.push_str(&serde_json::to_string(r)?);
        jsonl.push('\n');
    }
    write_atomic(&out.join(GAMES_FILE), jsonl.as_bytes())?;
    drop(Store::resume(out, plan).context("checking the merged results")?);
    Ok(())
}

/// The ratings anchor (engine index, Elo) a tournament's shards used, from their summary.json
/// (the first engine at 0 Elo, the command's default, when no shard wrote one).
fn gauntlet_anchor(inputs: &[ShardInput]) -> (usize, f64) {
    inputs.iter().find_map(|i| i.summary.as_ref()?.ratings_anchor()).unwrap_or((0, 0.0))
}

/// `out` must be a new directory (or one without a run), and none of the inputs.
fn check_out_dir(inputs: &[PathBuf], out: &Path) -> Result<()> {
    let canon = |p: &Path| fs::canonicalize(p).ok();
    if let Some(o) = canon(out)
        && inputs.iter().any(|i| canon(i).as_ref() == Some(&o))
    {
        bail!("--out {} is one of the directories being merged: choose a new one", out.display());
    }
    let holds_games = fs::metadata(out.join(GAMES_FILE)).is_ok_and(|m| m.len() > 0);
    if out.join(RUN_FILE).exists() || holds_games {
        bail!("{} already holds a run: choose a new --out for the merge", out.display());
    }
    // Any other file there is the user's: a merge would overwrite it.
    super::dir::check_new_out(out, &|_| false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::adjudication::Adjudication;
    use crate::plan::openings::BookOrder;
    use crate::plan::run_plan::{BookInfo, RunKind};
    use crate::plan::schedule::{Pairing, Shard};
    use crate::plan::time_control::TimeControl;

    fn plan(shard: Option<(usize, usize)>, seed: u64) -> RunPlan {
        RunPlan {
            kind: RunKind::Match,
            engines: crate::store::tests::plan().engines,
            pairings: vec![Pairing { label: "A vs B".into(), first: 0, second: 1, tc: None }],
            tc: TimeControl::Depth { depth: 2 },
            timemargin_ms: 100,
            book: BookInfo { path: None, sha256: None, openings: 3, plies: None },
            book_order: BookOrder::Random,
            seed,
            pairs: 6,
            adjudication: Adjudication::default(),
            sprt: None,
            shard: shard.map(|(index, count)| Shard { index, count }),
            variant: Default::default(),
            pgn: Default::default(),
            nodes: None,
            depth: None,
            scheduling: Default::default(),
        }
    }

    /// Both games of the job at `seq`, as the runner would store them.
    fn games(p: &RunPlan, seq: usize) -> Vec<GameRecord> {
        let job = schedule_of(p)[seq];
        (0..2)
            .map(|game: usize| {
                let (white, black) = (["A", "B"][game], ["B", "A"][game]);
                serde_json::from_value(json!({
                    "seq": seq, "pairing": job.pairing, "label": "A vs B", "pair": job.pair,
                    "game": game, "opening": job.opening, "fen": crate::plan::openings::STARTPOS_FEN,
                    "white": white, "black": black,
                    "result": "1/2-1/2", "termination": "max-moves",
                    "plies": 0, "book_plies": 0, "moves": [], "scores": [], "depths": [],
                    "times_ms": [], "engine_times_ms": [], "latency": {}, "duration_ms": 0,
                    "date": "2026.11.22", "plan_hash": p.merge_hash()
                }))
                .unwrap()
            })
            .collect()
    }

    fn input(name: &str, p: RunPlan, seqs: &[usize]) -> ShardInput {
        let records = seqs.iter().flat_map(|&s| games(&p, s)).enumerate();
        let records = records.map(|(i, r)| (i + 1, r)).collect();
        ShardInput {
            dir: PathBuf::from(name),
            set: ShardSet::of_plan(&p),
            plan: p,
            records,
            side_plan: None,
            summary: None,
        }
    }

    #[test]
    fn disjoint_shards_of_one_plan_merge() {
        let a = input("a", plan(Some((1, 3)), 9), &[0, 3]);
        let c = input("c", plan(Some((3, 3)), 9), &[2, 5]);
        let set = check_inputs(&[c, a]).unwrap().set;
        assert_eq!(set.describe(), "1/3, 3/3");
        assert_eq!(set.missing(), vec![2]);
        assert!(set.holds(3) && !set.holds(4));
        // The merge hash ignores the shard; the resume hash does not.
        assert_eq!(plan(Some((1, 3)), 9).merge_hash(), plan(None, 9).merge_hash());
        assert_ne!(plan(Some((1, 3)), 9).hash(), plan(None, 9).hash());
    }

    #[test]
    fn refusals_name_the_reason() {
        let err = |v: Vec<ShardInput>| check_inputs(&v).unwrap_err().to_string();
        let a = || input("a", plan(Some((1, 2)), 9), &[0]);
        let e = err(vec![a(), input("b", plan(Some((2, 2)), 8), &[])]);
        assert!(e.contains("b is not a shard of the same run as a") && e.contains("seed"), "{e}");
        let e = err(vec![a(), input("b", plan(Some((2, 3)), 9), &[])]);
        assert!(e.contains("splits the run 3-way"), "{e}");
        let e = err(vec![a(), input("b", plan(Some((1, 2)), 9), &[])]);
        assert_eq!(e, "shard 1/2 is given twice: a and b");
        // A game of shard 2 stored in shard 1's directory.
        let e = err(vec![input("a", plan(Some((1, 2)), 9), &[1])]);
        assert!(e.contains("belongs to shard 2/2, not to 1/2"), "{e}");
        // A game that is not in the plan's schedule.
        let mut bad = a();
        bad.records[0].1.opening += 1;
        let e = err(vec![bad]);
        assert!(e.contains("does not match the plan's schedule"), "{e}");
        assert!(matches!(check_inputs(&[]), Err(MergeError::NoInput)));
    }
}
