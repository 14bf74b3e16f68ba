//! Executing a run: open (or resume) the store, check every engine starts, play the pending games
//! with the worker pool, write each finished game as it arrives, stop on an SPRT decision or a
//! signal, and summarise.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use stats::Verdict;
use tokio::sync::mpsc;

use crate::cancel::Cancel;
use crate::game::GameSettings;
use crate::openings::Opening;
use crate::progress::{Progress, ProgressMode};
use crate::schedule::build_schedule;
use crate::store::{GameRecord, LOG_DIR, RunPlan, Store};
use crate::summary::{Tally, format_pairing, summary_json};
use crate::uci_process::{StartOptions, UciEngine};
use crate::worker::{EnginePool, GameTask, WorkerContext, WorkerEvent, worker_loop};

/// How to execute a plan (none of this changes which games are played).
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    pub concurrency: usize,
    pub resume: bool,
    /// Longest wait for `readyok`, and for `bestmove` under node or depth limits.
    pub stall_timeout: Duration,
    /// Longest wait for `uciok` at start.
    pub handshake_timeout: Duration,
    pub protocol_log: bool,
    pub progress: ProgressMode,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Every scheduled game was played.
    Complete,
    /// Every pairing reached an SPRT decision.
    Sprt,
    /// Ctrl-C or SIGTERM: unfinished games are replayed on resume.
    Interrupted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Complete => "complete",
            StopReason::Sprt => "sprt",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// The result of a run.
pub struct RunOutcome {
    pub records: Vec<GameRecord>,
    pub tally: Tally,
    pub stop: StopReason,
    pub dir: PathBuf,
    /// Human-readable final summary.
    pub report: String,
    pub overhead: crate::overhead::OverheadReport,
}

fn sprt_decided(plan: &RunPlan, tally: &Tally, pairing: usize) -> bool {
    plan.sprt.is_some()
        && tally.pairings[pairing]
            .summarize(plan.sprt)
            .and_then(|s| s.sprt)
            .is_some_and(|r| r.verdict != Verdict::Continue)
}

/// Sees every stored game of a run, resumed ones first, and returns the pairings to stop, each
/// with a line saying why (racing sweeps use it to drop points).
pub type GameHook<'a> = &'a mut (dyn FnMut(&GameRecord) -> Result<Vec<(usize, String)>> + Send);

/// Runs `plan` with `openings` (the book the plan describes). `cancel` stops it (signals).
pub async fn execute(
    plan: &RunPlan,
    openings: Vec<Opening>,
    opts: &RunOptions,
    settings: GameSettings,
    cancel: Cancel,
) -> Result<RunOutcome> {
    execute_with(plan, openings, opts, settings, cancel, None).await
}

/// [`execute`] with a [`GameHook`] that may stop pairings as games arrive. Pairs already started
/// are completed, so pentanomial counts stay whole.
pub async fn execute_with(
    plan: &RunPlan,
    openings: Vec<Opening>,
    opts: &RunOptions,
    settings: GameSettings,
    cancel: Cancel,
    mut hook: Option<GameHook<'_>>,
) -> Result<RunOutcome> {
    if openings.is_empty() {
        bail!("no openings to play");
    }
    let mut meter = crate::overhead::OverheadMeter::new();
    let (mut store, done) = if opts.resume {
        Store::resume(&opts.out_dir, plan)?
    } else {
        (Store::create(&opts.out_dir, plan)?, Vec::new())
    };
    let n_pairings = plan.pairings.len();
    let mut tally = Tally::new(n_pairings);
    let mut stopped_on_resume = Vec::new();
    for r in &done {
        tally.add(r);
        if let Some(h) = hook.as_mut() {
            stopped_on_resume.extend(h(r)?.into_iter().map(|(p, _)| p));
        }
    }

    // Pending games, in schedule order.
    let done_keys: std::collections::HashSet<_> = done.iter().map(GameRecord::key).collect();
    let jobs = build_schedule(n_pairings, plan.pairs, openings.len(), plan.book_order, plan.seed);
    let jobs: Vec<_> =
        jobs.into_iter().filter(|j| plan.shard.is_none_or(|s| s.contains(j))).collect();
    let total_games = jobs.len() as u64 * 2;
    let tasks: Vec<GameTask> = jobs
        .iter()
        .flat_map(|j| [0u8, 1].map(|game| GameTask { job: *j, game }))
        .filter(|t| {
            !done_keys.contains(&crate::schedule::GameKey {
                pairing: t.job.pairing,
                pair: t.job.pair,
                game: t.game,
            })
        })
        .collect();

    // Engines used by pairings with work left must all start before any game is played.
    let start_opts = StartOptions {
        log_dir: Some(opts.out_dir.join(LOG_DIR)),
        instance: 0,
        handshake_timeout: opts.handshake_timeout,
        protocol_log: opts.protocol_log,
    };
    let pools: Vec<Arc<EnginePool>> = plan
        .engines
        .iter()
        .map(|s| Arc::new(EnginePool::new(s.clone(), start_opts.clone())))
        .collect();
    let started_pairs = done.iter().map(|r| (r.pairing, r.pair));
    let ctx = Arc::new(WorkerContext::new(
        pools.clone(),
        plan.pairings.clone(),
        Arc::new(openings),
        settings,
        tasks,
        started_pairs,
        cancel.clone(),
    ));
    for p in 0..n_pairings {
        if sprt_decided(plan, &tally, p) {
            ctx.mark_decided(p);
        }
    }
    for p in stopped_on_resume {
        ctx.mark_decided(p);
    }
    let queued = ctx.queued();
    if queued > 0 {
        let mut set = tokio::task::JoinSet::new();
        for pool in &pools {
            let pool = pool.clone();
            set.spawn(async move {
                let e: UciEngine = pool.acquire().await?;
                let undeclared: Vec<String> = pool
                    .spec()
                    .options
                    .iter()
                    .filter(|(k, _)| !e.declared_options.iter().any(|d| d.eq_ignore_ascii_case(k)))
                    .map(|(k, _)| k.clone())
                    .collect();
                pool.release(e);
                Ok::<_, crate::uci_process::UciError>((pool.spec().name.clone(), undeclared))
            });
        }
        while let Some(r) = set.join_next().await {
            match r.map_err(|e| anyhow!("engine start task failed: {e}"))? {
                Ok((name, undeclared)) if !undeclared.is_empty() => eprintln!(
                    "warning: engine {name} does not declare option(s) {} (sent anyway)",
                    undeclared.join(", ")
                ),
                Ok(_) => {}
                Err(e) => {
                    cancel.cancel();
                    for p in &pools {
                        p.shutdown_idle().await;
                    }
                    return Err(anyhow!("{e}"));
                }
            }
        }
    }

    // The writer thread: games are written and synced off the async workers.
    let (wtx, wrx) = std::sync::mpsc::channel::<GameRecord>();
    let writer = std::thread::spawn(move || -> Result<Store> {
        for rec in wrx {
            store.append(&rec)?;
        }
        Ok(store)
    });

    let (tx, mut rx) = mpsc::unbounded_channel();
    let workers = opts.concurrency.max(1).min(queued.max(1));
    let mut handles = Vec::new();
    for _ in 0..workers {
        handles.push(tokio::spawn(worker_loop(ctx.clone(), tx.clone())));
    }
    drop(tx);

    let mut progress = Progress::new(opts.progress, total_games, tally.games());
    let mut records = done;
    let mut fatal: Option<String> = None;
    let engine_names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    while let Some(ev) = rx.recv().await {
        match ev {
            WorkerEvent::Finished(rec) => {
                let rec = *rec;
                tally.add(&rec);
                meter.add(&rec);
                let p = rec.pairing;
                if wtx.send(rec.clone()).is_err() {
                    fatal.get_or_insert_with(|| "the game writer stopped".into());
                    cancel.cancel();
                }
                if let Some(h) = hook.as_mut() {
                    match h(&rec) {
                        Ok(stopped) => {
                            for (q, why) in stopped {
                                ctx.mark_decided(q);
                                progress.println(&format!("{}: {why}", plan.pairings[q].label));
                            }
                        }
                        Err(e) => {
                            fatal.get_or_insert(e.to_string());
                            cancel.cancel();
                        }
                    }
                }
                records.push(rec);
                if sprt_decided(plan, &tally, p) {
                    ctx.mark_decided(p);
                }
                let status = crate::progress::Progress::status(&tally.pairings[p], plan.sprt);
                if hook.is_some() {
                    let label = &plan.pairings[p].label;
                    progress.update(tally.games(), &format!("{label}: {status}"));
                } else {
                    progress.update(tally.games(), &status);
                }
            }
            WorkerEvent::Fatal(msg) => {
                progress.println(&format!("error: {msg}"));
                fatal.get_or_insert(msg);
            }
        }
    }
    for h in handles {
        let _ = h.await;
    }
    progress.finish();
    drop(wtx);
    let store = writer.join().map_err(|_| anyhow!("the game writer panicked"))??;
    for p in &pools {
        p.shutdown_idle().await;
    }
    let engines_cpu = pools.iter().map(|p| p.retired_cpu()).sum::<Duration>();
    let overhead = meter.finish(cfg!(target_os = "linux").then_some(engines_cpu));
    if let Some(msg) = fatal {
        bail!("run stopped: {msg} (finished games are kept; continue with --resume)");
    }

    let stop = if cancel.is_cancelled() {
        StopReason::Interrupted
    } else if (plan.sprt.is_some() || hook.is_some()) && ctx.all_decided() {
        StopReason::Sprt
    } else {
        StopReason::Complete
    };
    store.rewrite_pgn(&records).context("rewriting games.pgn")?;
    let mut summary = summary_json(&plan.pairings, &engine_names, &tally, plan.sprt, stop.as_str());
    summary["runner_overhead"] = serde_json::to_value(&overhead)?;
    store.write_summary(&summary)?;
    let mut report = String::new();
    for (p, t) in plan.pairings.iter().zip(&tally.pairings) {
        report.push_str(&format_pairing(p, &engine_names, t, plan.sprt));
    }
    if overhead.games > 0 {
        report.push_str(&overhead.line());
        report.push('\n');
    }
    Ok(RunOutcome { records, tally, stop, dir: opts.out_dir.clone(), report, overhead })
}
