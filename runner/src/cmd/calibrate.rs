//! `runner calibrate`: fit the MPC model of an engine (a, b, sigma, r per depth pair and stage),
//! or, with `--sample-from`, draw a stage-balanced position set from self-play games.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use crate::calibrate::pairs::parse_pairs;
use crate::calibrate::run::{CalibratePlan, run as run_calibration};
use crate::cli::CalibrateArgs;
use crate::exit::Exit;
use crate::plan::engines::resolve_engine;
use crate::plan::positions::{
    SampleOptions, Stage, epd_text, positions_for_run, sample_from_games,
};
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::probe::timeout_from_secs;
use crate::play::probe_pool::{PoolConfig, STOPPING};
use crate::play::worker::default_concurrency;
use crate::report::html::live::LivePage;
use crate::store::default_out;
use crate::store::files::write_output;

/// Runs the command; the exit code is `Done`, or `Interrupted` when stopped by a signal
/// (partial results).
pub async fn run(args: &CalibrateArgs) -> Result<Exit> {
    if let (Some(games), Some(out)) = (&args.sample_from, &args.write_positions) {
        return sample(args, games, out).map(|()| Exit::Done);
    }
    let pairs = parse_pairs(&args.pairs).map_err(|e| anyhow!("--pairs: {e}"))?;
    if args.max_abs <= 0 {
        bail!("--max-abs must be a positive number of centipawns");
    }
    let engine = resolve_engine(args.engine.as_deref())?;
    let positions = positions_for_run(&args.positions, args.limit)?;
    let out = args.out.clone().unwrap_or_else(|| default_out("calibrate"));
    let plan = CalibratePlan {
        engine,
        positions_file: args.positions.clone(),
        positions,
        pairs,
        max_abs: args.max_abs,
        mode: args.mode,
        out,
        pool: PoolConfig {
            concurrency: args.concurrency.unwrap_or_else(default_concurrency).max(1),
            search_timeout: timeout_from_secs(args.timeout)?,
            start_timeout: Duration::from_secs(10),
            logs: None,
        },
        resume: args.resume,
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), STOPPING);
    let outcome = run_calibration(plan, cancel.clone()).await?;
    outln!("{}", outcome.table);
    if outcome.rows.is_empty() {
        errln!(
            "warning: no depth pair could be fitted (see summary.json, not_fitted): params.json \
             is empty and an engine will refuse it; use more positions"
        );
    }
    outln!(
        "{} positions searched, {} faults{}; results in {} (params.json, table.md, pairs.jsonl, \
         scatter_*.svg, summary.json)",
        outcome.searched,
        outcome.faults,
        if outcome.partial {
            " - stopped early: partial results (continue with --resume)"
        } else {
            ""
        },
        outcome.out.display()
    );
    LivePage::new(outcome.out.clone()).finish_or_warn();
    Ok(Exit::done_unless(cancel.is_cancelled()))
}

fn sample(args: &CalibrateArgs, games: &Path, out: &Path) -> Result<()> {
    let opts =
        SampleOptions { count: args.sample_count, seed: args.seed, skip_plies: args.skip_plies };
    let rep = sample_from_games(games, &opts)?;
    if rep.positions.is_empty() {
        bail!("no positions found in {} (is it a runner games.jsonl?)", games.display());
    }
    let count = |s: Stage| rep.positions.iter().filter(|p| p.stage == s).count();
    let header = format!(
        "Drawn by: runner calibrate --sample-from {} --write-positions {} --sample-count {} --seed {} --skip-plies {}\n\
         {} games read ({} unreadable lines); candidates: {} middlegame, {} endgame; kept {} middlegame, {} endgame",
        games.display(),
        out.display(),
        args.sample_count,
        args.seed,
        args.skip_plies,
        rep.games,
        rep.bad_lines,
        rep.candidates_middlegame,
        rep.candidates_endgame,
        count(Stage::Middlegame),
        count(Stage::Endgame),
    );
    write_output(out, epd_text(&rep.positions, &header)?.as_bytes())?;
    outln!("{header}");
    outln!("wrote {} positions to {}", rep.positions.len(), out.display());
    Ok(())
}
