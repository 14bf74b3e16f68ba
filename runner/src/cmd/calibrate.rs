//! `runner calibrate`: fit the MPC model of an engine (a, b, sigma, r per depth pair and stage),
//! or, with `--sample-from`, draw a stage-balanced position set from self-play games.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;

use crate::calibrate::pairs::parse_pairs;
use crate::calibrate::positions::{
    SampleOptions, Stage, TestPosition, load_positions, sample_from_games, write_epd,
};
use crate::calibrate::run::{CalibratePlan, ScoreMode, run as run_calibration};
use crate::cancel::Cancel;
use crate::cli::EngineArgs;
use crate::cmd::match_cmd::resolve_engines;
use crate::engine_spec::EngineSpec;

/// The project's default position set (see configs/positions/README.md).
pub const DEFAULT_POSITIONS: &str = "configs/positions/default.epd";

#[derive(Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// Engine: `name=X,cmd=PATH[,arg=A][,option.NAME=V]...` or a name from configs/engines.toml
    /// (default: the bundled engine). Its `MPC` option, when it has one, is switched off.
    #[arg(long, value_name = "SPEC")]
    pub engine: Option<String>,
    /// Positions to search: EPD (one per line) or PGN (the end of each game's mainline).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_POSITIONS)]
    pub positions: PathBuf,
    /// Use only the first N positions of the file.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Depth pairs SHALLOW:DEEP to fit.
    #[arg(long, value_name = "LIST", default_value = "2:6,3:7,4:8,3:9,4:10")]
    pub pairs: String,
    /// Fit only points whose shallow score is within +-CP (the seed used 300).
    #[arg(long, value_name = "CP", default_value_t = 300)]
    pub max_abs: i32,
    /// How each depth's score is read: from one iterative-deepening search (its per-depth info
    /// lines), or from a separate search per depth.
    #[arg(long, value_enum, default_value = "iterative")]
    pub mode: ScoreMode,
    /// Output directory (default results/calibrate-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Engine processes searching at once (default: number of CPUs).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// A search taking longer than this is a fault: the position is skipped.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub timeout: f64,
    /// Continue a stopped run in --out (positions already searched are kept).
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Instead of calibrating: draw positions from a runner games.jsonl ...
    #[arg(long, value_name = "GAMES_JSONL", requires = "write_positions")]
    pub sample_from: Option<PathBuf>,
    /// ... and write them to this EPD file.
    #[arg(long, value_name = "FILE", requires = "sample_from")]
    pub write_positions: Option<PathBuf>,
    /// Number of positions to draw (half middlegame, half endgame when there are enough).
    #[arg(long, value_name = "N", default_value_t = 3000)]
    pub sample_count: usize,
    /// Seed of the draw.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Plies skipped at the start of every game.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub skip_plies: usize,
}

/// Resolves `--engine` like `runner match` does (none: the bundled engine; a spec with `cmd=`;
/// or a name from the built-ins and configs/engines.toml).
pub fn resolve_engine(spec: Option<&str>) -> Result<EngineSpec> {
    let args = EngineArgs {
        engines: spec.into_iter().map(str::to_string).collect(),
        ..Default::default()
    };
    resolve_engines(&args)?.into_iter().next().ok_or_else(|| anyhow!("no engine to run"))
}

/// Cancels `cancel` on Ctrl-C or SIGTERM (work in flight is dropped; results so far are kept).
pub fn cancel_on_signals(cancel: Cancel) {
    tokio::spawn(async move {
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
        }
        eprintln!("stopping: writing results of the positions searched so far");
        cancel.cancel();
    });
}

/// Positions from `path`, cut to the first `limit`; an empty set is an error.
pub fn positions_for_run(path: &Path, limit: Option<usize>) -> Result<Vec<TestPosition>> {
    if !path.exists() {
        bail!(
            "positions file {} not found: pass --positions FILE (EPD or PGN), or make one with \
             `runner calibrate --sample-from results/RUN/games.jsonl --write-positions FILE`",
            path.display()
        );
    }
    let mut positions = load_positions(path)?;
    if let Some(n) = limit {
        positions.truncate(n);
    }
    if positions.is_empty() {
        bail!("no positions to search in {}", path.display());
    }
    Ok(positions)
}

/// Default output directory `results/<what>-<UTC timestamp>`.
pub fn default_out(what: &str) -> PathBuf {
    PathBuf::from("results").join(format!("{what}-{}", chrono::Utc::now().format("%Y%m%d-%H%M%S")))
}

pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn timeout_from_secs(secs: f64) -> Result<Duration> {
    if !(secs.is_finite() && secs > 0.0) {
        bail!("--timeout must be a positive number of seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Runs the command; the exit code is 0, or 130 when stopped by a signal (partial results).
pub async fn run(args: &CalibrateArgs) -> Result<u8> {
    if let (Some(games), Some(out)) = (&args.sample_from, &args.write_positions) {
        return sample(args, games, out).map(|()| 0);
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
        concurrency: args.concurrency.unwrap_or_else(default_concurrency).max(1),
        search_timeout: timeout_from_secs(args.timeout)?,
        start_timeout: Duration::from_secs(10),
        resume: args.resume,
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone());
    let outcome = run_calibration(plan, cancel.clone()).await?;
    println!("{}", outcome.table);
    if outcome.rows.is_empty() {
        eprintln!(
            "warning: no depth pair could be fitted (see summary.json, not_fitted): params.json \
             is empty and an engine will refuse it; use more positions"
        );
    }
    println!(
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
    Ok(if cancel.is_cancelled() { 130 } else { 0 })
}

fn sample(args: &CalibrateArgs, games: &Path, out: &Path) -> Result<()> {
    if args.sample_count == 0 {
        bail!("--sample-count must be at least 1");
    }
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
    write_epd(out, &rep.positions, &header).with_context(|| "writing positions")?;
    println!("{header}");
    println!("wrote {} positions to {}", rep.positions.len(), out.display());
    Ok(())
}
