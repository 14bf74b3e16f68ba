//! The worker pool: N tasks take games from a shared queue and play them with engines borrowed
//! from per-spec process pools. An engine that faulted is shut down and replaced.

use std::collections::{HashSet, VecDeque};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use shakmaty::Color;
use tokio::sync::mpsc;

use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::Opening;
use crate::plan::schedule::{Job, Pairing};
use crate::play::affinity;
use crate::play::cancel::Cancel;
use crate::play::game::{GameOutcome, GameSettings, play_game};
use crate::play::pause::PauseWatch;
use crate::play::uci::{StartOptions, UciEngine, UciError};

/// Idle processes of one engine spec; new ones are started on demand.
pub struct EnginePool {
    spec: EngineSpec,
    opts: StartOptions,
    idle: Mutex<Vec<UciEngine>>,
    next_instance: AtomicUsize,
    /// CPU time of the processes retired so far (Linux), microseconds.
    retired_cpu_us: AtomicUsize,
}

impl EnginePool {
    pub fn new(spec: EngineSpec, opts: StartOptions) -> EnginePool {
        EnginePool {
            spec,
            opts,
            idle: Mutex::new(Vec::new()),
            next_instance: AtomicUsize::new(0),
            retired_cpu_us: AtomicUsize::new(0),
        }
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    /// An idle engine, or a freshly started one.
    pub async fn acquire(&self) -> Result<UciEngine, UciError> {
        if let Some(e) = self.idle.lock().ok().and_then(|mut v| v.pop()) {
            return Ok(e);
        }
        let mut opts = self.opts.clone();
        opts.instance = self.next_instance.fetch_add(1, Ordering::Relaxed);
        UciEngine::start(&self.spec, &opts).await
    }

    /// Returns a healthy engine for reuse.
    pub fn release(&self, e: UciEngine) {
        if let Ok(mut v) = self.idle.lock() {
            v.push(e);
        }
    }

    fn account(&self, e: &UciEngine) {
        if let Some(t) = e.cpu_time() {
            self.retired_cpu_us.fetch_add(t.as_micros() as usize, Ordering::Relaxed);
        }
    }

    /// Kills an engine at once (a cancelled game), counting its CPU time.
    pub fn discard(&self, e: UciEngine) {
        self.account(&e);
        drop(e);
    }

    /// Shuts an engine down in the background (after a fault), counting its CPU time.
    pub fn retire(&self, e: UciEngine) {
        self.account(&e);
        tokio::spawn(e.shutdown());
    }

    /// CPU time used by the processes shut down so far.
    pub fn retired_cpu(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.retired_cpu_us.load(Ordering::Relaxed) as u64)
    }

    /// Quits every idle engine (terminate, then kill), counting their CPU time.
    pub async fn shutdown_idle(&self) {
        let engines: Vec<UciEngine> =
            self.idle.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default();
        let mut set = tokio::task::JoinSet::new();
        for e in engines {
            self.account(&e);
            set.spawn(e.shutdown());
        }
        while set.join_next().await.is_some() {}
    }
}

/// Games (or engine processes) at once when not given: the number of CPUs.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One game to play: game `game` (0 or 1) of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameTask {
    pub job: Job,
    pub game: u8,
    /// The pairing's first engine has White (game 0 by default; see `Scheduling`).
    pub first_white: bool,
}

/// A game a worker finished: what was played and how it went.
#[derive(Debug)]
pub struct FinishedGame {
    pub task: GameTask,
    /// White's and Black's engine names.
    pub names: [String; 2],
    pub outcome: GameOutcome,
}

/// What workers report to the run.
#[derive(Debug)]
pub enum WorkerEvent {
    Finished(Box<FinishedGame>),
    /// The run cannot go on (an engine cannot be restarted, a bad opening).
    Fatal(String),
    /// A game spanned a pause of the runner and was put back in the queue: the warning.
    Replayed(String),
}

/// Shared state of the workers.
pub struct WorkerContext {
    pub pools: Vec<Arc<EnginePool>>,
    pub pairings: Vec<Pairing>,
    pub openings: Arc<Vec<Opening>>,
    pub settings: GameSettings,
    queue: Mutex<VecDeque<GameTask>>,
    /// Pairings that need no new pairs (an SPRT decided); started pairs are still completed.
    decided: Vec<AtomicBool>,
    started_pairs: Mutex<HashSet<(usize, usize)>>,
    pub cancel: Cancel,
    /// Raised when the runner was stopped; a game that spans a raise is played again.
    pub pause: Arc<PauseWatch>,
    /// `--affinity`: the CPU of each worker slot; both engines of its games are pinned to it.
    pub slot_cpus: Option<Vec<usize>>,
}

impl WorkerContext {
    pub fn new(
        pools: Vec<Arc<EnginePool>>,
        pairings: Vec<Pairing>,
        openings: Arc<Vec<Opening>>,
        settings: GameSettings,
        tasks: Vec<GameTask>,
        already_started: impl IntoIterator<Item = (usize, usize)>,
        cancel: Cancel,
    ) -> WorkerContext {
        let decided = pairings.iter().map(|_| AtomicBool::new(false)).collect();
        WorkerContext {
            pools,
            pairings,
            openings,
            settings,
            queue: Mutex::new(tasks.into()),
            decided,
            started_pairs: Mutex::new(already_started.into_iter().collect()),
            cancel,
            pause: Arc::new(PauseWatch::new()),
            slot_cpus: None,
        }
    }

    /// Stops new pairs of a pairing from starting.
    pub fn mark_decided(&self, pairing: usize) {
        if let Some(d) = self.decided.get(pairing) {
            d.store(true, Ordering::SeqCst);
        }
    }

    pub fn all_decided(&self) -> bool {
        self.decided.iter().all(|d| d.load(Ordering::SeqCst))
    }

    /// The next game to play, skipping new pairs of decided pairings.
    fn next_task(&self) -> Option<GameTask> {
        let mut q = self.queue.lock().ok()?;
        let mut started = self.started_pairs.lock().ok()?;
        while let Some(t) = q.pop_front() {
            let key = (t.job.pairing, t.job.pair);
            let decided = self.decided.get(t.job.pairing).is_some_and(|d| d.load(Ordering::SeqCst));
            if decided && !started.contains(&key) {
                continue;
            }
            started.insert(key);
            return Some(t);
        }
        None
    }

    /// Puts a game back at the front of the queue, to be played again.
    fn requeue(&self, task: GameTask) {
        if let Ok(mut q) = self.queue.lock() {
            q.push_front(task);
        }
    }

    /// Games not yet taken by a worker.
    pub fn queued(&self) -> usize {
        self.queue.lock().map(|q| q.len()).unwrap_or(0)
    }
}

/// Pins both engines of a game to the CPU of worker `slot` (`--affinity`).
fn pin_to_slot(ctx: &WorkerContext, slot: usize, engines: [&UciEngine; 2]) -> Result<(), String> {
    let Some(cpu) = ctx.slot_cpus.as_ref().and_then(|c| c.get(slot)).copied() else {
        return Ok(());
    };
    for e in engines {
        if let Some(pid) = e.pid() {
            affinity::pin_process(pid, cpu).map_err(|err| {
                format!("--affinity: cannot pin engine {} to CPU {cpu}: {err}", e.name())
            })?;
        }
    }
    Ok(())
}

/// The engines of pools `wi` (White) and `bi` (Black): idle ones, or fresh starts.
pub async fn acquire_two(
    pools: &[Arc<EnginePool>],
    wi: usize,
    bi: usize,
) -> Result<(UciEngine, UciEngine), UciError> {
    Ok((pools[wi].acquire().await?, pools[bi].acquire().await?))
}

/// Gives the engines of a finished game back to their pools (`(pool, engine)` of White, then
/// of Black): the one at fault (`faulty`) is retired, the other kept for the next game.
pub fn give_back(
    pools: &[Arc<EnginePool>],
    engines: [(usize, UciEngine); 2],
    faulty: Option<Color>,
) {
    for (color, (idx, eng)) in [Color::White, Color::Black].into_iter().zip(engines) {
        if faulty == Some(color) {
            pools[idx].retire(eng);
        } else {
            pools[idx].release(eng);
        }
    }
}

/// One worker (slot `slot`): plays games until the queue is empty or the run is cancelled.
pub async fn worker_loop(
    ctx: Arc<WorkerContext>,
    tx: mpsc::UnboundedSender<WorkerEvent>,
    slot: usize,
) {
    while !ctx.cancel.is_cancelled() {
        let Some(task) = ctx.next_task() else { break };
        if play_task(&ctx, &tx, slot, task).await.is_break() {
            break;
        }
    }
}

/// A fatal error: said to the run and the run cancelled; the worker stops.
fn fatal(
    ctx: &WorkerContext,
    tx: &mpsc::UnboundedSender<WorkerEvent>,
    msg: String,
) -> ControlFlow<()> {
    let _ = tx.send(WorkerEvent::Fatal(msg));
    ctx.cancel.cancel();
    ControlFlow::Break(())
}

/// Worker `slot` plays `task` and sends what came of it: the game finished, or put back to be
/// played again when the runner was paused during it. `Break`: the worker stops (the run is
/// cancelled or failed, or nobody listens any more).
async fn play_task(
    ctx: &WorkerContext,
    tx: &mpsc::UnboundedSender<WorkerEvent>,
    slot: usize,
    task: GameTask,
) -> ControlFlow<()> {
    let pairing = &ctx.pairings[task.job.pairing];
    let (wi, bi) = if task.first_white {
        (pairing.first, pairing.second)
    } else {
        (pairing.second, pairing.first)
    };
    let settings = ctx.settings.with_pairing_tc(pairing.tc);
    let opening_index = task.job.opening_of(task.game);
    let Some(opening) = ctx.openings.get(opening_index) else {
        return fatal(ctx, tx, format!("opening {opening_index} missing"));
    };
    let acquired = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => return ControlFlow::Break(()),
        r = acquire_two(&ctx.pools, wi, bi) => r,
    };
    let (mut white, mut black) = match acquired {
        Ok(pair) => pair,
        Err(e) => return fatal(ctx, tx, format!("cannot restart engine: {e}")),
    };
    if let Err(msg) = pin_to_slot(ctx, slot, [&white, &black]) {
        return fatal(ctx, tx, msg);
    }
    let epoch = ctx.pause.observe();
    let outcome = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => None,
        o = play_game(&mut white, &mut black, opening, &settings) => Some(o),
    };
    let paused = ctx.pause.observe() != epoch;
    let Some(outcome) = outcome else {
        // Killed mid-game (the game is replayed on resume); their CPU time still counts.
        ctx.pools[wi].discard(white);
        ctx.pools[bi].discard(black);
        return ControlFlow::Break(());
    };
    let out = match outcome {
        Ok(out) => out,
        Err(e) => return fatal(ctx, tx, format!("{e:#}")),
    };
    let names = [ctx.pools[wi].spec().name.clone(), ctx.pools[bi].spec().name.clone()];
    give_back(&ctx.pools, [(wi, white), (bi, black)], out.faulty);
    if paused {
        let why = format!(
            "the runner was paused during game {} of pair {} ({} vs {}, {}): not scored, played \
             again",
            task.game + 1,
            task.job.pair + 1,
            names[0],
            names[1],
            out.termination,
        );
        ctx.requeue(task);
        return if tx.send(WorkerEvent::Replayed(why)).is_err() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        };
    }
    let game = FinishedGame { task, names, outcome: out };
    if tx.send(WorkerEvent::Finished(Box::new(game))).is_err() {
        return ControlFlow::Break(());
    }
    if !settings.wait.is_zero() {
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return ControlFlow::Break(()),
            _ = tokio::time::sleep(settings.wait) => {}
        }
    }
    ControlFlow::Continue(())
}
