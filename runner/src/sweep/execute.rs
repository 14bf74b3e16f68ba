//! Executing a sweep with `--adaptive` (racing): the runner core's run loop (`crate::run`), with
//! one addition: after every stored game the [`Tracker`] may stop points, whose game pairs not yet
//! started are then skipped (pairs already started are completed, so the pentanomial counts stay
//! whole). Everything else (store, engine pools, workers, writer thread, resume, signals) is the
//! runner core's. Sweeps without `--adaptive` use `crate::run::execute` unchanged (its per-pairing
//! SPRT stop is all they need).

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use tokio::sync::mpsc;

use crate::cancel::Cancel;
use crate::game::GameSettings;
use crate::openings::Opening;
use crate::progress::Progress;
use crate::run::{RunOptions, StopReason};
use crate::schedule::{GameKey, build_schedule};
use crate::store::{GameRecord, LOG_DIR, RunPlan, Store};
use crate::summary::{Tally, summary_json};
use crate::uci_process::{StartOptions, UciEngine};
use crate::worker::{EnginePool, GameTask, WorkerContext, WorkerEvent, worker_loop};

use super::tracker::Tracker;

/// What a racing run leaves behind (the stored games, in store order, and why it stopped).
#[derive(Debug)]
pub struct RacingOutcome {
    pub records: Vec<GameRecord>,
    pub stop: StopReason,
}

/// Runs `plan`, letting `tracker` (fresh, built for the plan's pairings) stop points as games
/// arrive. On return the tracker has seen every stored game, in store order.
pub async fn execute_racing(
    plan: &RunPlan,
    openings: Vec<Opening>,
    opts: &RunOptions,
    settings: GameSettings,
    cancel: Cancel,
    tracker: &mut Tracker,
) -> Result<RacingOutcome> {
    if openings.is_empty() {
        bail!("no openings to play");
    }
    let (mut store, done) = if opts.resume {
        Store::resume(&opts.out_dir, plan)?
    } else {
        (Store::create(&opts.out_dir, plan)?, Vec::new())
    };
    let n_pairings = plan.pairings.len();
    let mut tally = Tally::new(n_pairings);
    for r in &done {
        tally.add(r);
        tracker.record_game(r)?;
    }

    let done_keys: HashSet<GameKey> = done.iter().map(GameRecord::key).collect();
    let jobs = build_schedule(n_pairings, plan.pairs, openings.len(), plan.book_order, plan.seed);
    let jobs: Vec<_> =
        jobs.into_iter().filter(|j| plan.shard.is_none_or(|s| s.contains(j))).collect();
    let total_games = jobs.len() as u64 * 2;
    let tasks: Vec<GameTask> = jobs
        .iter()
        .flat_map(|j| [0u8, 1].map(|game| GameTask { job: *j, game }))
        .filter(|t| {
            !done_keys.contains(&GameKey { pairing: t.job.pairing, pair: t.job.pair, game: t.game })
        })
        .collect();

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
    let ctx = Arc::new(WorkerContext::new(
        pools.clone(),
        plan.pairings.clone(),
        Arc::new(openings),
        settings,
        tasks,
        done.iter().map(|r| (r.pairing, r.pair)),
        cancel.clone(),
    ));
    for p in 0..n_pairings {
        if !tracker.is_active(p) {
            ctx.mark_decided(p);
        }
    }
    if ctx.queued() > 0 {
        // Every engine must start before any game is played.
        let mut set = tokio::task::JoinSet::new();
        for pool in &pools {
            let pool = pool.clone();
            set.spawn(async move {
                let e: Result<UciEngine, _> = pool.acquire().await;
                e.map(|e| pool.release(e))
            });
        }
        while let Some(r) = set.join_next().await {
            if let Err(e) = r.map_err(|e| anyhow!("engine start task failed: {e}"))? {
                cancel.cancel();
                for p in &pools {
                    p.shutdown_idle().await;
                }
                return Err(anyhow!("{e}"));
            }
        }
    }

    let (wtx, wrx) = std::sync::mpsc::channel::<GameRecord>();
    let writer = std::thread::spawn(move || -> Result<Store> {
        for rec in wrx {
            store.append(&rec)?;
        }
        Ok(store)
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let workers = opts.concurrency.max(1).min(ctx.queued().max(1));
    let mut handles = Vec::new();
    for _ in 0..workers {
        handles.push(tokio::spawn(worker_loop(ctx.clone(), tx.clone())));
    }
    drop(tx);

    let mut progress = Progress::new(opts.progress, total_games, tally.games());
    let mut records = done;
    let mut fatal: Option<String> = None;
    while let Some(ev) = rx.recv().await {
        match ev {
            WorkerEvent::Finished(rec) => {
                let rec = *rec;
                tally.add(&rec);
                if wtx.send(rec.clone()).is_err() {
                    fatal.get_or_insert_with(|| "the game writer stopped".into());
                    cancel.cancel();
                }
                match tracker.record_game(&rec) {
                    Ok(stopped) => {
                        for p in stopped {
                            ctx.mark_decided(p);
                            progress.println(&format!(
                                "{}: {}",
                                plan.pairings[p].label,
                                tracker.status()[p].short()
                            ));
                        }
                    }
                    Err(e) => {
                        fatal.get_or_insert(e.to_string());
                        cancel.cancel();
                    }
                }
                let p = rec.pairing;
                records.push(rec);
                let status = Progress::status(&tally.pairings[p], plan.sprt);
                progress.update(tally.games(), &format!("{}: {status}", plan.pairings[p].label));
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
    if let Some(msg) = fatal {
        bail!("run stopped: {msg} (finished games are kept; continue with --resume)");
    }
    let stop = if cancel.is_cancelled() {
        StopReason::Interrupted
    } else if tracker.all_stopped() {
        StopReason::Sprt
    } else {
        StopReason::Complete
    };
    store.rewrite_pgn(&records).context("rewriting games.pgn")?;
    let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    store.write_summary(&summary_json(&plan.pairings, &names, &tally, plan.sprt, stop.as_str()))?;
    Ok(RacingOutcome { records, stop })
}
