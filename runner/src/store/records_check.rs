//! The one check of a run's game records against its plan, used wherever records are read to be
//! counted or continued: `--resume` ([`super::Store::resume`]), `runner merge`
//! ([`super::merge`]) and `runner report`. Each record must carry the run's plan hash, sit at a
//! place of the plan's schedule (in the shards the folder holds), name the players the schedule
//! seats there, and give a result its termination allows. Two different records of one game are
//! an error naming both lines; an exact copy is kept once, with a warning.

use std::collections::BTreeMap;
use std::path::Path;

use super::GameRecord;
use super::merge::{ShardSet, schedule_of};
use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::{GameKey, Job};
use crate::play::game::GameResult;
use crate::play::termination::Termination;

/// The records of one games.jsonl, with their line numbers, and the shards its folder holds.
pub struct RecordsFile<'a> {
    pub path: &'a Path,
    pub set: &'a ShardSet,
    pub records: Vec<(usize, GameRecord)>,
}

/// What passed the check: each file's records (exact copies kept once, file order kept) and a
/// warning per copy dropped.
#[derive(Debug, Default)]
pub struct CheckedRecords {
    pub files: Vec<Vec<GameRecord>>,
    pub warnings: Vec<String>,
}

impl CheckedRecords {
    /// All records, file after file.
    pub fn into_records(self) -> Vec<GameRecord> {
        self.files.into_iter().flatten().collect()
    }
}

/// Checks the records of `files` (one run's folders) against `plan`; the first record that does
/// not belong is an error naming its file and line.
pub fn check_records(plan: &RunPlan, files: Vec<RecordsFile>) -> Result<CheckedRecords, String> {
    let (hash, jobs) = (plan.merge_hash(), schedule_of(plan));
    let mut first: BTreeMap<GameKey, (&Path, usize, GameRecord)> = BTreeMap::new();
    let mut out = CheckedRecords::default();
    for f in &files {
        let mut kept = Vec::with_capacity(f.records.len());
        for (line, r) in &f.records {
            let at = format!("{} line {line}", f.path.display());
            check_record(r, plan, &hash, &jobs, f.set).map_err(|e| format!("{at}: {e}"))?;
            match first.get(&r.key()) {
                Some((p, l, prev)) if prev == r => out.warnings.push(format!(
                    "{at} repeats {} line {l} ({}): kept once",
                    p.display(),
                    describe_game(r)
                )),
                Some((p, l, prev)) => {
                    return Err(format!(
                        "{} is recorded twice, differently: {} line {l} ({}) and {at} ({})",
                        describe_game(r),
                        p.display(),
                        outcome(prev),
                        outcome(r)
                    ));
                }
                None => {
                    first.insert(r.key(), (f.path, *line, r.clone()));
                    kept.push(r.clone());
                }
            }
        }
        out.files.push(kept);
    }
    Ok(out)
}

/// `game 1.2 of pairing "A vs B" (schedule #0)`.
pub fn describe_game(r: &GameRecord) -> String {
    format!(
        "game {}.{} of pairing {:?} (schedule #{})",
        r.pair.saturating_add(1),
        u16::from(r.game) + 1,
        r.label,
        r.seq
    )
}

/// `1-0 by checkmate`.
fn outcome(r: &GameRecord) -> String {
    format!("{} by {}", r.result.pgn(), r.termination.json_str())
}

/// Why a record does not belong to the run of `plan` (whose [`RunPlan::merge_hash`] is
/// `plan_hash` and unsharded schedule `jobs`), in the shards `set`.
pub fn check_record(
    r: &GameRecord,
    plan: &RunPlan,
    plan_hash: &str,
    jobs: &[Job],
    set: &ShardSet,
) -> Result<(), String> {
    let game = describe_game(r);
    match r.plan_hash.as_deref() {
        None => {
            return Err(format!(
                "{game} has no plan hash (written by an older runner), so it cannot be checked \
                 against this run: finish that run with the runner that started it, or start a \
                 new run"
            ));
        }
        Some(h) if h != plan_hash => {
            let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
            return Err(format!(
                "{game} is a game of another run (plan {}, this run's {})",
                short(h),
                short(plan_hash)
            ));
        }
        Some(_) => {}
    }
    let Some(job) = jobs.get(r.seq) else {
        return Err(format!("{game} is beyond the plan's {} game pairs", jobs.len()));
    };
    if r.game > 1
        || (job.pairing, job.pair, job.opening_of(r.game)) != (r.pairing, r.pair, r.opening)
    {
        return Err(format!("{game} does not match the plan's schedule"));
    }
    if !set.holds(r.seq) {
        return Err(format!(
            "{game} belongs to shard {}/{}, not to {}",
            r.seq % set.count + 1,
            set.count,
            set.describe()
        ));
    }
    check_players(r, plan).map_err(|e| format!("{game}: {e}"))?;
    check_result(r.result, r.termination).map_err(|e| format!("{game}: {e}"))
}

/// The players the schedule seats: game 0 has the pairing's first engine as White (game 1 as
/// Black), unless `--noswap`/`--reverse` say otherwise.
fn check_players(r: &GameRecord, plan: &RunPlan) -> Result<(), String> {
    let Some(p) = plan.pairings.get(r.pairing) else {
        return Err("its pairing is not in the plan".into());
    };
    if r.label != p.label {
        return Err(format!("its pairing is labelled {:?}, the plan's {:?}", r.label, p.label));
    }
    let name = |i: usize| plan.engines.get(i).map(|e| e.name.as_str());
    let first_white = plan.scheduling.first_is_white(r.game);
    if r.first_is_white() != first_white {
        return Err("its colours are not the ones the plan's schedule gives".into());
    }
    let (white, black) = if first_white { (p.first, p.second) } else { (p.second, p.first) };
    for (colour, recorded, engine) in [("White", &r.white, white), ("Black", &r.black, black)] {
        match name(engine) {
            Some(n) if n == recorded => {}
            Some(n) => {
                return Err(format!("{colour} is {recorded:?}, but the plan seats {n:?} there"));
            }
            None => return Err(format!("the plan has no engine #{engine}")),
        }
    }
    Ok(())
}

/// Whether `result` is one that `termination` can give. A loss on time is a draw when the
/// opponent has no mating material left, so it may be either; the tables give any result.
pub fn check_result(result: GameResult, termination: Termination) -> Result<(), String> {
    use Termination::*;
    let draw = result == GameResult::Draw;
    let ok = match termination {
        Stalemate | Threefold | FiftyMove | InsufficientMaterial | AdjudicationDraw | MaxMoves => {
            draw
        }
        Checkmate | AdjudicationResign | IllegalMove | Crash | Stall | Disconnect
        | GarbageOutput => !draw,
        TimeForfeit | AdjudicationTablebase => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "result {} contradicts its termination {} ({})",
            result.pgn(),
            termination.json_str(),
            if draw { "a decisive ending" } else { "a drawn ending" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{plan, record};

    fn one(records: Vec<(usize, GameRecord)>) -> Result<CheckedRecords, String> {
        let p = plan();
        let set = ShardSet::of_plan(&p);
        check_records(&p, vec![RecordsFile { path: Path::new("g.jsonl"), set: &set, records }])
    }

    #[test]
    fn own_records_pass() {
        let c = one(vec![(1, record(0, 0)), (2, record(0, 1)), (3, record(1, 0))]).unwrap();
        assert_eq!(c.files[0].len(), 3);
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn an_exact_copy_is_kept_once_with_a_warning() {
        let c = one(vec![(1, record(0, 0)), (2, record(0, 1)), (5, record(0, 0))]).unwrap();
        assert_eq!(c.files[0].len(), 2);
        assert_eq!(c.warnings.len(), 1);
        let w = &c.warnings[0];
        assert!(w.contains("g.jsonl line 5 repeats g.jsonl line 1") && w.contains("1.1"), "{w}");
    }

    #[test]
    fn two_different_records_of_one_game_are_an_error_naming_both() {
        let mut other = record(0, 0);
        other.termination = Termination::Crash;
        let e = one(vec![(1, record(0, 0)), (2, record(0, 1)), (3, other)]).unwrap_err();
        assert!(e.contains("game 1.1") && e.contains("recorded twice"), "{e}");
        assert!(e.contains("g.jsonl line 1 (1-0 by checkmate)"), "{e}");
        assert!(e.contains("g.jsonl line 3 (1-0 by crash)"), "{e}");
    }

    #[test]
    fn foreign_hash_wrong_names_and_impossible_results_are_refused() {
        let err = |r: GameRecord| one(vec![(7, r)]).unwrap_err();
        let mut r = record(0, 0);
        r.plan_hash = Some("0123456789abcdef".into());
        let e = err(r);
        assert!(e.starts_with("g.jsonl line 7: game 1.1") && e.contains("another run"), "{e}");
        let mut r = record(0, 0);
        r.black = "C".into();
        let e = err(r);
        assert!(e.contains("Black is \"C\", but the plan seats \"B\" there"), "{e}");
        // Game 1 seats the first engine as Black.
        let mut r = record(0, 1);
        (r.white, r.black) = ("A".into(), "B".into());
        r.result = GameResult::BlackWins;
        assert!(err(r).contains("White is \"A\""));
        let mut r = record(0, 0);
        r.result = GameResult::Draw;
        let e = err(r);
        assert!(e.contains("result 1/2-1/2 contradicts its termination checkmate"), "{e}");
        let mut r = record(0, 0);
        r.termination = Termination::Stalemate;
        assert!(err(r).contains("termination stalemate"));
        let mut r = record(0, 0);
        r.label = "X vs Y".into();
        assert!(err(r).contains("labelled \"X vs Y\""));
    }

    #[test]
    fn results_allowed_by_each_termination() {
        use GameResult::*;
        for t in Termination::ALL {
            let (draw, win) = (check_result(Draw, t).is_ok(), check_result(WhiteWins, t).is_ok());
            assert_eq!(check_result(BlackWins, t).is_ok(), win, "{t:?}");
            assert!(draw || win, "{t:?} allows no result");
            let either = [Termination::TimeForfeit, Termination::AdjudicationTablebase];
            assert_eq!(draw && win, either.contains(&t), "{t:?}");
        }
    }
}
