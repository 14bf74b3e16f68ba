//! `runner searchtest`: compare engine variants at fixed time (depth reached) or fixed depth
//! (nodes, speed-up, same move, same value).

use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use crate::cli::SearchTestArgs;
use crate::exit::Exit;
use crate::plan::engines::resolve_engine;
use crate::plan::epd_ops::load_move_ops;
use crate::plan::positions::{
    SampleOptions, Stage, TestPosition, epd_text, positions_for_run, sample_from_games,
};
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::probe::{Limit, timeout_from_secs};
use crate::play::probe_pool::STOPPING;
use crate::play::worker::default_concurrency;
use crate::report::html::live::LivePage;
use crate::searchtest::oracle::OraclePlan;
use crate::searchtest::oracle_spec::parse_oracle;
use crate::searchtest::variant::parse_variants;
use crate::searchtest::{SearchTestPlan, run as run_test};
use crate::store::default_out;

/// Runs the command; the exit code is `Done`, or `Interrupted` when stopped by a signal
/// (partial results).
pub async fn run(args: &SearchTestArgs) -> Result<Exit> {
    let variants = parse_variants(&args.variants).map_err(|e| anyhow!("--variant: {e}"))?;
    let limit = match (args.movetime, args.depth, args.nodes) {
        (Some(ms), None, None) => Limit::Movetime(ms),
        (None, Some(d), None) if (1..=64).contains(&d) => Limit::Depth(d),
        (None, Some(d), None) => bail!("--depth {d}: expected 1..=64"),
        (None, None, Some(n)) => Limit::Nodes(n),
        _ => bail!("give exactly one of --movetime MS, --depth D or --nodes N"),
    };
    let oracle_spec = args.oracle.as_deref().map(parse_oracle).transpose()?;
    let engine = resolve_engine(args.engine.as_deref())?;
    let (positions, positions_file, positions_epd) = match &args.positions_from {
        Some(from) => sampled_positions(args, from)?,
        None => (
            positions_for_run(&args.positions, (args.limit > 0).then_some(args.limit))?,
            args.positions.clone(),
            None,
        ),
    };
    let out = args.out.clone().unwrap_or_else(|| default_out("searchtest"));
    let concurrency = args.concurrency.unwrap_or_else(default_concurrency).max(1);
    let search_timeout = timeout_from_secs(args.timeout)?;
    let start_timeout = Duration::from_secs(10);
    let oracle = oracle_spec.map(|spec| OraclePlan {
        spec,
        cache: args.oracle_cache.clone(),
        concurrency,
        start_timeout,
        search_timeout,
        logs: Some(out.join("logs")),
    });
    let plan = SearchTestPlan {
        engine,
        variants,
        positions_file,
        positions_epd,
        positions,
        limit,
        out,
        concurrency,
        search_timeout,
        start_timeout,
        oracle,
        move_ops: if args.positions_from.is_some() {
            Default::default()
        } else {
            load_move_ops(&args.positions)?
        },
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), STOPPING);
    let outcome = run_test(plan, cancel.clone()).await?;
    outln!("{}", outcome.table);
    outln!(
        "results in {} (table.md, table.csv, summary.json, searches.jsonl{}){}",
        outcome.out.display(),
        if args.oracle.is_some() { ", oracle.json, oracle.svg, oracle-moves.jsonl" } else { "" },
        if outcome.partial { " - stopped early: partial results" } else { "" }
    );
    LivePage::new(outcome.out.clone()).finish_or_warn();
    Ok(Exit::done_unless(cancel.is_cancelled()))
}

/// `--positions-from DIR`: a seeded, stage-balanced draw from the folder's games.jsonl (the
/// sampler of `runner calibrate --sample-from`), and its EPD text for the output folder.
fn sampled_positions(
    args: &SearchTestArgs,
    from: &std::path::Path,
) -> Result<(Vec<TestPosition>, std::path::PathBuf, Option<String>)> {
    let games = if from.is_dir() { from.join("games.jsonl") } else { from.to_path_buf() };
    if !games.is_file() {
        bail!("--positions-from {}: no games.jsonl there", from.display());
    }
    let count = if args.limit == 0 { 300 } else { args.limit };
    let opts = SampleOptions { count, seed: args.seed, skip_plies: args.skip_plies };
    let rep = sample_from_games(&games, &opts)?;
    if rep.positions.is_empty() {
        bail!("--positions-from {}: no positions in its games", from.display());
    }
    let n = |s: Stage| rep.positions.iter().filter(|p| p.stage == s).count();
    let header = format!(
        "Drawn by runner searchtest --positions-from {} --limit {count} --seed {} --skip-plies {}\n\
         {} games; kept {} middlegame, {} endgame",
        from.display(),
        args.seed,
        args.skip_plies,
        rep.games,
        n(Stage::Middlegame),
        n(Stage::Endgame),
    );
    let epd = epd_text(&rep.positions, &header)?;
    let positions = rep
        .positions
        .into_iter()
        .enumerate()
        .map(|(index, p)| TestPosition { index, fen: p.fen, stage: p.stage })
        .collect();
    Ok((positions, games, Some(epd)))
}
