//! Worker pool for the tools' position probes (calibration, search tests): N workers, each owning one engine process per engine setup
//! (variant), take jobs (a position, a setup, the searches to run) from a shared queue. A fault
//! (crash, timeout) fails that job only: the engine is killed and restarted for the next one.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::plan::engine_spec::EngineSpec;
use crate::play::cancel::Cancel;
use crate::play::probe::{Limit, SearchReport, new_game, search};
use crate::play::uci::{StartOptions, UciEngine, UciError};

/// What the tools print when a signal stops them.
pub const STOPPING: &str = "stopping: writing results of the positions searched so far";

/// One engine configuration.
#[derive(Clone, Debug)]
pub struct EngineSetup {
    /// Label used in file names and tables.
    pub label: String,
    pub spec: EngineSpec,
    /// Options set after the spec's own, but only when the engine declares them (e.g. `MPC`
    /// false for calibration: the bundled engine has it, other engines are left as they are).
    pub if_declared: Vec<(String, String)>,
}

/// One unit of work: searches of one position with one setup, each after `ucinewgame`.
#[derive(Clone, Debug)]
pub struct Job {
    pub position: usize,
    pub setup: usize,
    pub fen: String,
    pub limits: Vec<Limit>,
    /// `go ... searchmoves` these UCI moves (empty: all moves).
    pub searchmoves: Vec<String>,
}

/// A finished job: the reports of its searches, or the fault that ended it.
#[derive(Debug)]
pub struct JobResult {
    pub position: usize,
    pub setup: usize,
    pub outcome: Result<Vec<SearchReport>, String>,
}

#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub concurrency: usize,
    pub start_timeout: Duration,
    pub search_timeout: Duration,
    /// Engine stderr goes to `<logs>/<label>-<worker>.stderr.log`.
    pub logs: Option<PathBuf>,
}

/// Starts an engine for `setup`, applies the conditional options and waits for `readyok`.
/// Returns the engine and the `info string` lines it answered to the options with.
pub async fn start_engine(
    setup: &EngineSetup,
    cfg: &PoolConfig,
    worker: usize,
) -> Result<(UciEngine, Vec<String>)> {
    let opts = StartOptions {
        log_dir: cfg.logs.clone(),
        instance: worker,
        handshake_timeout: cfg.start_timeout,
        protocol_log: false,
        log_stem: Some(format!("{}-{worker}", setup.label)),
        every_line: true,
        chess960: false,
        sandbox: None,
    };
    let mut said = Vec::new();
    let on_line = &mut |l: &str| {
        if l.starts_with("info string") {
            said.push(l.to_string());
        }
    };
    let engine = UciEngine::start_with(&setup.spec, &opts, &setup.if_declared, on_line).await?;
    Ok((engine, said))
}

/// Starts every setup once (before any job) so that a bad path or a silent engine is a clear
/// error at once. Returns, per setup, the engine's `info string` answers to the options.
pub async fn check_setups(setups: &[EngineSetup], cfg: &PoolConfig) -> Result<Vec<Vec<String>>> {
    let mut notes = Vec::new();
    for s in setups {
        let (engine, said) = start_engine(s, cfg, 0).await?;
        engine.shutdown().await;
        notes.push(said);
    }
    Ok(notes)
}

/// Runs `jobs` on `cfg.concurrency` workers. Results arrive on the returned channel in
/// completion order; the channel closes when all jobs are done, or soon after `cancel` (jobs in
/// flight are abandoned, their engines killed). The handle fails if an engine cannot be
/// restarted after a fault.
pub fn spawn_pool(
    setups: Vec<EngineSetup>,
    jobs: Vec<Job>,
    cfg: PoolConfig,
    cancel: Cancel,
) -> (mpsc::Receiver<JobResult>, tokio::task::JoinHandle<Result<()>>) {
    let (tx, rx) = mpsc::channel(256);
    let queue = Arc::new(Mutex::new(VecDeque::from(jobs)));
    let setups = Arc::new(setups);
    let handle = tokio::spawn(async move {
        let mut set = JoinSet::new();
        for w in 0..cfg.concurrency.max(1) {
            set.spawn(worker(
                w,
                setups.clone(),
                queue.clone(),
                cfg.clone(),
                cancel.clone(),
                tx.clone(),
            ));
        }
        drop(tx);
        let mut first_err = None;
        while let Some(res) = set.join_next().await {
            let res = res.unwrap_or_else(|e| Err(anyhow::anyhow!("worker failed: {e}")));
            if let Err(e) = res {
                cancel.cancel();
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    });
    (rx, handle)
}

async fn worker(
    id: usize,
    setups: Arc<Vec<EngineSetup>>,
    queue: Arc<Mutex<VecDeque<Job>>>,
    cfg: PoolConfig,
    cancel: Cancel,
    tx: mpsc::Sender<JobResult>,
) -> Result<()> {
    let mut engines: Vec<Option<UciEngine>> = setups.iter().map(|_| None).collect();
    let mut failed_starts = 0;
    loop {
        if cancel.is_cancelled() {
            break;
        }
        let Some(job) =
            queue.lock().map_err(|_| anyhow::anyhow!("job queue poisoned"))?.pop_front()
        else {
            break;
        };
        let setup = &setups[job.setup];
        if engines[job.setup].is_none() {
            match start_engine(setup, &cfg, id).await {
                Ok((e, _)) => {
                    engines[job.setup] = Some(e);
                    failed_starts = 0;
                }
                Err(e) => {
                    failed_starts += 1;
                    if failed_starts >= 3 {
                        bail!("{e:#} (3 restarts failed)");
                    }
                    let outcome = Err(format!("{e:#}"));
                    let res = JobResult { position: job.position, setup: job.setup, outcome };
                    if tx.send(res).await.is_err() {
                        break;
                    }
                    continue;
                }
            }
        }
        let Some(engine) = engines[job.setup].as_mut() else { continue };
        let run = async {
            let mut reports = Vec::with_capacity(job.limits.len());
            for &limit in &job.limits {
                new_game(engine, cfg.start_timeout).await?;
                reports.push(
                    search(engine, &job.fen, limit, &job.searchmoves, cfg.search_timeout).await?,
                );
            }
            Ok::<_, UciError>(reports)
        };
        let outcome = tokio::select! {
            r = run => r.map_err(|e| e.to_string()),
            _ = cancel.cancelled() => break,
        };
        if outcome.is_err() {
            // Killed (process group) on drop; restarted for the next job.
            engines[job.setup] = None;
        }
        let res = JobResult { position: job.position, setup: job.setup, outcome };
        if tx.send(res).await.is_err() {
            break;
        }
    }
    for e in engines.into_iter().flatten() {
        if cancel.is_cancelled() {
            drop(e);
        } else {
            e.shutdown().await;
        }
    }
    Ok(())
}
