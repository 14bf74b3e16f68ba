//! A calibration run: search every position with MPC off, keep each position's per-depth scores
//! in searches.jsonl as it finishes (so a stopped run keeps its work and can be resumed), then
//! fit every depth pair and stage and write params.json, table.md, pairs.jsonl, summary.json and
//! one scatter plot per pair.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::pairs::{DepthPair, PositionRecord, fit_all, needed_depths, pair_points};
use super::{plot, table};
use crate::hex::hex;
use crate::plan::engine_spec::EngineSpec;
use crate::plan::positions::{Stage, TestPosition};
use crate::play::cancel::Cancel;
use crate::play::probe::{Limit, ScoreMode, SearchReport};
use crate::play::probe_pool::{EngineSetup, Job, PoolConfig, check_setups};
use crate::run::probes::{ProbeOutput, prepare_folder, probe};
use crate::store::formats::{CalibratePair, CalibratePlanFile, CalibrateSummary};

/// Everything a calibration run needs.
#[derive(Clone, Debug)]
pub struct CalibratePlan {
    pub engine: EngineSpec,
    pub positions_file: PathBuf,
    pub positions: Vec<TestPosition>,
    pub pairs: Vec<DepthPair>,
    pub max_abs: i32,
    pub mode: ScoreMode,
    pub out: PathBuf,
    /// Engine processes: how many, and how long they may take to start and to search (the
    /// logs folder is set by the run, under `out`).
    pub pool: PoolConfig,
    pub resume: bool,
}

/// The result of a run (also on Ctrl-C: `partial`).
#[derive(Debug)]
pub struct CalibrateOutcome {
    pub rows: Vec<super::pairs::ParamRow>,
    pub table: String,
    pub searched: usize,
    pub faults: usize,
    pub partial: bool,
    pub out: PathBuf,
}

/// Runs the calibration: the positions not yet in searches.jsonl searched with MPC off (a
/// resume continues the stored ones), then every pair fitted and the files written.
pub async fn run(plan: CalibratePlan, cancel: Cancel) -> Result<CalibrateOutcome> {
    let started = Instant::now();
    let out = &plan.out;
    prepare_folder(out, !plan.resume)?;
    let depths = needed_depths(&plan.pairs);
    let max_depth = *depths.last().context("no depths")?;
    let plan_file = CalibratePlanFile {
        engine: plan.engine.clone(),
        positions_file: plan.positions_file.display().to_string(),
        positions: plan.positions.len(),
        positions_sha256: positions_hash(&plan.positions),
        depths: match plan.mode {
            ScoreMode::Iterative => (1..=max_depth).collect(),
            ScoreMode::Separate => depths.clone(),
        },
        mode: plan.mode,
    };
    let searches_path = out.join("searches.jsonl");
    let mut records = check_plan(out, &plan_file, plan.resume, &searches_path)?;

    let setups = vec![EngineSetup {
        label: "engine".into(),
        spec: plan.engine.clone(),
        if_declared: if plan.engine.options.iter().any(|(n, _)| n.eq_ignore_ascii_case("MPC")) {
            Vec::new()
        } else {
            vec![("MPC".into(), "false".into())]
        },
    }];
    let cfg = PoolConfig {
        concurrency: plan.pool.concurrency.max(1),
        logs: Some(out.join("logs")),
        ..plan.pool.clone()
    };
    for note in check_setups(&setups, &cfg).await?.concat() {
        errln!("{}: {note}", plan.engine.name);
    }

    let done: HashSet<usize> = records.iter().map(|r| r.index).collect();
    let jobs: Vec<Job> = plan
        .positions
        .iter()
        .filter(|p| !done.contains(&p.index))
        .map(|p| Job {
            position: p.index,
            setup: 0,
            fen: p.fen.clone(),
            limits: match plan.mode {
                ScoreMode::Iterative => vec![Limit::Depth(max_depth)],
                ScoreMode::Separate => depths.iter().map(|&d| Limit::Depth(d)).collect(),
            },
            searchmoves: Vec::new(),
        })
        .collect();
    let output = ProbeOutput {
        out,
        records: &searches_path,
        label: "calibrate",
        total: plan.positions.len() as u64,
        already: done.len() as u64,
        faults: records.iter().filter(|r| r.fault.is_some()).count(),
    };
    let probed = probe(output, setups, jobs, cfg, cancel, |res| {
        let pos = &plan.positions[res.position];
        match res.outcome {
            Ok(reports) => (record_from_reports(pos, &reports, plan.mode), None),
            Err(fault) => {
                let message = format!("position {} skipped: {fault}", pos.index + 1);
                let rec = PositionRecord {
                    index: pos.index,
                    fen: pos.fen.clone(),
                    stage: pos.stage,
                    scores: Vec::new(),
                    nodes: None,
                    wall_ms: 0,
                    fault: Some(fault),
                };
                (rec, Some(message))
            }
        }
    })
    .await?;
    records.extend(probed.records);
    let partial = records.len() < plan.positions.len();
    records.sort_by_key(|r| r.index);
    let outcome = write_results(&plan, &records, probed.faults, partial, started.elapsed())?;
    probed.page.wait();
    probed.pool?;
    Ok(outcome)
}

fn positions_hash(positions: &[TestPosition]) -> String {
    let mut h = Sha256::new();
    for p in positions {
        h.update(p.fen.as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())
}

/// Writes plan.json for a new run, or checks it and loads searches.jsonl for a resumed one.
fn check_plan(
    out: &Path,
    plan: &CalibratePlanFile,
    resume: bool,
    searches: &Path,
) -> Result<Vec<PositionRecord>> {
    let plan_path = out.join("plan.json");
    if !resume {
        if searches.exists() {
            bail!(
                "{} already holds a calibration: add --resume to continue it, or choose another --out",
                out.display()
            );
        }
        crate::store::files::write_file(
            &plan_path,
            serde_json::to_string_pretty(plan)?.as_bytes(),
        )?;
        return Ok(Vec::new());
    }
    let old: CalibratePlanFile = match fs::read_to_string(&plan_path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a calibration plan", plan_path.display()))?,
        Err(_) => {
            crate::store::files::write_file(
                &plan_path,
                serde_json::to_string_pretty(plan)?.as_bytes(),
            )?;
            return Ok(Vec::new());
        }
    };
    if old != *plan {
        let what = if old.engine != plan.engine {
            "engine"
        } else if old.positions_sha256 != plan.positions_sha256 {
            "positions"
        } else if old.depths != plan.depths {
            "depths (pairs)"
        } else {
            "score mode"
        };
        bail!("cannot resume {}: the {what} differ from the stored plan.json", out.display());
    }
    let text = fs::read_to_string(searches).unwrap_or_default();
    let mut records = Vec::new();
    let mut seen = HashSet::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<PositionRecord>(line) {
            Ok(r) if r.index < plan.positions && seen.insert(r.index) => records.push(r),
            _ => bad += 1,
        }
    }
    if bad > 0 || !text.is_empty() && !text.ends_with('\n') {
        // A run killed mid-write leaves a truncated last line: rewrite the good lines.
        let mut clean = String::new();
        for r in &records {
            clean.push_str(&serde_json::to_string(r)?);
            clean.push('\n');
        }
        crate::store::files::write_atomic(searches, clean.as_bytes())?;
    }
    Ok(records)
}

fn record_from_reports(
    pos: &TestPosition,
    reports: &[SearchReport],
    mode: ScoreMode,
) -> PositionRecord {
    let scores = match mode {
        ScoreMode::Iterative => reports
            .first()
            .map(|r| r.depths.iter().map(|d| (d.depth, d.score)).collect())
            .unwrap_or_default(),
        // Each report is the search to its own depth: its final exact score is that depth's.
        ScoreMode::Separate => {
            reports.iter().filter_map(|r| r.depths.last().map(|d| (d.depth, d.score))).collect()
        }
    };
    PositionRecord {
        index: pos.index,
        fen: pos.fen.clone(),
        stage: pos.stage,
        scores,
        nodes: reports.iter().map(|r| r.nodes).sum(),
        wall_ms: reports.iter().map(|r| r.wall_ms).sum(),
        fault: None,
    }
}

fn write_results(
    plan: &CalibratePlan,
    records: &[PositionRecord],
    faults: usize,
    partial: bool,
    elapsed: Duration,
) -> Result<CalibrateOutcome> {
    let out = &plan.out;
    let (rows, missing) = fit_all(records, &plan.pairs, plan.max_abs);
    let write = |name: &str, text: String| {
        let p = out.join(name);
        crate::store::files::write_file(&p, text.as_bytes())
    };
    write("params.json", serde_json::to_string_pretty(&rows)? + "\n")?;

    let mut pairs_text = String::new();
    let mut pair_summaries = Vec::new();
    for &pair in &plan.pairs {
        let points = pair_points(records, pair, plan.max_abs);
        for p in &points {
            pairs_text.push_str(&serde_json::to_string(p)?);
            pairs_text.push('\n');
        }
        let mates = points
            .iter()
            .filter(|p| {
                matches!(p.v_shallow, crate::play::uci_info::Eval::Mate(_))
                    || matches!(p.v_deep, crate::play::uci_info::Eval::Mate(_))
            })
            .count();
        let used = points.iter().filter(|p| p.used).count();
        pair_summaries.push(CalibratePair {
            pair: format!("{}:{}", pair.shallow, pair.deep),
            observations: points.len(),
            used,
            mate_scores: mates,
            beyond_max_abs: points.len() - used - mates,
        });
        let svg = out.join(format!("scatter_{}_{}.svg", pair.shallow, pair.deep));
        plot::scatter(&svg, pair, &points, &rows, plan.max_abs)?;
    }
    write("pairs.jsonl", pairs_text)?;

    let searched = records.iter().filter(|r| r.fault.is_none()).count();
    let per_stage = |s: Stage| records.iter().filter(|r| r.fault.is_none() && r.stage == s).count();
    let how = format!(
        "Engine `{}` ({}), MPC off; {} positions from `{}` ({} middlegame, {} endgame searched, \
         {} faults){}; scores read from {}; fit over |v'| <= {} cp, mate scores excluded.",
        plan.engine.name,
        plan.engine.cmd,
        plan.positions.len(),
        plan.positions_file.display(),
        per_stage(Stage::Middlegame),
        per_stage(Stage::Endgame),
        faults,
        if partial { " - PARTIAL RUN" } else { "" },
        match plan.mode {
            ScoreMode::Iterative => "the iterations of one `go depth` per position",
            ScoreMode::Separate => "a separate `go depth` per depth",
        },
        plan.max_abs
    );
    let doc = table::document(&rows, &how);
    write("table.md", doc)?;
    let summary = CalibrateSummary {
        engine: plan.engine.clone(),
        positions_file: plan.positions_file.display().to_string(),
        positions: plan.positions.len(),
        searched,
        searched_middlegame: per_stage(Stage::Middlegame),
        searched_endgame: per_stage(Stage::Endgame),
        faults,
        partial,
        mode: plan.mode,
        pairs: pair_summaries,
        max_abs: plan.max_abs,
        elapsed_s: (elapsed.as_secs_f64() * 10.0).round() / 10.0,
        rows: rows.clone(),
        not_fitted: missing.iter().map(|(p, s, e)| format!("{p} {s}: {e}")).collect(),
    };
    write("summary.json", serde_json::to_string_pretty(&summary)? + "\n")?;
    Ok(CalibrateOutcome {
        table: table::markdown(&rows),
        rows,
        searched,
        faults,
        partial,
        out: out.clone(),
    })
}
