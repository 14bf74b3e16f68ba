//! What `runner submit` stores for a run (one JSON document): the run.json content (the plan
//! and its hash), the openings (so workers need no book file), the engines' identities, the game
//! settings a worker needs beyond the plan, and what the kind of run adds (a sweep's plan and
//! racing, a tuning run's parameters and A). Workers and `runner pull` read it back.
//!
//! It is built by the same code as a local `runner match|sweep|tune` (the plan builders of
//! `run::args`, `sweep::args`, `tune::args`) and checked the same way before any game: the
//! engines start and declare the options (a sweep's swept ones, a tuning run's tuned ones with
//! their types), the book parses, bad values are refused. No results folder is made.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_postgres::Client;

use super::artifacts::DbDoor;
use super::decide::judge_config;
use super::identity::{EngineIdentity, identify_all};
use super::queue::share::Share;
use super::queue::{self, NewRun};
use super::rights::Principal;
use super::source::submit::PreparedSource;
use crate::cli::{ExecArgs, MatchArgs, SweepArgs, TuneArgs};
use crate::gauntlet::files::anchor_index;
use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::{Job, build_schedule};
use crate::play::game::GameSettings;
use crate::play::uci::StartOptions;
use crate::run::{RunOptions, check_plan_engines, start_options_without_logs};
use crate::store::RunFile;
use crate::sweep::args::sweep_run_plan;
use crate::sweep::plan::SweepPlan;
use crate::sweep::racing::RaceConfig;
use crate::tune::args::{TunePlan, tune_plan};
use crate::tune::params::TuneParam;
use crate::tune::spsa::Spsa;

/// The version of this document's layout.
pub const SUBMISSION_FORMAT: u32 = 1;

/// The game settings a worker takes from the submission (not from its own flags).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerSettings {
    /// `--stall-timeout`: longest wait for `readyok`, and for `bestmove` under node or depth
    /// limits (seconds).
    pub stall_timeout_s: f64,
    /// `--start-timeout`: longest wait for `uciok` (seconds).
    pub start_timeout_s: f64,
    /// `--fault-limit`: games in a row one engine may lose by its own fault (0: never stop).
    pub fault_limit: u32,
}

/// What the kind of run adds to the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Experiment {
    /// `runner match`: a match, gauntlet or round-robin (the plan's `kind` says which), with the
    /// ratings anchor of its tables.
    Match { anchor: usize, anchor_elo: f64 },
    /// `runner sweep`: the sweep plan (its `race` is `--adaptive`'s racing) and the options an
    /// engine must declare (the swept ones).
    Sweep { sweep: Box<SweepPlan>, required_options: Vec<String> },
    /// `runner tune`: the parameters, fishtest's A, and per parameter whether the engine
    /// declares it as an integer (`type spin`), read when the engine was checked.
    Tune { params: Vec<TuneParam>, big_a: f64, integer: Vec<bool> },
}

impl Experiment {
    /// `match`, `sweep` or `tune` (the command that was submitted).
    pub fn kind(&self) -> &'static str {
        match self {
            Experiment::Match { .. } => "match",
            Experiment::Sweep { .. } => "sweep",
            Experiment::Tune { .. } => "tune",
        }
    }

    /// A sweep's plan.
    pub fn sweep(&self) -> Option<&SweepPlan> {
        match self {
            Experiment::Sweep { sweep, .. } => Some(sweep),
            _ => None,
        }
    }
}

/// One submitted run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Submission {
    pub format: u32,
    /// run.json's content: the plan (never sharded) and its hash.
    pub run: RunFile,
    /// The book's openings, in book order (the plan's schedule indexes them).
    pub openings: Vec<Opening>,
    /// One per engine of the plan, in the plan's order.
    pub engines: Vec<EngineIdentity>,
    pub settings: WorkerSettings,
    pub experiment: Experiment,
}

impl Submission {
    fn new(
        plan: RunPlan,
        openings: Vec<Opening>,
        settings: WorkerSettings,
        experiment: Experiment,
        sources: &[PreparedSource],
    ) -> Result<Submission> {
        if plan.shard.is_some() {
            bail!("runner submit does not take --shard: the fleet's workers share the pairs");
        }
        // An engine from source is identified by its source (its sha256 the archive's); the
        // others by their binary.
        // A sweep's points (`dev[X=1]`) and a tuning run's sides (`dev+`) are the engine `dev`.
        let source_of = |name: &str| {
            let names = super::identity::base_names(name);
            sources.iter().find(|p| names.contains(&p.name.as_str()))
        };
        let binaries: Vec<_> =
            plan.engines.iter().filter(|s| source_of(&s.name).is_none()).cloned().collect();
        let mut identified = identify_all(&binaries)?.into_iter();
        let engines = plan
            .engines
            .iter()
            .map(|s| match source_of(&s.name) {
                Some(p) => Ok(EngineIdentity {
                    name: s.name.clone(),
                    cmd: p.identity.bin.clone(),
                    sha256: p.identity.archive_sha.clone(),
                    bench: None,
                    source: Some(p.identity.clone()),
                }),
                None => identified.next().ok_or_else(|| anyhow!("engine {}: no identity", s.name)),
            })
            .collect::<Result<Vec<_>>>()?;
        let run = RunFile::new(plan);
        let format = super::tablebase::format_for(&run.plan, SUBMISSION_FORMAT);
        Ok(Submission { format, run, openings, engines, settings, experiment })
    }

    pub fn plan(&self) -> &RunPlan {
        &self.run.plan
    }

    /// `match`, `sweep` or `tune` (the command that was submitted).
    pub fn kind(&self) -> &'static str {
        self.experiment.kind()
    }

    /// The game pairs in schedule order, exactly as a local run of the same plan schedules them
    /// (a job's `seq` is its position).
    pub fn schedule(&self) -> Vec<Job> {
        let p = self.plan();
        build_schedule(
            p.pairings.len(),
            p.pairs,
            self.openings.len(),
            p.book_order,
            p.seed,
            &p.scheduling,
        )
    }

    /// How every game is played (clock, margin, adjudication, stall timeout, variant).
    pub fn game_settings(&self) -> GameSettings {
        GameSettings::of_plan(self.plan(), secs(self.settings.stall_timeout_s))
    }

    /// How a worker starts the engines (`log_dir` and `instance` are the worker's).
    pub fn start_options(&self) -> StartOptions {
        start_options_without_logs(self.plan(), secs(self.settings.start_timeout_s))
    }

    /// A sweep's plan.
    pub fn sweep(&self) -> Option<&SweepPlan> {
        self.experiment.sweep()
    }

    /// A sweep's racing settings (`--adaptive`).
    pub fn race(&self) -> Option<RaceConfig> {
        self.sweep().and_then(|s| s.race)
    }

    /// A tuning run's SPSA settings, as tune.jsonl's first line holds them.
    pub fn spsa(&self) -> Option<Spsa> {
        match &self.experiment {
            Experiment::Tune { params, big_a, integer } => Some(Spsa {
                params: params.clone(),
                integer: integer.clone(),
                iterations: self.plan().pairs as u64,
                big_a: *big_a,
                seed: self.plan().seed,
            }),
            _ => None,
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::from_secs(60))
}

/// Refuses the flags that belong to a local run's folder or split, and checks the others as a
/// local run does; returns the worker settings.
fn worker_settings(x: &ExecArgs) -> Result<WorkerSettings> {
    if x.out.is_some() {
        bail!(
            "runner submit does not take --out: the games stay in the database (`runner pull \
             --db URL RUN --out DIR` writes a results folder)"
        );
    }
    if x.resume {
        bail!("runner submit does not take --resume: a submitted run goes on until it is decided");
    }
    if x.shard.is_some() {
        bail!("runner submit does not take --shard: the fleet's workers share the pairs");
    }
    if x.affinity.is_some() {
        bail!("runner submit does not take --affinity: the fleet's workers do not pin engines");
    }
    if x.pgnout.is_some() || x.epdout.is_some() || x.output != "runner" {
        bail!(
            "runner submit does not take --pgnout, --epdout or --output: workers write no files \
             and print no lines of a run (`runner pull` writes its games.pgn)"
        );
    }
    let opts = RunOptions::from_exec(x, PathBuf::new())?;
    Ok(WorkerSettings {
        stall_timeout_s: opts.stall_timeout.as_secs_f64(),
        start_timeout_s: opts.handshake_timeout.as_secs_f64(),
        fault_limit: opts.fault_limit,
    })
}

/// No results folder: the plan builders get an empty path (used only by `--resume`, refused).
fn no_folder() -> Result<PathBuf> {
    Ok(PathBuf::new())
}

/// The submission of `runner submit match ARGS`.
pub async fn submission_of_match(args: &MatchArgs) -> Result<Submission> {
    submission_of_match_with(args, &[]).await
}

/// The submission of `runner submit match ARGS` whose engines from source are `sources`
/// (`source::submit::prepare_sources` rewrote their specs). An engine not built here
/// (`bench=N`) is not started before submission.
pub async fn submission_of_match_with(
    args: &MatchArgs,
    sources: &[PreparedSource],
) -> Result<Submission> {
    let settings = worker_settings(&args.run.exec)?;
    let (plan, openings, _) = crate::run::args::match_run_plan(args, no_folder)?;
    let anchor = anchor_index(&plan, args.tournament.anchor.as_deref())?;
    let mut checked = plan.clone();
    checked.engines.retain(|e| !sources.iter().any(|p| p.name == e.name && !p.built));
    let allow = args.run.exec.allow_unknown_options;
    check_plan_engines(&checked, secs(settings.start_timeout_s), &[], allow).await?;
    let experiment = Experiment::Match { anchor, anchor_elo: args.tournament.anchor_elo };
    Submission::new(plan, openings, settings, experiment, sources)
}

/// Refuses an engine from source not built here where the engine must be checked (a sweep's
/// swept options, a tuning run's tuned ones).
fn all_built(sources: &[PreparedSource]) -> Result<()> {
    match sources.iter().find(|p| !p.built) {
        Some(p) => bail!(
            "engine {}: a sweep or tuning run checks the engine's options before it is submitted, \
             so it is built here: leave out bench=",
            p.name
        ),
        None => Ok(()),
    }
}

/// The submission of `runner submit sweep ARGS`.
pub async fn submission_of_sweep(args: &SweepArgs) -> Result<Submission> {
    submission_of_sweep_with(args, &[]).await
}

/// `runner submit sweep ARGS` with engines from source (see [`submission_of_match_with`]).
pub async fn submission_of_sweep_with(
    args: &SweepArgs,
    sources: &[PreparedSource],
) -> Result<Submission> {
    all_built(sources)?;
    let settings = worker_settings(&args.run.exec)?;
    let (sweep, plan, openings, _) = sweep_run_plan(args, no_folder)?;
    let required_options = sweep.param_names();
    let allow = args.run.exec.allow_unknown_options;
    check_plan_engines(&plan, secs(settings.start_timeout_s), &required_options, allow).await?;
    let sweep = Box::new(sweep);
    let experiment = Experiment::Sweep { sweep, required_options };
    Submission::new(plan, openings, settings, experiment, sources)
}

/// The submission of `runner submit tune ARGS`.
pub async fn submission_of_tune(args: &TuneArgs) -> Result<Submission> {
    submission_of_tune_with(args, &[]).await
}

/// `runner submit tune ARGS` with engines from source (see [`submission_of_match_with`]).
pub async fn submission_of_tune_with(
    args: &TuneArgs,
    sources: &[PreparedSource],
) -> Result<Submission> {
    all_built(sources)?;
    let settings = worker_settings(&args.run.exec)?;
    let TunePlan { plan, openings, params, big_a, .. } = tune_plan(args, no_folder)?;
    let start = start_options_without_logs(&plan, secs(settings.start_timeout_s));
    let (engine, integer) = crate::tune::run::check_engine(
        &plan.engines[0],
        &params,
        &start,
        args.run.exec.allow_unknown_options,
    )
    .await?;
    engine.shutdown().await;
    let experiment = Experiment::Tune { params, big_a, integer };
    Submission::new(plan, openings, settings, experiment, sources)
}

/// Distinct workers that must refuse a run (an engine that cannot start, a binary of another
/// hash, the fault limit reached) before it fails.
pub const REFUSAL_LIMIT: i32 = 3;

/// What the database stores of a submission besides the document itself: its schedule of
/// game pairs, what decides it, a tuning run's starting theta and random draws. Computed from
/// the submission alone, by `runner submit --db` and by the server (which trusts no schedule a
/// client sends).
pub struct RunParts {
    pub submission: Value,
    pub judge: Value,
    pub labels: Vec<String>,
    pub engines: Vec<(String, String)>,
    pub jobs: Vec<(i32, i32, i32)>,
    pub theta: Option<Value>,
    pub draws: Vec<Value>,
}

impl RunParts {
    /// The parts of `sub`; a plan the fleet cannot play (`--repeat 1`) is refused.
    pub fn of(sub: &Submission) -> Result<RunParts> {
        let plan = sub.plan();
        if plan.scheduling.repeat == 1 {
            bail!(
                "--repeat 1 is not supported by the fleet (its pairs hold one opening each): run \
                 it locally, or use --repeat 2"
            );
        }
        let labels: Vec<String> = plan.pairings.iter().map(|p| p.label.clone()).collect();
        let name = |i: usize| plan.engines.get(i).map(|e| e.name.clone()).unwrap_or_default();
        let engines = plan.pairings.iter().map(|p| (name(p.first), name(p.second))).collect();
        let int =
            |x: usize| i32::try_from(x).map_err(|_| anyhow!("{x} is beyond the queue's range"));
        let jobs: Vec<(i32, i32, i32)> = sub
            .schedule()
            .iter()
            .map(|j| Ok((int(j.pairing)?, int(j.pair)?, int(j.opening)?)))
            .collect::<Result<_>>()?;
        let spsa = sub.spsa();
        let theta = spsa.as_ref().map(|s| serde_json::to_value(s.start_theta())).transpose()?;
        let draws: Vec<Value> = match &spsa {
            Some(s) => jobs
                .iter()
                .map(|j| serde_json::to_value(s.draws(j.1 as u64)))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let judge =
            judge_config(plan.sprt.as_ref(), sub.race().as_ref(), labels.len(), spsa.as_ref());
        Ok(RunParts {
            submission: serde_json::to_value(sub)?,
            judge,
            labels,
            engines,
            jobs,
            theta,
            draws,
        })
    }

    /// The run to insert.
    pub fn new_run<'a>(&'a self, sub: &'a Submission) -> NewRun<'a> {
        NewRun {
            kind: sub.kind(),
            submission: &self.submission,
            plan_hash: &sub.run.plan_hash,
            judge: &self.judge,
            labels: &self.labels,
            engines: &self.engines,
            jobs: &self.jobs,
            theta: self.theta.as_ref(),
            draws: &self.draws,
            refusal_limit: REFUSAL_LIMIT,
        }
    }
}

/// The artifacts a run of `sub` may name: its engines' binaries, and its source archives.
pub fn artifacts_of(sub: &Submission) -> Vec<String> {
    let mut shas: Vec<String> = Vec::new();
    for e in &sub.engines {
        let sha = match &e.source {
            Some(src) => &src.archive_sha,
            None => &e.sha256,
        };
        if !shas.contains(sha) {
            shas.push(sha.clone());
        }
    }
    shas
}

/// Uploads the engines' binaries and source archives (`sources`) the fleet lacks, through
/// `door` (the database, or the server); returns the hashes the run names.
pub async fn upload_all(
    door: &impl super::artifacts::ArtifactDoor,
    sub: &Submission,
    sources: &[PreparedSource],
) -> Result<Vec<String>> {
    let binaries: Vec<EngineIdentity> =
        sub.engines.iter().filter(|e| e.source.is_none()).cloned().collect();
    let mut shas = super::artifacts::upload_engines(door, &binaries).await?;
    for p in sources {
        let sha = &p.identity.archive_sha;
        if !shas.contains(sha) {
            super::artifacts::upload_file(door, &p.archive, sha, "source")
                .await
                .with_context(|| format!("engine {}: its source archive", p.name))?;
            shas.push(sha.clone());
        }
    }
    Ok(shas)
}

/// Stores `sub` as `who`'s with its schedule of game pairs (and a tuning run's starting theta
/// and random draws), with what the server decides it by, straight into the database (the
/// operator's `runner submit --db`; the server does the same for a user's `POST /api/v1/runs`);
/// returns the run's id and whether it waits for an approver. The engines' binaries and source
/// archives (`sources`) are uploaded first (those the database lacks), then the run is stored
/// and names them in one transaction.
pub async fn store(
    db: &mut Client,
    who: &Principal,
    sub: &Submission,
    share: Share,
    sources: &[PreparedSource],
) -> Result<(i64, bool)> {
    let parts = RunParts::of(sub)?;
    let run = parts.new_run(sub);
    let shas = upload_all(&DbDoor::new(db, who), sub, sources).await?;
    queue::submit::submit(db, who, &run, share, &shas).await.context("cannot store the run")
}

impl Submission {
    /// A stored submission read back; one of another layout is refused in one line.
    pub fn from_stored(v: &Value) -> Result<Submission> {
        check_format(v)?;
        Submission::deserialize(v).map_err(|e| anyhow!("its stored submission does not parse: {e}"))
    }
}

/// What a list of runs reads of a stored submission: the plan and the experiment, without the
/// book's openings and the engines' identities (a thousand runs' books would otherwise be read
/// and held for one page). The database's read for it leaves the openings out
/// (`queue::dashboard::run_list`).
#[derive(Clone, Debug, Deserialize)]
pub struct SubmissionHead {
    pub run: RunFile,
    pub experiment: Experiment,
}

impl SubmissionHead {
    /// The head of a stored submission (of this runner's format).
    pub fn from_stored(v: &Value) -> Result<SubmissionHead> {
        check_format(v)?;
        SubmissionHead::deserialize(v)
            .map_err(|e| anyhow!("its stored submission does not parse: {e}"))
    }

    pub fn plan(&self) -> &RunPlan {
        &self.run.plan
    }

    /// `match`, `sweep` or `tune`.
    pub fn kind(&self) -> &'static str {
        self.experiment.kind()
    }

    pub fn sweep(&self) -> Option<&SweepPlan> {
        self.experiment.sweep()
    }
}

/// Refuses a stored submission of another runner's format.
fn check_format(v: &Value) -> Result<()> {
    match v.get("format").and_then(Value::as_u64) {
        Some(f) if f == u64::from(SUBMISSION_FORMAT) => Ok(()),
        Some(f) if f == u64::from(super::tablebase::TB_FORMAT) => Ok(()),
        Some(f) => bail!(
            "it was submitted by a runner with submission format {f}, this one reads \
             {SUBMISSION_FORMAT}: use the same runner version"
        ),
        None => bail!("its stored submission is not one of this runner"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::{Path, PathBuf};

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::play::worker::GameTask;

    /// A folder of its own for a test.
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fleet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A shell-script UCI engine that answers the handshake and declares `X` (spin) and `T`
    /// (string).
    pub(crate) fn fake_engine(dir: &Path) -> String {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join("fake-uci.sh");
        let body = "#!/bin/sh\nwhile read l; do case \"$l\" in\n\
            uci) echo 'id name fake'; echo 'option name X type spin default 5 min 0 max 99';\
            echo 'option name T type string default a'; echo uciok;;\n\
            isready) echo readyok;;\nquit) exit 0;;\nesac; done\n";
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    }

    pub(crate) fn parse(args: &[&str]) -> Command {
        let mut v = vec!["runner"];
        v.extend_from_slice(args);
        // The fake engine plays from the start position only.
        v.extend(["--book", "startpos"]);
        Cli::try_parse_from(v).unwrap().command
    }

    pub(crate) fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    pub(crate) fn match_submission(engine: &str, extra: &[&str]) -> Result<Submission> {
        let (a, b) = (format!("cmd={engine},name=A"), format!("cmd={engine},name=B"));
        let mut args = vec!["match", "--engine", &a, "--engine", &b, "--depth", "1"];
        args.extend_from_slice(extra);
        let Command::Match(m) = parse(&args) else { unreachable!() };
        rt().block_on(submission_of_match(&m))
    }

    #[test]
    fn a_submitted_match_round_trips_and_schedules_as_a_local_run() {
        let d = scratch("sub-match");
        let engine = fake_engine(&d);
        let sub = match_submission(&engine, &["--games", "10", "--seed", "7"]).unwrap();
        assert_eq!((sub.kind(), sub.plan().kind.as_str(), sub.plan().pairs), ("match", "match", 5));
        assert_eq!(sub.run.plan_hash, sub.plan().hash());
        assert_eq!(sub.engines.len(), 2);
        assert_eq!(
            sub.engines[0].sha256,
            crate::plan::run_plan::file_sha256(Path::new(&engine)).unwrap()
        );
        assert_eq!(sub.openings.len(), 1);
        let json = serde_json::to_string(&sub).unwrap();
        let back: Submission = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&sub).unwrap());
        assert_eq!(back.run.plan_hash, back.plan().hash(), "the plan hashes the same read back");
        // The pairs in the order a local run of the same plan plays them.
        let local = crate::run::prepare::pending_games(sub.plan(), sub.openings.len(), &[]);
        let from_sub: Vec<GameTask> = back
            .schedule()
            .into_iter()
            .flat_map(|job| [0u8, 1].map(|game| GameTask { job, game, first_white: game == 0 }))
            .collect();
        assert_eq!(from_sub.len() as u64, local.total_games);
        assert_eq!(
            from_sub.iter().map(|t| (t.job, t.game)).collect::<Vec<_>>(),
            local.tasks.iter().map(|t| (t.job, t.game)).collect::<Vec<_>>()
        );
        // The same arguments make the same plan as `runner match` (seed given).
        let (a, b) = (format!("cmd={engine},name=A"), format!("cmd={engine},name=B"));
        let args = ["match", "--engine", &a, "--engine", &b, "--depth", "1", "--games", "10"];
        let Command::Match(m) = parse(&[&args[..], &["--seed", "7"]].concat()) else {
            unreachable!()
        };
        let (plan, _, _) = crate::run::args::match_run_plan(&m, || Ok(d.join("local"))).unwrap();
        assert_eq!(plan.hash(), sub.run.plan_hash);
        assert!(!d.join("local").exists(), "building a plan makes no folder");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn folder_flags_and_bad_plans_are_refused_in_one_line() {
        let d = scratch("sub-refuse");
        let engine = fake_engine(&d);
        let out = d.join("out").display().to_string();
        for (extra, needle) in [
            (vec!["--out", out.as_str()], "does not take --out"),
            (vec!["--resume"], "does not take --resume"),
            (vec!["--shard", "1/2", "--seed", "1"], "does not take --shard"),
            (vec!["--sprt", "elo0=5"], "bad --sprt"),
            (vec!["--stall-timeout=0"], "--stall-timeout"),
        ] {
            let e = format!("{:#}", match_submission(&engine, &extra).unwrap_err());
            assert!(e.contains(needle) && !e.contains('\n'), "{extra:?}: {e}");
        }
        assert!(!d.join("out").exists());
        // An engine that does not start.
        let e = match_submission(&d.join("missing").display().to_string(), &[]).unwrap_err();
        assert!(format!("{e:#}").contains("missing"), "{e:#}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn sweeps_and_tuning_runs_are_checked_against_the_engine() {
        let d = scratch("sub-kinds");
        let engine = fake_engine(&d);
        let spec = format!("cmd={engine},name=E");
        let sweep = |param: &str| {
            let args = ["sweep", "--engine", &spec, "--param", param, "--values", "1,2"];
            let Command::Sweep(s) = parse(&[&args[..], &["--depth", "1", "--adaptive"]].concat())
            else {
                unreachable!()
            };
            rt().block_on(submission_of_sweep(&s))
        };
        let sub = sweep("X").unwrap();
        assert_eq!(sub.kind(), "sweep");
        assert_eq!(sub.plan().pairings.len(), 2);
        assert!(sub.race().is_some());
        assert!(matches!(&sub.experiment, Experiment::Sweep { required_options, .. }
            if required_options == &["X".to_string()]));
        let e = format!("{:#}", sweep("Nope").unwrap_err());
        assert!(e.contains("does not declare the swept option Nope"), "{e}");
        let tune = |param: &str| {
            let args =
                ["tune", "--engine", &spec, "--param", param, "--games", "8", "--depth", "1"];
            let Command::Tune(t) = parse(&args) else { unreachable!() };
            rt().block_on(submission_of_tune(&t))
        };
        let sub = tune("X,5,0,99,2,0.01").unwrap();
        let spsa = sub.spsa().unwrap();
        assert_eq!((spsa.integer.as_slice(), spsa.iterations, spsa.big_a), (&[true][..], 4, 0.0));
        assert_eq!(sub.plan().engines[0].name, "E+");
        let sub = tune("T,0.5,0,1,0.1,0.01").unwrap();
        assert_eq!(sub.spsa().unwrap().integer, [false]);
        let e = format!("{:#}", tune("Q,5,0,9,1,1").unwrap_err());
        assert!(e.contains("does not declare the option Q"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
