//! `runner searchtest`: compare engine variants at fixed time (depth reached) or fixed depth
//! (nodes, speed-up, same move, same value).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use clap::Args;

use super::calibrate::{
    DEFAULT_POSITIONS, cancel_on_signals, default_concurrency, default_out, positions_for_run,
    resolve_engine, timeout_from_secs,
};
use crate::calibrate::probe::Limit;
use crate::cancel::Cancel;
use crate::searchtest::variant::parse_variants;
use crate::searchtest::{SearchTestPlan, run as run_test};

#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("search_limit").required(true).args(["movetime", "depth"])))]
pub struct SearchTestArgs {
    /// Engine: `name=X,cmd=PATH[,option.NAME=V]...` or a name from configs/engines.toml
    /// (default: the bundled engine).
    #[arg(long, value_name = "SPEC")]
    pub engine: Option<String>,
    /// A variant `NAME:OPT=V[,OPT=V]...` (at least two; the first is the base of comparisons),
    /// e.g. --variant base:MPC=false --variant mpc:MPC=true.
    #[arg(long = "variant", value_name = "NAME:OPT=V,...", required = true)]
    pub variants: Vec<String>,
    /// Positions: EPD or PGN.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_POSITIONS)]
    pub positions: PathBuf,
    /// Use the first N positions (0 = all; the seed's depth test used about 300).
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub limit: usize,
    /// Fixed time per position (milliseconds): measures depth reached.
    #[arg(long, value_name = "MS")]
    pub movetime: Option<u64>,
    /// Fixed depth: measures nodes, speed-up, same move, same value.
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// Output directory (default results/searchtest-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Engine processes searching at once (default: number of CPUs).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// A search running this much longer than asked is a fault: the position is skipped.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub timeout: f64,
}

/// Runs the command; the exit code is 0, or 130 when stopped by a signal (partial results).
pub async fn run(args: &SearchTestArgs) -> Result<u8> {
    let variants = parse_variants(&args.variants).map_err(|e| anyhow!("--variant: {e}"))?;
    let limit = match (args.movetime, args.depth) {
        (Some(0), _) => bail!("--movetime must be at least 1 ms"),
        (Some(ms), None) => Limit::Movetime(ms),
        (None, Some(d)) if (1..=64).contains(&d) => Limit::Depth(d),
        (None, Some(d)) => bail!("--depth {d}: expected 1..=64"),
        _ => bail!("give exactly one of --movetime MS or --depth D"),
    };
    let engine = resolve_engine(args.engine.as_deref())?;
    let positions = positions_for_run(&args.positions, (args.limit > 0).then_some(args.limit))?;
    let plan = SearchTestPlan {
        engine,
        variants,
        positions_file: args.positions.clone(),
        positions,
        limit,
        out: args.out.clone().unwrap_or_else(|| default_out("searchtest")),
        concurrency: args.concurrency.unwrap_or_else(default_concurrency).max(1),
        search_timeout: timeout_from_secs(args.timeout)?,
        start_timeout: Duration::from_secs(10),
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone());
    let outcome = run_test(plan, cancel.clone()).await?;
    println!("{}", outcome.table);
    println!(
        "results in {} (table.md, table.csv, summary.json, searches.jsonl){}",
        outcome.out.display(),
        if outcome.partial { " - stopped early: partial results" } else { "" }
    );
    Ok(if cancel.is_cancelled() { 130 } else { 0 })
}
