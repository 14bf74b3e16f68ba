//! `runner searchtest`: compares engine variants (sets of UCI option values) on the same
//! positions, at fixed time (depth reached, as the Crafty seed measured MPC's speed) or at fixed
//! depth (nodes, speed-up, same best move, same value, as Buro's ProbCut table).

pub mod oracle;
pub mod oracle_cache;
pub mod oracle_plot;
pub mod oracle_report;
pub mod oracle_spec;
pub mod suite;
pub mod summary;
pub mod table;
pub mod variant;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::plan::engine_spec::{EngineSpec, set_option};
use crate::plan::positions::{Stage, TestPosition};
use crate::play::cancel::Cancel;
use crate::play::probe::Limit;
use crate::play::probe_pool::{EngineSetup, Job, JobResult, PoolConfig, check_setups};
use crate::run::probes::{ProbeOutput, probe};
use crate::store::formats::{OracleFile, SearchtestPlanFile, SearchtestSummary};
use summary::{SearchRecord, VariantSummary, parse_mpc_counters, summarize};
use variant::Variant;

/// Everything a search test needs.
#[derive(Clone, Debug)]
pub struct SearchTestPlan {
    pub engine: EngineSpec,
    pub variants: Vec<Variant>,
    pub positions_file: PathBuf,
    pub positions: Vec<TestPosition>,
    /// The positions as EPD, written to positions.epd (drawn with --positions-from).
    pub positions_epd: Option<String>,
    pub limit: Limit,
    pub out: PathBuf,
    pub concurrency: usize,
    pub search_timeout: Duration,
    pub start_timeout: Duration,
    /// `--oracle`: score every chosen move with this engine (after all variants searched).
    pub oracle: Option<oracle::OraclePlan>,
    /// EPD `bm`/`am` of the positions that have them (by FEN): solve rates per variant.
    pub move_ops: std::collections::HashMap<String, crate::plan::epd_ops::MoveOps>,
}

#[derive(Debug)]
pub struct SearchTestOutcome {
    pub summaries: Vec<VariantSummary>,
    pub table: String,
    pub partial: bool,
    pub out: PathBuf,
}

/// Runs the test: every position is searched by every variant (position by position, variants
/// interleaved, so a stopped run compares like with like), each search after `ucinewgame`.
pub async fn run(plan: SearchTestPlan, cancel: Cancel) -> Result<SearchTestOutcome> {
    let out = &plan.out;
    crate::run::probes::prepare_folder(out, true)?;
    let searches_path = out.join("searches.jsonl");
    if searches_path.exists() {
        bail!("{} already holds a search test: choose another --out", out.display());
    }
    let setups = setups(&plan);
    let cfg = PoolConfig {
        concurrency: plan.concurrency.max(1),
        start_timeout: plan.start_timeout,
        search_timeout: plan.search_timeout,
        logs: Some(out.join("logs")),
    };
    for (v, notes) in plan.variants.iter().zip(check_setups(&setups, &cfg).await?) {
        for n in notes {
            errln!("variant {}: {n}", v.name);
        }
    }
    // The oracle is started once before any search, so a missing one fails at once.
    let oracle_id = match &plan.oracle {
        Some(o) => Some(oracle::check(o).await?),
        None => None,
    };
    write_plan(&plan, cfg.concurrency)?;

    let jobs = jobs(&plan);
    let output = ProbeOutput {
        out,
        records: &searches_path,
        label: "searchtest",
        total: jobs.len() as u64,
        already: 0,
        faults: 0,
    };
    let probed = probe(output, setups, jobs, cfg, cancel.clone(), |res| record(&plan, res)).await?;
    let records = probed.records;
    let outcome = write_results(&plan, &records, probed.faults, oracle_id, &cancel).await?;
    probed.page.wait();
    probed.pool?;
    Ok(outcome)
}

/// One engine setup per variant: the engine with the variant's options, named after both.
fn setups(plan: &SearchTestPlan) -> Vec<EngineSetup> {
    plan.variants
        .iter()
        .map(|v| {
            let mut spec = plan.engine.clone();
            for (k, val) in &v.options {
                set_option(&mut spec.options, k, val);
            }
            spec.name = format!("{}-{}", plan.engine.name, v.name);
            EngineSetup { label: v.name.clone(), spec, if_declared: Vec::new() }
        })
        .collect()
}

/// plan.json (and positions.epd when the positions were drawn).
fn write_plan(plan: &SearchTestPlan, concurrency: usize) -> Result<()> {
    let plan_json = SearchtestPlanFile {
        engine: plan.engine.clone(),
        variants: plan.variants.clone(),
        positions_file: plan.positions_file.display().to_string(),
        positions: plan.positions.len(),
        limit: plan.limit,
        concurrency,
        oracle: plan.oracle.as_ref().map(|o| o.spec.clone()),
    };
    if let Some(epd) = &plan.positions_epd {
        crate::store::files::write_file(&plan.out.join("positions.epd"), epd.as_bytes())?;
    }
    crate::store::files::write_file(
        &plan.out.join("plan.json"),
        (serde_json::to_string_pretty(&plan_json)? + "\n").as_bytes(),
    )
}

/// Every position by every variant, position by position.
fn jobs(plan: &SearchTestPlan) -> Vec<Job> {
    plan.positions
        .iter()
        .flat_map(|p| {
            plan.variants.iter().enumerate().map(move |(v, var)| Job {
                position: p.index,
                setup: v,
                fen: p.fen.clone(),
                limits: vec![var.limit.unwrap_or(plan.limit)],
                searchmoves: Vec::new(),
            })
        })
        .collect()
}

/// The record of one search, with the line to show when it is a fault.
fn record(plan: &SearchTestPlan, res: JobResult) -> (SearchRecord, Option<String>) {
    let pos = &plan.positions[res.position];
    let mut rec = SearchRecord {
        position: pos.index,
        variant: res.setup,
        variant_name: plan.variants[res.setup].name.clone(),
        stage: pos.stage,
        depth: None,
        score: None,
        nodes: None,
        bestmove: String::new(),
        wall_ms: 0,
        mpc: Default::default(),
        fault: None,
    };
    let mut message = None;
    match res.outcome {
        Ok(reports) => {
            if let Some(r) = reports.first() {
                rec.depth = r.depth;
                rec.score = r.score;
                rec.nodes = r.nodes;
                rec.bestmove.clone_from(&r.bestmove);
                rec.wall_ms = r.wall_ms;
                rec.mpc = parse_mpc_counters(&r.strings);
            }
        }
        Err(fault) => {
            message = Some(format!(
                "position {} variant {} skipped: {fault}",
                pos.index + 1,
                rec.variant_name
            ));
            rec.fault = Some(fault);
        }
    }
    (rec, message)
}

/// The heading of table.md: what was measured and what the columns mean.
fn heading(limit: Limit) -> String {
    match limit {
        Limit::Movetime(ms) => format!(
            "# Search test: fixed time, {ms} ms per position\n\nDepth = deepest iteration with an \
             exact score; depth gain = mean depth minus the first variant's."
        ),
        Limit::Nodes(n) => format!(
            "# Search test: fixed nodes, {n} per position\n\nSpeed-up = the first variant's \
             nodes / this variant's (totals); same move / same value: best move / final score \
             equal to the first variant's."
        ),
        Limit::Depth(d) => format!(
            "# Search test: fixed depth {d}\n\nSpeed-up = the first variant's nodes / this \
             variant's (totals); same move / same value: best move / final score equal to the \
             first variant's."
        ),
    }
}

/// Summarises the records and writes table.md, table.csv, summary.json, and with EPD `bm`/`am`
/// the suite's solve rates, with `--oracle` (unless stopped) the oracle's files.
async fn write_results(
    plan: &SearchTestPlan,
    records: &[SearchRecord],
    faults: usize,
    oracle_id: Option<Option<String>>,
    cancel: &Cancel,
) -> Result<SearchTestOutcome> {
    let out = &plan.out;
    let total = plan.positions.len() * plan.variants.len();
    let partial = records.len() < total;
    let names: Vec<(String, Vec<(String, String)>)> =
        plan.variants.iter().map(|v| (v.name.clone(), variant::shown_options(v))).collect();
    let summaries = summarize(records, &names);
    let fixed_time = matches!(plan.limit, Limit::Movetime(_));
    let mut table = table::markdown(&summaries, fixed_time);
    let heading = heading(plan.limit);
    let mut doc = format!(
        "{heading}\n\nEngine `{}`; {} of {} positions from `{}` searched by every variant{}.\n\n{table}",
        plan.engine.name,
        summaries.first().map_or(0, |s| s.positions),
        plan.positions.len(),
        plan.positions_file.display(),
        if partial { " (PARTIAL RUN)" } else { "" },
    );
    let mut by_stage = BTreeMap::new();
    for stage in Stage::ALL {
        let subset: Vec<SearchRecord> =
            records.iter().filter(|r| r.stage == stage).cloned().collect();
        let rows = summarize(&subset, &names);
        doc.push_str(&format!("\n## {stage} positions\n\n{}", table::markdown(&rows, fixed_time)));
        by_stage.insert(stage.to_string(), rows);
    }
    let write = |name: &str, text: String| {
        let p = out.join(name);
        crate::store::files::write_file(&p, text.as_bytes())
    };
    let variant_names: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    let mut suite_json = None;
    if !plan.move_ops.is_empty() {
        let rows = suite::solve_rates(records, &plan.positions, &plan.move_ops, &variant_names);
        let text = format!(
            "\n# Test suite: EPD bm/am\n\nA position is solved when the variant plays one of its \
             `bm` moves (if any) and none of its `am` moves. Interval: Wilson 95 %.\n\n{}",
            suite::markdown(&rows)
        );
        doc.push_str(&text);
        table.push_str(&text);
        suite_json = Some(rows);
    }
    let mut oracle_json = None;
    if let (Some(op), Some(id_name)) = (&plan.oracle, oracle_id)
        && !cancel.is_cancelled()
    {
        let (text, json) = oracle_section(plan, op, id_name, records, cancel).await?;
        doc.push_str(&text);
        table.push_str(&text);
        oracle_json = Some(json);
    }
    write("table.md", doc)?;
    write("table.csv", table::csv(&summaries))?;
    let summary = SearchtestSummary {
        engine: plan.engine.clone(),
        limit: plan.limit,
        positions_file: plan.positions_file.display().to_string(),
        positions: plan.positions.len(),
        searches: records.len(),
        faults,
        partial,
        variants: summaries.clone(),
        by_stage,
        oracle: oracle_json,
        suite: suite_json,
    };
    write("summary.json", serde_json::to_string_pretty(&summary)? + "\n")?;
    Ok(SearchTestOutcome { summaries, table, partial, out: out.clone() })
}

/// The oracle's part: every chosen move scored by the oracle, oracle-moves.jsonl, oracle.json
/// and oracle.svg written; returns the text added to the tables and oracle.json's value.
async fn oracle_section(
    plan: &SearchTestPlan,
    op: &oracle::OraclePlan,
    id_name: Option<String>,
    records: &[SearchRecord],
    cancel: &Cancel,
) -> Result<(String, OracleFile)> {
    let out = &plan.out;
    let (moves, orun) = oracle::score_moves(op, id_name, &plan.positions, records, cancel).await?;
    let mut lines = String::new();
    for m in &moves {
        lines.push_str(&serde_json::to_string(m)?);
        lines.push('\n');
    }
    crate::store::files::write_file(&out.join("oracle-moves.jsonl"), lines.as_bytes())?;
    let variant_names: Vec<String> = plan.variants.iter().map(|v| v.name.clone()).collect();
    let (all, stages) = oracle_report::summarize_by_stage(&moves, &variant_names);
    let text = oracle_report::document(op, &orun, &all, &stages);
    let json = OracleFile {
        oracle: op.spec.clone(),
        run: orun,
        mate_mapping: oracle_spec::MAPPING_NOTE.into(),
        summary: all,
        by_stage: stages,
    };
    let pretty = serde_json::to_string_pretty(&json)? + "\n";
    crate::store::files::write_file(&out.join("oracle.json"), pretty.as_bytes())?;
    oracle_plot::write_plot(&out.join("oracle.svg"), &json.summary, &json.by_stage)?;
    Ok((text, json))
}
