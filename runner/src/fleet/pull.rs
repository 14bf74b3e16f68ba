//! `runner pull`: a fleet run's games written as an ordinary results folder, by the same code a
//! local run and `runner merge` write theirs with: run.json (the submitted plan), games.jsonl,
//! games.pgn (schedule order, rewritten by the store, which also checks every game against the
//! plan's schedule), summary.json, the tables and plot of the kind of run (a match's table.md
//! and plot.svg, a gauntlet's tables, a sweep's sweep.json and tables, a tuning run's
//! tune.jsonl and tune.json/csv/md/svg) and report.html. `runner report DIR` and the page read
//! it like any other folder.
//!
//! games.jsonl keeps the records in the order given: schedule order for a match or sweep, the
//! order the pairs were reported for a tuning run (theta is replayed from tune.jsonl and
//! games.jsonl in that order, as `--resume` replays it, so the folder's theta is the fleet's).
//!
//! Every stored record is checked before anything is written: against the plan (the store's
//! check of a run's records) and against the rules of chess (`store::rules`), so a record a
//! worker forged (a draw by repetition turned into a win, an illegal move) fails the pull in one
//! line naming the game and the worker key that stored it, and the folder is not touched. A
//! pulled folder records where it came from (`pull.json`: the run's id and the database); a
//! pull of another run into it is refused.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::decide::DROPPED;
use super::queue::{self, GameOrder, StoredGame};
use super::share::share_record;
use super::submission::{Experiment, Submission};
use crate::gauntlet::files::write_tables;
use crate::plan::run_plan::RunKind;
use crate::report::html::write_report;
use crate::report::match_files;
use crate::report::summary::write_gathered_summary;
use crate::store::dir::{DirMode, RunDir, check_new_out};
use crate::store::formats::{DroppedPairing, FleetOrigin, FleetShare, Origin};
use crate::store::merge::ShardSet;
use crate::store::records_check::{RecordsFile, check_records};
use crate::store::rules::check_rules;
use crate::store::{GAMES_FILE, GameRecord, RUN_FILE, Store, read_run_file, write_atomic};
use crate::sweep::analysis::PointStatus;
use crate::sweep::report::write_gathered_sweep;
use crate::tune::files::write_outputs;
use crate::tune::log::TuneLog;
use crate::tune::run::{TuneState, finished_pairs};
use crate::tune::spsa::{Iteration, Step};

/// The state of a fleet run.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum RunState {
    /// Pairs are still handed out.
    Active,
    /// Stopped by a decision (SPRT, or every sweep point decided or dropped).
    Decided,
    /// Every scheduled pair was played.
    Complete,
    /// Stopped by `runner cancel`.
    Cancelled,
    /// Waits for an approver.
    Pending,
    /// Refused by enough workers.
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The state as the database stores it.
    pub fn parse(s: &str) -> Option<RunState> {
        s.parse().ok()
    }

    /// summary.json's `stopped_by` for a run in this state (a local run's words where there
    /// are some: `complete`, `sprt`).
    pub fn stopped_by(self) -> &'static str {
        match self {
            RunState::Active => "active",
            RunState::Decided => "sprt",
            RunState::Complete => "complete",
            RunState::Cancelled => "cancelled",
            RunState::Pending => "pending",
            RunState::Failed => "failed",
        }
    }
}

/// Where a pulled folder came from (`pull.json`): a later pull must be of the same run of the
/// same database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullOrigin {
    pub run: i64,
    /// `user@host:port/db` (never a password).
    pub database: String,
}

/// The file a pull writes its origin to.
pub const PULL_FILE: &str = "pull.json";

/// A tuning run as the fleet holds it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PulledTune {
    /// Every iteration handed out, with the values logged before its games.
    pub started: Vec<Iteration>,
    /// theta and the applied updates as the fleet computed them (checked against the replay).
    pub theta: Vec<f64>,
    pub history: Vec<Step>,
}

/// How a pulled run stands.
#[derive(Clone, Debug)]
pub struct PulledState {
    pub state: RunState,
    /// Why it stopped, as the fleet says it (`sprt`, `racing`, `cancelled`, ...).
    pub stop_reason: Option<String>,
    /// Sweep points dropped (pairing index, why).
    pub dropped: Vec<(usize, String)>,
    /// Each pairing as the fleet decided it (a sweep's table shows these).
    pub points: Option<Vec<PointStatus>>,
    /// A tuning run's iterations and theta.
    pub tune: Option<PulledTune>,
    /// Its place in the fleet when pulled (owner, priority, share, rate, time left).
    pub share: Option<Box<FleetShare>>,
}

impl PulledState {
    pub fn new(state: RunState) -> PulledState {
        PulledState {
            state,
            stop_reason: None,
            dropped: Vec::new(),
            points: None,
            tune: None,
            share: None,
        }
    }
}

/// Writes the results folder `out` of the submitted run `sub` with its `records` (see the
/// module's doc for their order). `out` must be new, empty, or a folder pulled from the same
/// run before (it is then brought up to date); any other folder is refused, and nothing is
/// written outside `out`. Returns the text to print (the summary or table).
pub fn write_folder(
    out: &Path,
    origin: &PullOrigin,
    sub: &Submission,
    records: Vec<GameRecord>,
    state: PulledState,
) -> Result<String> {
    check_out(out, origin, sub)?;
    // Every record passes the plan's check before the first byte is written.
    let set = ShardSet::of_plan(sub.plan());
    let db_path = Path::new("the database");
    let numbered: Vec<(usize, GameRecord)> =
        records.iter().cloned().enumerate().map(|(i, r)| (i + 1, r)).collect();
    check_records(sub.plan(), vec![RecordsFile { path: db_path, set: &set, records: numbered }])
        .map_err(|e| anyhow!("run {}: stored game {e}", origin.run))?;
    crate::store::files::create_dir_all(out)
        .with_context(|| format!("cannot create results directory {}", out.display()))?;
    // Locked while written: no runner resumes it, and a report waits.
    let _dir = RunDir::open(out, DirMode::Resume)?;
    let plan = sub.plan();
    write_atomic(&out.join(PULL_FILE), serde_json::to_string_pretty(origin)?.as_bytes())?;
    write_atomic(&out.join(RUN_FILE), serde_json::to_string_pretty(&sub.run)?.as_bytes())?;
    let mut jsonl = String::new();
    for r in &records {
        jsonl.push_str(&serde_json::to_string(r)?);
        jsonl.push('\n');
    }
    write_atomic(&out.join(GAMES_FILE), jsonl.as_bytes())?;
    // Reopening the folder as a run checks every game against the plan's schedule and rewrites
    // games.pgn in schedule order.
    drop(Store::resume(out, plan).context("checking the pulled games")?);
    let scheduled = sub.schedule().len() * 2;
    let dropped: Vec<DroppedPairing> = state
        .dropped
        .iter()
        .map(|(p, why)| {
            let label = plan.pairings.get(*p).map(|x| x.label.as_str()).unwrap_or("?");
            DroppedPairing { pairing: *p, label: label.into(), why: why.clone() }
        })
        .collect();
    // An ended run's open points are `ended` with their games, never `active`.
    let ended = crate::sweep::report::has_ended(state.state.stopped_by());
    let points: Option<Vec<PointStatus>> = state.points.as_ref().map(|ps| {
        ps.iter()
            .enumerate()
            .map(|(i, p)| match ended {
                true => p.at_end(records.iter().filter(|r| r.pairing == i).count() as u64),
                false => p.clone(),
            })
            .collect()
    });
    let origin = Origin::Fleet(FleetOrigin {
        state: state.state.as_str().into(),
        stop_reason: state.stop_reason.clone(),
        games: records.len(),
        scheduled_games: scheduled,
        dropped,
        points: points.clone(),
        share: state.share.clone(),
    });
    let stopped_by = state.state.stopped_by();
    let text = match &sub.experiment {
        Experiment::Match { anchor, anchor_elo } => {
            let mut text = write_gathered_summary(out, plan, &records, stopped_by, origin)?;
            if plan.kind == RunKind::Match {
                match_files::write(out, plan, &records)?;
            } else {
                let tables = write_tables(out, plan, &records, *anchor, *anchor_elo)?;
                text.push('\n');
                text.push_str(&tables.markdown());
            }
            text
        }
        Experiment::Sweep { sweep, .. } => write_gathered_sweep(
            out,
            sweep,
            plan,
            &records,
            (stopped_by, stopped_by),
            origin,
            points.as_deref(),
        )?,
        Experiment::Tune { .. } => {
            let tune = state.tune.unwrap_or_default();
            write_gathered_summary(out, plan, &records, stopped_by, origin)?;
            write_tune(out, sub, tune, records, stopped_by)?
        }
    };
    write_report(out)?;
    Ok(text)
}

/// What a pull reads of run `run`: gathered where the database is (the server, or `runner pull
/// --db`), written where the folder is ([`write_bundle`]). Sent as JSON by the server's
/// `GET /api/v1/runs/{id}/pull`; the puller checks every record again before writing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PullBundle {
    pub run: i64,
    /// The run as submitted (run.json's plan and what the workers play).
    pub submission: serde_json::Value,
    /// The run's state word (`active`, `decided`, ...).
    pub state: String,
    pub stop_reason: Option<String>,
    pub pairings: Vec<queue::PairingRow>,
    /// The stored games: schedule order, or the order they were reported for a tuning run.
    pub games: Vec<StoredGame>,
    pub tune: Option<PulledTune>,
    pub share: FleetShare,
}

/// `runner pull`: run `run` of the database written into `out` by [`write_folder`] (games in
/// schedule order, a tuning run's in the order they were reported). Returns the text to print.
pub async fn pull(db: &Client, database: &str, run: i64, out: &Path) -> Result<String> {
    write_bundle(gather(db, run).await?, database, out)
}

/// Everything a pull of run `run` needs, read from the database.
pub async fn gather(db: &Client, run: i64) -> Result<PullBundle> {
    let row = queue::run(db, run).await?.ok_or_else(|| anyhow!("no run {run} in the database"))?;
    let sub = Submission::from_stored(&row.submission).with_context(|| format!("run {run}"))?;
    let tuning = sub.spsa().is_some();
    let order = if tuning { GameOrder::Reported } else { GameOrder::Schedule };
    let games = queue::games(db, run, order).await?;
    let pairings = queue::pairings(db, run).await?;
    let tune = if tuning { Some(pulled_tune(db, run).await?) } else { None };
    let share = pulled_share(db, &row, &sub).await?;
    Ok(PullBundle {
        run,
        submission: row.submission,
        state: row.state,
        stop_reason: row.stop_reason,
        pairings,
        games,
        tune,
        share,
    })
}

/// Writes what [`gather`] read into `out` (see [`write_folder`]); `database` names where it came
/// from (`pull.json`). Returns the text to print.
pub fn write_bundle(b: PullBundle, database: &str, out: &Path) -> Result<String> {
    let run = b.run;
    let sub = Submission::from_stored(&b.submission).with_context(|| format!("run {run}"))?;
    let origin = PullOrigin { run, database: database.to_string() };
    check_out(out, &origin, &sub)?;
    let records = checked_records(run, &sub, b.games)?;
    let state = RunState::parse(&b.state)
        .ok_or_else(|| anyhow!("run {run} is in state {:?}, unknown to this runner", b.state))?;
    let labels: Vec<String> = b.pairings.iter().map(|p| p.label.clone()).collect();
    let points = b.pairings.iter().map(|p| point_status(p, &labels)).collect();
    let dropped = b
        .pairings
        .into_iter()
        .filter(|p| p.verdict.as_deref() == Some(DROPPED))
        .map(|p| (p.pairing.max(0) as usize, p.why.unwrap_or_default()))
        .collect();
    let tune = match (sub.spsa().is_some(), b.tune) {
        (true, None) => bail!("run {run}: a tuning run came without its iterations"),
        (_, t) => t,
    };
    let words = format!("{}\n", b.share.words);
    let pulled = PulledState {
        state,
        stop_reason: b.stop_reason,
        dropped,
        points: Some(points),
        tune,
        share: Some(Box::new(b.share)),
    };
    Ok(write_folder(out, &origin, &sub, records, pulled)? + &words)
}

/// Run `row`'s share of the fleet now, as `runner status` computes it.
async fn pulled_share(db: &Client, row: &queue::RunRow, sub: &Submission) -> Result<FleetShare> {
    let counts = queue::pairing_counts(db, row.id, None).await?;
    let progress = queue::progress(db, row.id).await?;
    let share = queue::share::run_share(db, row.id).await?.unwrap_or_default();
    let active = row.state == "active";
    let shares = if active { queue::share::shares(db).await? } else { Vec::new() };
    let now = shares.iter().find(|s| s.run == row.id);
    let sprt = sub.plan().sprt;
    Ok(share_record(&row.owner, share, now, &counts, sprt.as_ref(), &progress, active))
}

/// A pairing as the fleet decided it: dropped by racing (after the games the database counted,
/// against its best point then), decided by its SPRT, or still active.
fn point_status(p: &queue::PairingRow, labels: &[String]) -> PointStatus {
    let games = p.stop_games.unwrap_or(0).max(0) as u64;
    match p.verdict.as_deref() {
        Some(DROPPED) => PointStatus::Dropped {
            after_games: games,
            best: p
                .stop_best
                .and_then(|b| labels.get(b.max(0) as usize))
                .cloned()
                .unwrap_or_default(),
            z: p.stop_z.unwrap_or(0.0),
        },
        Some(_) => PointStatus::Decided { after_games: games },
        None => PointStatus::Active,
    }
}

/// The stored games as records, each checked against the rules of chess; the first that fails
/// is an error naming the game and the worker key that stored it.
fn checked_records(run: i64, sub: &Submission, stored: Vec<StoredGame>) -> Result<Vec<GameRecord>> {
    let variant = sub.plan().variant;
    let mut out = Vec::with_capacity(stored.len());
    for (i, g) in stored.into_iter().enumerate() {
        let by = g.key_name.as_deref().unwrap_or("(unknown)");
        let r: GameRecord = serde_json::from_value(g.record).with_context(|| {
            format!("run {run}: stored game {} (worker key {by}) is not a game record", i + 1)
        })?;
        if let Err(e) = check_rules(&r, variant) {
            bail!(
                "run {run}: game {}.{} ({} vs {}, {}) stored by worker key {by} breaks the rules of \
                 chess: {e}; nothing was written (`runner purge {run} --worker {by}` plays that \
                 key's pairs again)",
                r.pair + 1,
                r.game + 1,
                r.white,
                r.black,
                r.result.pgn()
            );
        }
        out.push(r);
    }
    Ok(out)
}

/// A tuning run's logged iterations, theta and applied steps as the database holds them.
async fn pulled_tune(db: &Client, run: i64) -> Result<PulledTune> {
    let parse = |what: &str| format!("run {run}: a stored {what} does not parse");
    let started = queue::tune_iterations(db, run)
        .await?
        .into_iter()
        .map(|v| serde_json::from_value(v).with_context(|| parse("iteration")))
        .collect::<Result<Vec<Iteration>>>()?;
    let Some((theta, steps)) = queue::tune_state(db, run).await? else {
        return Ok(PulledTune { started, ..PulledTune::default() });
    };
    let theta: Vec<f64> = serde_json::from_value(theta).with_context(|| parse("theta"))?;
    let history = steps
        .into_iter()
        .map(|v| serde_json::from_value(v).with_context(|| parse("step")))
        .collect::<Result<Vec<Step>>>()?;
    Ok(PulledTune { started, theta, history })
}

/// tune.jsonl (the settings, then every iteration handed out, by k) and the tuning outputs from
/// theta replayed over the games in their order; a replay that differs from the fleet's theta
/// is a warning (the folder keeps the replay, which `--resume` and a report would compute).
fn write_tune(
    out: &Path,
    sub: &Submission,
    tune: PulledTune,
    records: Vec<GameRecord>,
    stopped_by: &str,
) -> Result<String> {
    let Some(spsa) = sub.spsa() else { bail!("not a tuning run") };
    let mut log = TuneLog::create(out, &spsa)?;
    let mut started: BTreeMap<u64, Iteration> = BTreeMap::new();
    for it in tune.started {
        started.insert(it.k, it);
    }
    for it in started.values() {
        log.start(it)?;
    }
    let (finished, _) = finished_pairs(&records);
    let (theta, history) = spsa
        .replay(&started, &finished)
        .map_err(|e| anyhow::anyhow!("cannot replay theta from the pulled games: {e}"))?;
    let close = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
    };
    if !tune.theta.is_empty() && !close(&theta, &tune.theta) {
        errln!(
            "warning: theta replayed from the pulled games ({theta:?}) differs from the fleet's \
             ({:?}); the folder keeps the replay",
            tune.theta
        );
    }
    let state = TuneState { spsa, theta, history, records };
    write_outputs(out, &state, stopped_by)
}

/// `out` may take this pull: new, empty, or an earlier pull of the same run of the same
/// database.
fn check_out(out: &Path, origin: &PullOrigin, sub: &Submission) -> Result<()> {
    let earlier: Option<PullOrigin> =
        crate::store::files::read_regular(&out.join(PULL_FILE), 1 << 16)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_slice(&t).ok());
    match &earlier {
        Some(e) if e != origin => bail!(
            "--out {} holds a pull of run {} of {}, not of run {} of {}: choose a new folder",
            out.display(),
            e.run,
            e.database,
            origin.run,
            origin.database
        ),
        None if read_run_file(out).is_ok() => bail!(
            "--out {} holds a run that was not pulled from the fleet (no {PULL_FILE}): choose a \
             new folder for the pull",
            out.display()
        ),
        _ => {}
    }
    if let Ok(run) = read_run_file(out)
        && run.plan_hash != sub.run.plan_hash
    {
        bail!(
            "--out {} holds another run (plan {}): choose a new folder for the pull",
            out.display(),
            run.plan_hash.get(..12).unwrap_or(&run.plan_hash)
        );
    }
    check_new_out(out, &|d| {
        earlier.is_some() && read_run_file(d).is_ok_and(|r| r.plan_hash == sub.run.plan_hash)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn a_run_states_name_is_the_databases_and_serdes() {
        let names = ["active", "decided", "complete", "cancelled", "pending", "failed"];
        for name in names {
            let state = RunState::parse(name).unwrap();
            assert_eq!(state.as_str(), name);
            assert_eq!(serde_json::to_string(&state).unwrap(), format!("\"{name}\""));
        }
        assert_eq!(RunState::parse("Active"), None);
    }
    use crate::cli::Command;
    use crate::fleet::submission::tests::{fake_engine, match_submission, parse, rt, scratch};
    use crate::fleet::submission::{submission_of_sweep, submission_of_tune};
    use crate::play::game::GameResult;
    use crate::store::read_records;
    use crate::tune::log::as_logged;

    /// Both games of every pair of `sub`'s schedule (or of the pairs in `seqs`), as workers
    /// would report them: the first engine wins game 0 and draws game 1 on even pairs.
    fn games(sub: &Submission, seqs: &[usize]) -> Vec<GameRecord> {
        let plan = sub.plan();
        let jobs = sub.schedule();
        let names: Vec<&str> = plan.engines.iter().map(|e| e.name.as_str()).collect();
        let mut out = Vec::new();
        for &s in seqs {
            let job = jobs[s];
            let p = &plan.pairings[job.pairing];
            for game in 0..2u8 {
                let mut r = crate::store::tests::record(job.pair, game);
                r.seq = job.seq;
                r.pairing = job.pairing;
                r.label = p.label.clone();
                r.opening = job.opening;
                r.fen = sub.openings[job.opening].fen.clone();
                let (w, b) = if game == 0 { (p.first, p.second) } else { (p.second, p.first) };
                (r.white, r.black) = (names[w].into(), names[b].into());
                r.result = match (job.pair % 2, game) {
                    (0, 0) => GameResult::WhiteWins,
                    (0, _) => GameResult::Draw,
                    (_, 0) => GameResult::Draw,
                    _ => GameResult::WhiteWins,
                };
                if r.result == GameResult::Draw {
                    r.termination = crate::play::termination::Termination::Threefold;
                }
                r.plan_hash = Some(plan.merge_hash());
                out.push(r);
            }
        }
        out
    }

    /// Where the tests' pulls come from.
    fn origin() -> PullOrigin {
        PullOrigin { run: 1, database: "u@h:5432/fleet".into() }
    }

    fn read_json(p: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    #[test]
    fn a_pulled_match_is_an_ordinary_results_folder() {
        let d = scratch("pull-match");
        let engine = fake_engine(&d);
        let sub = match_submission(&engine, &["--games", "8", "--seed", "3"]).unwrap();
        let records = games(&sub, &[0, 1, 2, 3]);
        let out = d.join("pulled");
        let text = write_folder(
            &out,
            &origin(),
            &sub,
            records.clone(),
            PulledState::new(RunState::Complete),
        )
        .unwrap();
        assert!(text.contains("A vs B: 8 games"), "{text}");
        assert_eq!(read_records(&out, sub.plan()).unwrap(), records);
        let run = read_run_file(&out).unwrap();
        assert_eq!(
            (run.plan_hash.as_str(), run.created.as_str()),
            (sub.run.plan_hash.as_str(), sub.run.created.as_str())
        );
        let summary = read_json(&out.join("summary.json"));
        assert_eq!(summary["stopped_by"], "complete");
        assert_eq!(summary["pairings"][0]["games"], 8);
        assert_eq!(summary["fleet"]["scheduled_games"], 8);
        for f in ["games.pgn", "table.md", "table.csv", "plot.svg", "report.html"] {
            assert!(out.join(f).is_file(), "{f}");
        }
        let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
        assert_eq!(pgn.matches("[Event ").count(), 8);
        // The page reads it as a finished match, every file readable.
        let files = crate::report::html::input::read(&out);
        assert_eq!(files.kind, crate::report::html::input::Kind::Match);
        assert!(files.notes.is_empty() && files.skipped.is_empty(), "{:?}", files.notes);
        assert!(matches!(
            crate::report::html::input::liveness(&files),
            crate::report::html::input::Liveness::Ended(s) if s == "complete"
        ));
        // `runner report`'s match path over the folder.
        crate::report::match_files::write(&out, &run.plan, &read_records(&out, &run.plan).unwrap())
            .unwrap();
        // Pulled again later (more games): brought up to date.
        let more = games(&sub, &[0, 1, 2, 3]);
        write_folder(&out, &origin(), &sub, more, PulledState::new(RunState::Complete)).unwrap();
        // Another run's folder, and a folder of the user's, are refused.
        let other = match_submission(&engine, &["--games", "8", "--seed", "4"]).unwrap();
        let e = write_folder(&out, &origin(), &other, vec![], PulledState::new(RunState::Active))
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds another run") && !e.contains('\n'), "{e}");
        // A pull of another run of the database (or of another database) into it is refused.
        let two = PullOrigin { run: 2, ..origin() };
        let e = write_folder(&out, &two, &sub, vec![], PulledState::new(RunState::Active))
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds a pull of run 1 of u@h:5432/fleet, not of run 2"), "{e}");
        assert_eq!(read_records(&out, sub.plan()).unwrap().len(), 8, "nothing replaced");
        let mine = d.join("mine");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(mine.join("notes.txt"), "x").unwrap();
        let e = write_folder(&mine, &origin(), &sub, vec![], PulledState::new(RunState::Active))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not empty and holds no run"), "{e}");
        assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 1, "nothing written there");
        // A game that is not in the plan's schedule is refused.
        let mut bad = games(&sub, &[0]);
        bad[0].opening += 1;
        let e =
            write_folder(&d.join("bad"), &origin(), &sub, bad, PulledState::new(RunState::Active))
                .unwrap_err();
        assert!(format!("{e:#}").contains("does not match the plan's schedule"), "{e:#}");
        assert!(!d.join("bad").exists(), "a pull that fails its checks writes nothing");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_pulled_gauntlet_and_a_decided_sweep_keep_their_tables() {
        let d = scratch("pull-sweep");
        let engine = fake_engine(&d);
        let (a, b, c) = (
            format!("cmd={engine},name=A"),
            format!("cmd={engine},name=B"),
            format!("cmd={engine},name=C"),
        );
        let args = ["match", "--engine", &a, "--engine", &b, "--engine", &c, "--depth", "1"];
        let Command::Match(m) = parse(&[&args[..], &["--games", "4"]].concat()) else {
            unreachable!()
        };
        let sub = rt().block_on(crate::fleet::submission::submission_of_match(&m)).unwrap();
        assert_eq!(sub.plan().kind, RunKind::Gauntlet);
        let n = sub.schedule().len();
        let out = d.join("gauntlet");
        let text = write_folder(
            &out,
            &origin(),
            &sub,
            games(&sub, &(0..n).collect::<Vec<_>>()),
            PulledState::new(RunState::Complete),
        )
        .unwrap();
        assert!(text.contains("A vs B"), "{text}");
        assert!(out.join("ratings.csv").is_file());

        let spec = format!("cmd={engine},name=E");
        let args =
            ["sweep", "--engine", &spec, "--param", "X", "--values", "1,2,3", "--depth", "1"];
        let Command::Sweep(s) = parse(&[&args[..], &["--games", "4", "--adaptive"]].concat())
        else {
            unreachable!()
        };
        let sub = rt().block_on(submission_of_sweep(&s)).unwrap();
        let n = sub.schedule().len();
        assert_eq!(n, 6);
        let out = d.join("sweep");
        let state = PulledState {
            state: RunState::Decided,
            stop_reason: Some("racing".into()),
            dropped: vec![(2, "dropped: worse than X=1".into())],
            points: Some(vec![
                PointStatus::Active,
                PointStatus::Active,
                PointStatus::Dropped { after_games: 2, best: "X=1".into(), z: 3.5 },
            ]),
            tune: None,
            share: None,
        };
        let records = games(&sub, &[0, 1, 2, 3, 4]);
        write_folder(&out, &origin(), &sub, records.clone(), state).unwrap();
        // The table tells the fleet's story (its decision, not a replay in schedule order).
        let table = std::fs::read_to_string(out.join("table.md")).unwrap();
        assert!(table.contains("dropped@2 (vs X=1)"), "{table}");
        let summary = read_json(&out.join("summary.json"));
        assert_eq!(
            (summary["kind"].as_str(), summary["stopped_by"].as_str()),
            (Some("sweep"), Some("sprt"))
        );
        assert_eq!(summary["fleet"]["dropped"][0]["label"], "X=3");
        assert_eq!(summary["fleet"]["stop_reason"], "racing");
        assert_eq!(summary["fleet"]["points"][2]["state"], "dropped");
        // The run has ended: its open points are not `active`, here or in the table's rows.
        assert_eq!(summary["fleet"]["points"][0]["state"], "ended");
        assert_eq!(summary["fleet"]["points"][0]["after_games"], 4);
        assert_eq!(summary["points"][1]["status"]["state"], "ended");
        assert_eq!(summary["points"].as_array().unwrap().len(), 3);
        // `runner report`'s sweep path over the folder.
        let sweep = crate::sweep::plan::SweepPlan::load(&out).unwrap().unwrap();
        assert_eq!(Some(&sweep), sub.sweep());
        let plan = read_run_file(&out).unwrap().plan;
        crate::sweep::report::write_sweep_stopped_by(
            &out,
            &sweep,
            &plan,
            &read_records(&out, &plan).unwrap(),
            "sprt",
            None,
        )
        .unwrap();
        assert_eq!(
            crate::report::html::input::read(&out).kind,
            crate::report::html::input::Kind::Sweep
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_pulled_tuning_run_replays_to_the_fleets_theta() {
        let d = scratch("pull-tune");
        let engine = fake_engine(&d);
        let spec = format!("cmd={engine},name=E");
        let args = ["tune", "--engine", &spec, "--param", "T,0.5,0,1,0.1,2", "--games", "8"];
        let Command::Tune(t) = parse(&[&args[..], &["--depth", "1", "--seed", "9"]].concat())
        else {
            unreachable!()
        };
        let sub = rt().block_on(submission_of_tune(&t)).unwrap();
        let spsa = sub.spsa().unwrap();
        // The fleet hands out two iterations at a time from the same theta, and their pairs
        // come back in the other order.
        let mut theta = spsa.start_theta();
        let (mut started, mut records, mut history) = (Vec::new(), Vec::new(), Vec::new());
        for batch in [[0u64, 1], [2, 3]] {
            let its: Vec<Iteration> =
                batch.iter().map(|&k| as_logged(&spsa.begin(k, &theta)).unwrap()).collect();
            for it in its.iter().rev() {
                let pair = games(&sub, &[it.k as usize]);
                let result = pair
                    .iter()
                    .map(|r| match r.first_score() {
                        stats::GameScore::Win => 1.0,
                        stats::GameScore::Draw => 0.0,
                        stats::GameScore::Loss => -1.0,
                    })
                    .sum::<f64>();
                records.extend(pair);
                spsa.update(&mut theta, it, result);
                history.push(Step {
                    k: it.k,
                    games: records.len() as u64,
                    theta: theta.clone(),
                    c_k: it.c_k.clone(),
                    a_k: it.a_k.clone(),
                    result,
                });
            }
            started.extend(its);
        }
        assert_ne!(theta, spsa.start_theta());
        let out = d.join("tune");
        let state = PulledState {
            tune: Some(PulledTune { started, theta: theta.clone(), history: history.clone() }),
            ..PulledState::new(RunState::Complete)
        };
        write_folder(&out, &origin(), &sub, records.clone(), state).unwrap();
        let tj = read_json(&out.join("tune.json"));
        assert_eq!(tj["values"]["T"].as_f64().unwrap(), theta[0]);
        assert_eq!(tj["iterations"], 4);
        for f in ["tune.jsonl", "tune.csv", "tune.md", "tune.svg", "summary.json", "report.html"] {
            assert!(out.join(f).is_file(), "{f}");
        }
        // A local `--resume` replays the same theta from the folder's two files.
        let logged = crate::tune::log::read(&out).unwrap();
        assert_eq!(logged.spsa, spsa);
        let (finished, _) = finished_pairs(&read_records(&out, sub.plan()).unwrap());
        let (replayed, steps) = spsa.replay(&logged.started, &finished).unwrap();
        assert_eq!((replayed, steps), (theta, history));
        let _ = std::fs::remove_dir_all(&d);
    }
}
