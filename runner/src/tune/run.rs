//! The tuning loop. Each concurrency slot owns one engine process per side; before each game
//! both get their iteration's values with `setoption` (the game loop then sends `ucinewgame` and
//! `isready`). An iteration is logged (tune.jsonl) before its first game, every game is appended
//! to games.jsonl as it ends, and theta moves when an iteration's pair is complete, so theta can
//! always be replayed from the two files. On resume, iterations already started are finished
//! with their logged values (only their missing games are played) and new ones start from the
//! replayed theta.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use shakmaty::Color;
use tokio::sync::mpsc;

use super::log::{TuneLog, as_logged};
use super::params::{TuneParam, integer_flags};
use super::spsa::{Finished, Iteration, Spsa, Step, option_text};
use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::{Job, build_schedule};
use crate::play::cancel::Cancel;
use crate::play::game::{GameOutcome, GameSettings, play_game};
use crate::play::uci::{StartOptions, UciEngine};
use crate::play::worker::GameTask;
use crate::report::progress::Progress;
use crate::report::warnings::FaultStreaks;
use crate::run::RunOptions;
use crate::run::live::LIVE_EVERY;
use crate::run::start_options;
use crate::store::{GameRecord, LOG_DIR, Store, make_record};

/// Where a tuning run stands: its settings, theta, the applied updates and every stored game.
pub struct TuneState {
    pub spsa: Spsa,
    pub theta: Vec<f64>,
    pub history: Vec<Step>,
    pub records: Vec<GameRecord>,
}

/// How a tuning run ended.
pub struct TuneOutcome {
    pub state: TuneState,
    /// Ctrl-C or SIGTERM stopped it (the rest is played on resume).
    pub interrupted: bool,
}

/// Writes the run's outputs from a state (live, at most every 2 s, and at the end).
pub type WriteOutputs<'a> = &'a mut (dyn FnMut(&TuneState) -> Result<()> + Send);

/// Pairs waiting for their second game: the pair's number and the plus side's points in the
/// first.
#[derive(Default)]
pub struct OpenPairs(HashMap<usize, f64>);

impl OpenPairs {
    /// Adds a stored game; when it completes its pair, the pair's result: the plus side's wins
    /// minus losses (game 0 has the plus side as White).
    fn add(&mut self, r: &GameRecord) -> Option<f64> {
        let points = plus_points(r);
        match self.0.remove(&r.pair) {
            Some(other) => Some(other + points),
            None => {
                self.0.insert(r.pair, points);
                None
            }
        }
    }
}

/// The pairs finished, in the order their second game was stored, and the pairs still open
/// (a pulled fleet run replays theta from its games in the order they were reported, the same
/// way).
pub fn finished_pairs(records: &[GameRecord]) -> (Vec<Finished>, OpenPairs) {
    let mut open = OpenPairs::default();
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(result) = open.add(r) {
            out.push(Finished { k: r.pair as u64, result, games: i as u64 + 1 });
        }
    }
    (out, open)
}

/// The plus side's wins minus losses in one game: 1, 0 or -1.
fn plus_points(r: &GameRecord) -> f64 {
    match r.first_score() {
        stats::GameScore::Win => 1.0,
        stats::GameScore::Draw => 0.0,
        stats::GameScore::Loss => -1.0,
    }
}

/// The games of a run and how they are played.
pub struct TuneSetup<'a> {
    /// Kind "tune": engines `[plus, minus]` (one spec under two names), one pairing, one pair
    /// per iteration.
    pub plan: &'a RunPlan,
    pub openings: Vec<Opening>,
    pub opts: &'a RunOptions,
    pub settings: GameSettings,
    pub params: Vec<TuneParam>,
    pub big_a: f64,
    pub cancel: Cancel,
}

struct Shared {
    specs: [crate::plan::engine_spec::EngineSpec; 2],
    start: StartOptions,
    openings: Vec<Opening>,
    settings: GameSettings,
    integer: Vec<bool>,
    names: Vec<String>,
    cancel: Cancel,
}

/// A concurrency slot's engines: `[plus, minus]`, started on demand.
struct Slot {
    id: usize,
    engines: [Option<UciEngine>; 2],
}

enum Event {
    Game { k: u64, job: Job, game: u8, outcome: Box<GameOutcome> },
    Fatal(String),
}

/// Starts the engine `spec` and reads the tuned options' types (integer or not); an undeclared
/// option is an error before any game (the spec's other options too, unless `allow_unknown`:
/// `--allow-unknown-options`). The engine is returned (a run keeps it for its first slot;
/// `runner submit` shuts it down).
pub async fn check_engine(
    spec: &EngineSpec,
    params: &[TuneParam],
    start: &StartOptions,
    allow_unknown: bool,
) -> Result<(UciEngine, Vec<bool>)> {
    let e = UciEngine::start(spec, start).await.map_err(|e| anyhow!("{e}"))?;
    let declared: Vec<(String, String)> =
        e.declared_options.iter().cloned().zip(e.declared_types.iter().cloned()).collect();
    let undeclared: Vec<String> = spec
        .options
        .iter()
        .filter(|(k, _)| !e.declares(k))
        .filter(|(k, _)| !params.iter().any(|p| p.name.eq_ignore_ascii_case(k)))
        .map(|(k, _)| k.clone())
        .collect();
    if !undeclared.is_empty() && allow_unknown {
        errln!(
            "warning: engine {} does not declare option(s) {} (sent anyway: \
             --allow-unknown-options)",
            spec.name,
            undeclared.join(", ")
        );
    } else if !undeclared.is_empty() {
        let msg = crate::run::undeclared_error(&spec.name, &undeclared, &e.declared_options);
        e.shutdown().await;
        bail!("{msg}");
    }
    match integer_flags(params, &spec.name, &declared) {
        Ok(flags) => Ok((e, flags)),
        Err(msg) => {
            e.shutdown().await;
            bail!("{msg}")
        }
    }
}

/// Plays the missing `games` of iteration `it` on a slot's engines.
async fn play_iteration(
    mut slot: Slot,
    job: Job,
    games: Vec<u8>,
    it: Arc<Iteration>,
    sh: Arc<Shared>,
    tx: mpsc::UnboundedSender<Event>,
) -> Slot {
    let Some(opening) = sh.openings.get(job.opening) else {
        let _ = tx.send(Event::Fatal(format!("opening {} missing", job.opening)));
        sh.cancel.cancel();
        return slot;
    };
    for game in games {
        for side in 0..2 {
            if slot.engines[side].is_none() {
                let mut start = sh.start.clone();
                start.instance = 2 * slot.id + side;
                match UciEngine::start(&sh.specs[side], &start).await {
                    Ok(e) => slot.engines[side] = Some(e),
                    Err(e) => {
                        let _ = tx.send(Event::Fatal(format!("cannot restart engine: {e}")));
                        sh.cancel.cancel();
                        return slot;
                    }
                }
            }
        }
        let [Some(mut plus), Some(mut minus)] = std::mem::take(&mut slot.engines) else {
            return slot;
        };
        for (eng, values) in [(&mut plus, &it.plus), (&mut minus, &it.minus)] {
            let mut cmds = String::new();
            for ((name, v), int) in sh.names.iter().zip(values).zip(&sh.integer) {
                cmds.push_str(&format!("setoption name {name} value {}\n", option_text(*v, *int)));
            }
            // An engine that is gone fails the game's own `isready` and loses by its fault.
            let _ = eng.send(&cmds).await;
        }
        let (white, black) =
            if game == 0 { (&mut plus, &mut minus) } else { (&mut minus, &mut plus) };
        let outcome = tokio::select! {
            biased;
            _ = sh.cancel.cancelled() => None,
            o = play_game(white, black, opening, &sh.settings) => Some(o),
        };
        match outcome {
            // Cancelled mid-game: the engines die with their handles; the game is replayed.
            None => return slot,
            Some(Err(e)) => {
                let _ = tx.send(Event::Fatal(format!("{e:#}")));
                sh.cancel.cancel();
                return slot;
            }
            Some(Ok(out)) => {
                let plus_color = if game == 0 { Color::White } else { Color::Black };
                for (side, eng) in [(0, plus), (1, minus)] {
                    let color = if side == 0 { plus_color } else { !plus_color };
                    if out.faulty == Some(color) {
                        tokio::spawn(eng.shutdown());
                    } else {
                        slot.engines[side] = Some(eng);
                    }
                }
                let ev = Event::Game { k: it.k, job, game, outcome: Box::new(out) };
                if tx.send(ev).is_err() {
                    return slot;
                }
            }
        }
    }
    slot
}

/// Runs (or resumes) a tuning run; `write` renders the outputs as it goes.
pub async fn run_tune(setup: TuneSetup<'_>, write: WriteOutputs<'_>) -> Result<TuneOutcome> {
    let (plan, opts) = (setup.plan, setup.opts);
    if setup.openings.is_empty() {
        bail!("no openings to play");
    }
    let start = start_options(plan, opts);
    crate::store::files::create_subdir(&opts.out_dir, std::path::Path::new(LOG_DIR))?;
    let cancel = setup.cancel.clone();
    let (first, integer) = tokio::select! {
        biased;
        _ = cancel.cancelled() => bail!("interrupted before the first game"),
        r = check_engine(&plan.engines[0], &setup.params, &start, opts.allow_unknown_options) => r?,
    };
    let spsa = as_logged(&Spsa {
        params: setup.params.clone(),
        integer: integer.clone(),
        iterations: plan.pairs as u64,
        big_a: setup.big_a,
        seed: plan.seed,
    })?;
    let dir = opts.out_dir.as_path();
    let (store, records, log, started) = open(plan, dir, &spsa, opts.resume)?;
    let (finished, open_pairs) = finished_pairs(&records);
    let (theta, history) = spsa
        .replay(&started, &finished)
        .map_err(|e| anyhow!("cannot resume {}: {e}", dir.display()))?;
    if opts.resume {
        errln!(
            "resuming: {} of {} games already played, {} iterations applied",
            records.len(),
            2 * plan.pairs,
            history.len()
        );
    }
    let jobs = build_schedule(
        1,
        plan.pairs,
        setup.openings.len(),
        plan.book_order,
        plan.seed,
        &plan.scheduling,
    );
    let state = TuneState { spsa, theta, history, records };
    let shared = Arc::new(Shared {
        specs: [plan.engines[0].clone(), plan.engines[1].clone()],
        start,
        openings: setup.openings,
        settings: setup.settings,
        integer,
        names: setup.params.iter().map(|p| p.name.clone()).collect(),
        cancel: cancel.clone(),
    });
    let mut lp = Loop {
        plan,
        shared,
        jobs,
        store,
        log,
        state,
        started,
        open_pairs,
        progress: Progress::new(opts.progress, 2 * plan.pairs as u64, 0),
        streaks: FaultStreaks::new(opts.fault_limit),
        plan_hash: plan.merge_hash(),
        fatal: None,
        last_write: None,
        write_said: false,
    };
    lp.progress.update(lp.state.records.len() as u64, &lp.status(None));
    let mut first = Some(first);
    let slots: Vec<Slot> =
        (0..opts.concurrency.max(1)).map(|id| Slot { id, engines: [first.take(), None] }).collect();
    let slots = lp.play(slots, write).await?;
    lp.progress.finish();
    for s in slots {
        for e in s.engines.into_iter().flatten() {
            e.shutdown().await;
        }
    }
    if let Some(msg) = lp.fatal {
        bail!(
            "run stopped: {msg} (finished games are kept; continue with: {})",
            crate::store::dir::resume_command(dir)
        );
    }
    lp.store.rewrite_pgn(&lp.state.records).context("rewriting games.pgn")?;
    let interrupted = cancel.is_cancelled();
    Ok(TuneOutcome { state: lp.state, interrupted })
}

type Opened = (Store, Vec<GameRecord>, TuneLog, BTreeMap<u64, Iteration>);

fn open(plan: &RunPlan, dir: &Path, spsa: &Spsa, resume: bool) -> Result<Opened> {
    if resume {
        let (log, started) = TuneLog::resume(dir, spsa)?;
        let (store, records) = Store::resume(dir, plan)?;
        Ok((store, records, log, started))
    } else {
        let store = Store::create(dir, plan)?;
        let log = TuneLog::create(dir, spsa)?;
        Ok((store, Vec::new(), log, BTreeMap::new()))
    }
}

struct Loop<'a> {
    plan: &'a RunPlan,
    shared: Arc<Shared>,
    jobs: Vec<Job>,
    store: Store,
    log: TuneLog,
    state: TuneState,
    started: BTreeMap<u64, Iteration>,
    open_pairs: OpenPairs,
    progress: Progress,
    streaks: FaultStreaks,
    plan_hash: String,
    fatal: Option<String>,
    last_write: Option<Instant>,
    write_said: bool,
}

impl Loop<'_> {
    /// The iterations to play, in order: started ones with missing games first (their logged
    /// values), then the rest (values from theta when they start).
    fn queue(&self) -> Vec<(u64, Vec<u8>)> {
        let mut have: HashMap<usize, Vec<u8>> = HashMap::new();
        for r in &self.state.records {
            have.entry(r.pair).or_default().push(r.game);
        }
        (0..self.plan.pairs)
            .filter_map(|k| {
                let missing: Vec<u8> = [0u8, 1]
                    .into_iter()
                    .filter(|g| !have.get(&k).is_some_and(|v| v.contains(g)))
                    .collect();
                (!missing.is_empty()).then_some((k as u64, missing))
            })
            .collect()
    }

    async fn play(&mut self, mut idle: Vec<Slot>, write: WriteOutputs<'_>) -> Result<Vec<Slot>> {
        let mut queue = self.queue().into_iter();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            while !self.shared.cancel.is_cancelled() && !idle.is_empty() {
                let Some((k, games)) = queue.next() else { break };
                let it = match self.started.get(&k) {
                    Some(it) => it.clone(),
                    None => {
                        let it = self.log.start(&self.state.spsa.begin(k, &self.state.theta))?;
                        self.started.insert(k, it.clone());
                        it
                    }
                };
                let slot = idle.pop().expect("an idle slot");
                let job = self.jobs[k as usize];
                let fut =
                    play_iteration(slot, job, games, Arc::new(it), self.shared.clone(), tx.clone());
                tasks.spawn(fut);
            }
            if tasks.is_empty() {
                break;
            }
            tokio::select! {
                Some(ev) = rx.recv() => self.event(ev, write),
                Some(done) = tasks.join_next() => {
                    // A task sends its games before it ends: they are all recorded (and theta
                    // moved) before its slot starts the next iteration, so at concurrency 1
                    // every iteration starts from the updates of all before it.
                    while let Ok(ev) = rx.try_recv() {
                        self.event(ev, write);
                    }
                    idle.push(done.map_err(|e| anyhow!("a game task failed: {e}"))?);
                }
            }
        }
        drop(tx);
        while let Ok(ev) = rx.try_recv() {
            self.event(ev, write);
        }
        self.write(write, true);
        Ok(idle)
    }

    fn event(&mut self, ev: Event, write: WriteOutputs<'_>) {
        match ev {
            Event::Fatal(msg) => {
                self.progress.println(&format!("error: {msg}"));
                self.fatal.get_or_insert(msg);
            }
            Event::Game { k, job, game, outcome } => {
                if let Err(e) = self.record(k, job, game, *outcome) {
                    self.fatal.get_or_insert(format!("{e:#}"));
                    self.shared.cancel.cancel();
                }
                self.write(write, false);
            }
        }
    }

    /// Stores a finished game; when it completes its pair, theta moves.
    fn record(&mut self, k: u64, job: Job, game: u8, outcome: GameOutcome) -> Result<()> {
        let opening = &self.shared.openings[job.opening];
        let names = if game == 0 {
            [self.shared.specs[0].name.clone(), self.shared.specs[1].name.clone()]
        } else {
            [self.shared.specs[1].name.clone(), self.shared.specs[0].name.clone()]
        };
        let task = GameTask { job, game, first_white: game == 0 };
        let mut rec = make_record(&task, &self.plan.pairings[0], opening, &names, outcome);
        rec.plan_hash = Some(self.plan_hash.clone());
        self.store.append(&rec)?;
        if let Some(why) = self.streaks.on_game(&rec) {
            self.progress.println(&format!("error: {why}"));
            self.fatal.get_or_insert(why);
            self.shared.cancel.cancel();
        }
        let completed = self.open_pairs.add(&rec);
        self.state.records.push(rec);
        let Some(result) = completed else {
            let status = self.status(None);
            self.progress.update(self.state.records.len() as u64, &status);
            return Ok(());
        };
        let it = self.started.get(&k).ok_or_else(|| anyhow!("iteration {k} was not logged"))?;
        self.state.spsa.update(&mut self.state.theta, it, result);
        self.state.history.push(Step {
            k,
            games: self.state.records.len() as u64,
            theta: self.state.theta.clone(),
            c_k: it.c_k.clone(),
            a_k: it.a_k.clone(),
            result,
        });
        let status = self.status(Some(result));
        self.progress.update(self.state.records.len() as u64, &status);
        Ok(())
    }

    /// The progress line: iterations applied, the last result, theta.
    fn status(&self, result: Option<f64>) -> String {
        let values: Vec<String> = self
            .state
            .spsa
            .params
            .iter()
            .zip(&self.state.theta)
            .map(|(p, v)| format!("{}={}", p.name, super::files::fmt_value(*v)))
            .collect();
        let last = result.map(|r| format!(", last pair {r:+}")).unwrap_or_default();
        format!(
            "iteration {}/{}{last}: {}",
            self.state.history.len(),
            self.state.spsa.iterations,
            values.join(" ")
        )
    }

    /// The outputs, after the first game and then at most every 2 s (always when `last`).
    fn write(&mut self, write: WriteOutputs<'_>, last: bool) {
        if !last && self.last_write.is_some_and(|t| t.elapsed() < LIVE_EVERY) {
            return;
        }
        self.last_write = Some(Instant::now());
        if let Err(e) = write(&self.state)
            && !self.write_said
        {
            self.write_said = true;
            self.progress.println(&format!("warning: cannot write the tune outputs: {e:#}"));
        }
    }
}
