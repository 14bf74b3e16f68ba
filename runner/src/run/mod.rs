//! The run layer, the core of the runner: executes a [`RunPlan`] through the lower layers. Opens
//! (or resumes) the store, checks that every engine starts, plays the pending games with the
//! worker pool, records each finished game as it arrives, stops on an SPRT decision, a game hook
//! or a signal, and summarises. Uses `plan`, `play`, `store`, `report` and the run's argument
//! groups of `cli` ([`args`]); experiments and `cmd/` use it.
//!
//! [`probes`] is the tools' counterpart: a run of position probes (calibrate, searchtest), each
//! result appended to a JSONL file as it arrives, with progress and page kept current.

pub mod args;
mod collect;
pub mod live;
pub(crate) mod prepare;
pub mod probes;
pub use prepare::{
    check_plan_engines, closest_option, start_options, start_options_without_logs, undeclared_error,
};
#[cfg(test)]
mod store_fuzz;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::ExecArgs;
use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::play::affinity;
use crate::play::cancel::Cancel;
use crate::play::game::GameSettings;
use crate::play::worker::{EnginePool, WorkerContext, default_concurrency};
use crate::report::overhead::{OverheadMeter, OverheadReport};
use crate::report::progress::ProgressMode;
use crate::report::script_lines::ScriptLines;
use crate::report::summary::{Tally, format_pairing, summary_json};
use crate::report::warnings;
use crate::store::GameRecord;
use crate::store::dir::resume_command;
use crate::store::pgnout::OutputFiles;
use collect::Played;
use live::LiveOutputs;

/// What a run prints when a signal stops it.
pub const INTERRUPTED: &str =
    "interrupted: stopping games and engines (finished games are kept; --resume continues)";

/// How to execute a plan (none of this changes which games are played).
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    pub concurrency: usize,
    /// `--affinity`: the CPU of each concurrency slot.
    pub affinity: Option<Vec<usize>>,
    pub resume: bool,
    /// Longest wait for `readyok`, and for `bestmove` under node or depth limits.
    pub stall_timeout: Duration,
    /// Longest wait for `uciok` at start.
    pub handshake_timeout: Duration,
    pub protocol_log: bool,
    pub progress: ProgressMode,
    /// Games in a row one engine may lose by its own fault before the run stops (0: never).
    pub fault_limit: u32,
    /// Options an engine must declare when its spec sets them (a sweep's parameters): an
    /// undeclared one stops the run before any game instead of a warning.
    pub required_options: Vec<String>,
    /// `--allow-unknown-options`: other undeclared options are sent with a warning, not refused.
    pub allow_unknown_options: bool,
    /// `--pgnout`, `--epdout`.
    pub files: OutputFiles,
    /// `--output`, `--ratinginterval`, `--scoreinterval`.
    pub lines: ScriptLines,
}

impl RunOptions {
    /// The options of `--concurrency`, `--resume`, `--stall-timeout`, `--start-timeout`,
    /// `--debug-log` and `--progress`, for a run in `out_dir`.
    pub fn from_exec(x: &ExecArgs, out_dir: PathBuf) -> Result<RunOptions> {
        let secs = |v: f64, what: &str| {
            if v.is_finite() && v > 0.0 && v < 1.0e6 {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(anyhow!("{what} must be a positive number of seconds"))
            }
        };
        let concurrency = match x.concurrency {
            Some(0) => bail!("--concurrency must be > 0"),
            Some(n) => n,
            None => default_concurrency(),
        };
        let (concurrency, affinity) = match x.affinity.as_deref() {
            None => (concurrency, None),
            Some(list) => {
                // `--affinity` alone: every allowed CPU; without --concurrency, one slot each.
                let list = Some(list).filter(|l| !l.is_empty());
                let cpus = affinity::slot_cpus(list, x.concurrency).map_err(|e| anyhow!(e))?;
                (cpus.len(), Some(cpus))
            }
        };
        Ok(RunOptions {
            out_dir,
            concurrency,
            affinity,
            resume: x.resume,
            stall_timeout: secs(x.stall_timeout, "--stall-timeout")?,
            handshake_timeout: secs(x.start_timeout, "--start-timeout")?,
            protocol_log: x.debug_log,
            progress: x.progress,
            fault_limit: x.fault_limit,
            required_options: Vec::new(),
            allow_unknown_options: x.allow_unknown_options,
            files: OutputFiles::from_flags(x.pgnout.as_deref(), x.epdout.as_deref())?,
            lines: ScriptLines::new(&x.output, x.ratinginterval, x.scoreinterval),
        })
    }
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
    pub overhead: OverheadReport,
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
    execute_with(plan, openings, opts, settings, cancel, None, None).await
}

/// [`execute`] with a [`GameHook`] that may stop pairings as games arrive (pairs already started
/// are completed, so pentanomial counts stay whole) and [`LiveOutputs`] written as games arrive.
pub async fn execute_with(
    plan: &RunPlan,
    openings: Vec<Opening>,
    opts: &RunOptions,
    settings: GameSettings,
    cancel: Cancel,
    mut hook: Option<GameHook<'_>>,
    live: Option<LiveOutputs<'_>>,
) -> Result<RunOutcome> {
    if openings.is_empty() {
        bail!("no openings to play");
    }
    let meter = OverheadMeter::new();
    let (store, done) = prepare::open_store(plan, opts)?;
    let (tally, stopped_on_resume) = prepare::replay_done(plan, &done, &mut hook)?;
    let pending = prepare::pending_games(plan, openings.len(), &done);
    if opts.resume {
        errln!("resuming: {} of {} games already played", done.len(), pending.total_games);
    }
    let pools = prepare::engine_pools(plan, opts);
    let slot_cpus = opts.affinity.clone();
    let ctx = prepare::worker_context(
        plan,
        &pools,
        openings,
        settings,
        pending.tasks,
        &done,
        &cancel,
        slot_cpus,
    );
    prepare::mark_decided(plan, &ctx, &tally, stopped_on_resume);
    if ctx.queued() > 0 {
        prepare::check_engines_start(
            &pools,
            &opts.required_options,
            opts.allow_unknown_options,
            &cancel,
        )
        .await?;
    }
    let played = collect::play_pending(
        plan,
        opts,
        &ctx,
        store,
        tally,
        done,
        meter,
        hook,
        live,
        pending.total_games,
    )
    .await?;
    finish(plan, opts, &pools, &cancel, &ctx, played).await
}

/// After the last game: engines shut down, the store completed (games.pgn in schedule order,
/// summary.json) and the summary text.
async fn finish(
    plan: &RunPlan,
    opts: &RunOptions,
    pools: &[std::sync::Arc<EnginePool>],
    cancel: &Cancel,
    ctx: &WorkerContext,
    played: Played,
) -> Result<RunOutcome> {
    let Played { store, records, tally, meter, fatal, hooked, replayed } = played;
    for p in pools {
        p.shutdown_idle().await;
    }
    let engines_cpu = pools.iter().map(|p| p.retired_cpu()).sum::<Duration>();
    let overhead = meter.finish(cfg!(target_os = "linux").then_some(engines_cpu));
    if let Some(msg) = fatal {
        bail!(
            "run stopped: {msg} (finished games are kept; continue with: {})",
            resume_command(&opts.out_dir)
        );
    }
    let stop = if cancel.is_cancelled() {
        StopReason::Interrupted
    } else if (plan.sprt.is_some() || hooked) && ctx.all_decided() {
        StopReason::Sprt
    } else {
        StopReason::Complete
    };
    store.rewrite_pgn(&records).context("rewriting games.pgn")?;
    let engine_names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let mut summary = summary_json(&plan.pairings, &engine_names, &tally, plan.sprt, stop.as_str());
    summary.runner_overhead = Some(overhead.clone());
    summary.affinity = opts.affinity.clone();
    let mut warned = warnings::fault_warnings(&records);
    warned.extend(warnings::starvation_warnings(plan, &records));
    // Replayed games were already warned about as they happened, and the pairings' text below
    // says the same-moves note: the summary keeps them too.
    let same = crate::report::summary::same_moves_warnings(&plan.pairings, &tally);
    summary.warnings = Some(warned.iter().chain(&replayed).chain(&same).cloned().collect());
    store.write_summary(&summary)?;
    let mut report = String::new();
    for w in &warned {
        report.push_str(&format!("warning: {w}\n"));
    }
    for (p, t) in plan.pairings.iter().zip(&tally.pairings) {
        report.push_str(&format_pairing(p, &engine_names, t, plan.sprt));
    }
    if overhead.games > 0 {
        report.push_str(&overhead.line());
        report.push('\n');
    }
    if let Some(cpus) = &opts.affinity {
        let slots: Vec<String> =
            cpus.iter().enumerate().map(|(i, c)| format!("slot {} CPU {c}", i + 1)).collect();
        report.push_str(&format!("affinity: {}\n", slots.join(", ")));
    }
    Ok(RunOutcome { records, tally, stop, dir: opts.out_dir.clone(), report, overhead })
}
