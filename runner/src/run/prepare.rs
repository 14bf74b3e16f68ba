//! Before the first game: the store opened (or resumed, with the games already played), the
//! pending games in schedule order, the engine pools and the workers' shared state, and a check
//! that every engine with work left starts.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use stats::Verdict;

use super::{GameHook, RunOptions};
use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::{GameKey, build_schedule};
use crate::play::cancel::Cancel;
use crate::play::game::GameSettings;
use crate::play::uci::{StartOptions, UciEngine, UciError};
use crate::play::worker::{EnginePool, GameTask, WorkerContext};
use crate::report::summary::Tally;
use crate::store::{GameRecord, LOG_DIR, Store};

/// Whether pairing `pairing` reached an SPRT decision.
pub(super) fn sprt_decided(plan: &RunPlan, tally: &Tally, pairing: usize) -> bool {
    plan.sprt.is_some()
        && tally.pairings[pairing]
            .summarize(plan.sprt)
            .and_then(|s| s.sprt)
            .is_some_and(|r| r.verdict != Verdict::Continue)
}

/// The store of a new run, or of a resumed one with its finished games.
pub(super) fn open_store(plan: &RunPlan, opts: &RunOptions) -> Result<(Store, Vec<GameRecord>)> {
    let (mut store, done) = if opts.resume {
        Store::resume(&opts.out_dir, plan)?
    } else {
        (Store::create_with_affinity(&opts.out_dir, plan, opts.affinity.as_deref())?, Vec::new())
    };
    store.open_extra(&opts.files, &done, opts.resume)?;
    Ok((store, done))
}

/// The tally of the games already played, and the pairings the hook stops on seeing them.
pub(super) fn replay_done(
    plan: &RunPlan,
    done: &[GameRecord],
    hook: &mut Option<GameHook<'_>>,
) -> Result<(Tally, Vec<usize>)> {
    let mut tally = Tally::new(plan.pairings.len());
    let mut stopped = Vec::new();
    for r in done {
        tally.add(r);
        if let Some(h) = hook.as_mut() {
            stopped.extend(h(r)?.into_iter().map(|(p, _)| p));
        }
    }
    Ok((tally, stopped))
}

/// The games left to play, in schedule order, and the games of this run's (shard's) schedule.
pub(crate) struct Pending {
    pub tasks: Vec<GameTask>,
    pub total_games: u64,
}

pub(crate) fn pending_games(plan: &RunPlan, openings: usize, done: &[GameRecord]) -> Pending {
    let done_keys: HashSet<GameKey> = done.iter().map(GameRecord::key).collect();
    let (n, order) = (plan.pairings.len(), plan.book_order);
    let jobs = build_schedule(n, plan.pairs, openings, order, plan.seed, &plan.scheduling);
    let jobs: Vec<_> =
        jobs.into_iter().filter(|j| plan.shard.is_none_or(|s| s.contains(j))).collect();
    let tasks = jobs
        .iter()
        .flat_map(|j| {
            [0u8, 1].map(|game| GameTask {
                job: *j,
                game,
                first_white: plan.scheduling.first_is_white(game),
            })
        })
        .filter(|t| {
            !done_keys.contains(&GameKey { pairing: t.job.pairing, pair: t.job.pair, game: t.game })
        })
        .collect();
    Pending { tasks, total_games: jobs.len() as u64 * 2 }
}

/// How the engines of `plan` are started in a run with `opts` (logs in the run's folder).
pub fn start_options(plan: &RunPlan, opts: &RunOptions) -> StartOptions {
    StartOptions {
        log_dir: Some(opts.out_dir.join(LOG_DIR)),
        instance: 0,
        handshake_timeout: opts.handshake_timeout,
        protocol_log: opts.protocol_log,
        chess960: plan.variant.is_chess960(),
        ..StartOptions::default()
    }
}

/// Starts every engine of `plan` once, without a results folder (no logs): `runner submit`'s
/// check that a plan's engines start and declare their options (every one unless
/// `allow_unknown`, the `required` ones always), the same check ([`check_engines_start`]) a run
/// makes before its first game; the engines are stopped after.
pub async fn check_plan_engines(
    plan: &RunPlan,
    handshake_timeout: std::time::Duration,
    required: &[String],
    allow_unknown: bool,
) -> Result<()> {
    let start_opts = start_options_without_logs(plan, handshake_timeout);
    let pools: Vec<Arc<EnginePool>> = plan
        .engines
        .iter()
        .map(|s| Arc::new(EnginePool::new(s.clone(), start_opts.clone())))
        .collect();
    let checked = check_engines_start(&pools, required, allow_unknown, &Cancel::new()).await;
    for p in &pools {
        p.shutdown_idle().await;
    }
    checked
}

/// How the engines of `plan` are started outside a results folder (no logs): `runner submit`'s
/// check, a fleet worker's games.
pub fn start_options_without_logs(
    plan: &RunPlan,
    handshake_timeout: std::time::Duration,
) -> StartOptions {
    StartOptions {
        log_dir: None,
        handshake_timeout,
        chess960: plan.variant.is_chess960(),
        ..StartOptions::default()
    }
}

/// One process pool per engine of the plan.
pub(super) fn engine_pools(plan: &RunPlan, opts: &RunOptions) -> Vec<Arc<EnginePool>> {
    let start_opts = start_options(plan, opts);
    plan.engines.iter().map(|s| Arc::new(EnginePool::new(s.clone(), start_opts.clone()))).collect()
}

/// The workers' shared state: the queue of `tasks`, with the pairs already started complete.
#[allow(clippy::too_many_arguments)]
pub(super) fn worker_context(
    plan: &RunPlan,
    pools: &[Arc<EnginePool>],
    openings: Vec<Opening>,
    settings: GameSettings,
    tasks: Vec<GameTask>,
    done: &[GameRecord],
    cancel: &Cancel,
    slot_cpus: Option<Vec<usize>>,
) -> Arc<WorkerContext> {
    let mut ctx = WorkerContext::new(
        pools.to_vec(),
        plan.pairings.clone(),
        Arc::new(openings),
        settings,
        tasks,
        done.iter().map(|r| (r.pairing, r.pair)),
        cancel.clone(),
    );
    ctx.slot_cpus = slot_cpus;
    Arc::new(ctx)
}

/// Stops new pairs of pairings already decided (SPRT) or stopped by the hook on resume.
pub(super) fn mark_decided(
    plan: &RunPlan,
    ctx: &WorkerContext,
    tally: &Tally,
    stopped: Vec<usize>,
) {
    for p in 0..plan.pairings.len() {
        if sprt_decided(plan, tally, p) {
            ctx.mark_decided(p);
        }
    }
    for p in stopped {
        ctx.mark_decided(p);
    }
}

/// The declared option closest to `name` (case aside), when one is close enough to be a likely
/// typo of it (`tmid` -> `t_mid`).
pub fn closest_option<'a>(name: &str, declared: &'a [String]) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    declared
        .iter()
        .map(|d| (strsim::jaro_winkler(&name, &d.to_ascii_lowercase()), d))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d.as_str())
}

/// The one-line error for options engine `name` sets but does not declare: each with the closest
/// declared option, what it declares, and the flag that sends them anyway.
pub fn undeclared_error(name: &str, undeclared: &[String], declared: &[String]) -> String {
    let each: Vec<String> = undeclared
        .iter()
        .map(|u| match closest_option(u, declared) {
            Some(c) => format!("{u} (did you mean {c}?)"),
            None => u.clone(),
        })
        .collect();
    let list = if declared.is_empty() { "none".to_string() } else { declared.join(", ") };
    format!(
        "engine {name} does not declare the option(s) {}; it declares: {list} \
         (--allow-unknown-options sends them anyway)",
        each.join(", ")
    )
}

/// Starts every engine once before any game: one that cannot start stops the run with its error;
/// an option an engine does not declare stops the run before any game too (a typo would
/// otherwise play the whole run without it), naming the closest declared option; with
/// `allow_unknown` it is warned about and sent anyway, except the `required` ones (a sweep's
/// parameters), which stop the run always.
pub(super) async fn check_engines_start(
    pools: &[Arc<EnginePool>],
    required: &[String],
    allow_unknown: bool,
    cancel: &Cancel,
) -> Result<()> {
    let mut set = tokio::task::JoinSet::new();
    for pool in pools {
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
            let declared = e.declared_options.clone();
            pool.release(e);
            Ok::<_, UciError>((pool.spec().name.clone(), undeclared, declared))
        });
    }
    let mut refused: Option<String> = None;
    loop {
        let r = tokio::select! {
            biased;
            // Ctrl-C while engines start (a slow handshake): stop waiting; dropping the tasks
            // kills the engines they were starting.
            _ = cancel.cancelled() => {
                set.abort_all();
                while set.join_next().await.is_some() {}
                return Ok(());
            }
            r = set.join_next() => match r {
                Some(r) => r,
                None => break,
            },
        };
        match r.map_err(|e| anyhow!("engine start task failed: {e}"))? {
            Ok((name, undeclared, declared)) if !undeclared.is_empty() => {
                let missing: Vec<&str> = undeclared
                    .iter()
                    .filter(|u| required.iter().any(|r| r.eq_ignore_ascii_case(u)))
                    .map(String::as_str)
                    .collect();
                if !missing.is_empty() {
                    refused.get_or_insert(format!(
                        "engine {name} does not declare the swept option {}: a typo? \
                         (it declares: {})",
                        missing.join(", "),
                        declared.join(", ")
                    ));
                } else if allow_unknown {
                    errln!(
                        "warning: engine {name} does not declare option(s) {} (sent anyway: \
                         --allow-unknown-options)",
                        undeclared.join(", ")
                    );
                } else {
                    refused.get_or_insert(undeclared_error(&name, &undeclared, &declared));
                }
            }
            Ok(_) => {}
            Err(e) => {
                cancel.cancel();
                for p in pools {
                    p.shutdown_idle().await;
                }
                return Err(anyhow!("{e}"));
            }
        }
    }
    if let Some(msg) = refused {
        cancel.cancel();
        for p in pools {
            p.shutdown_idle().await;
        }
        bail!("{msg}");
    }
    Ok(())
}
