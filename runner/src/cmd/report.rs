//! `runner report DIR`: re-prints the table and redraws the plot from a results directory's
//! store (run.json + games.jsonl, and sweep.json for a sweep). Nothing comes from memory: the
//! live sweep writes its outputs through the same function, so a report reproduces them.
//! For a match (no sweep.json) it prints the runner's summary and writes table.md, table.csv and
//! plot.svg, leaving the runner's summary.json alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use crate::run::StopReason;
use crate::store::{GameRecord, RunPlan, SUMMARY_FILE, read_run_file};
use crate::summary::{Tally, format_pairing, summary_json};
use crate::sweep::analysis::analyze;
use crate::sweep::plan::SweepPlan;
use crate::sweep::report::{Outputs, write_all};
use crate::sweep::tracker::Tracker;
use crate::sweep::values::Point;

/// `runner report` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// A results directory (of `runner sweep` or `runner match`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Replays the stored games through a tracker (racing and SPRT decisions included).
fn replay(
    labels: Vec<String>,
    sweep: Option<&SweepPlan>,
    plan: &RunPlan,
    records: &[GameRecord],
) -> Result<Tracker> {
    let race = sweep.and_then(|s| s.race);
    let mut t = Tracker::new(labels, race, plan.sprt);
    for r in records {
        t.record_game(r)?;
    }
    Ok(t)
}

fn tally(plan: &RunPlan, records: &[GameRecord]) -> Tally {
    let mut t = Tally::new(plan.pairings.len());
    for r in records {
        t.add(r);
    }
    t
}

/// Writes a sweep's table.md, table.csv, summary.json, plot.svg and points/*/summary.json from
/// the stored games (in store order); returns the terminal table.
pub fn write_sweep(
    dir: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stop: StopReason,
) -> Result<String> {
    write_sweep_stopped_by(dir, sweep, plan, records, stop.as_str())
}

fn write_sweep_stopped_by(
    dir: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: &str,
) -> Result<String> {
    let labels: Vec<String> = plan.pairings.iter().map(|p| p.label.clone()).collect();
    let tracker = replay(labels, Some(sweep), plan, records)?;
    let a = analyze(
        &sweep.param_names(),
        &sweep.points,
        tracker.counts(),
        tracker.status(),
        &sweep.analysis_options(),
    )?;
    let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let mut run_summary =
        summary_json(&plan.pairings, &names, &tally(plan, records), plan.sprt, stopped_by);
    // Keep what only the live run could measure (e.g. the runner's overhead figures).
    if let (Some(fresh), Some(serde_json::Value::Object(old))) =
        (run_summary.as_object_mut(), stored_summary(dir))
    {
        for (k, v) in old {
            fresh.entry(k).or_insert(v);
        }
    }
    let context = json!({
        "engine": sweep.engine,
        "baseline": sweep.baseline,
        "fixed": sweep.fixed,
        "tc": plan.tc.to_string(),
        "book": plan.book,
        "book_order": plan.book_order,
        "seed": plan.seed,
        "games_per_point": plan.pairs * 2,
        "sprt": plan.sprt,
        "adaptive": sweep.race,
        "draws_floor": sweep.draws_floor,
    });
    write_all(dir, &a, &sweep.points, &sweep.title(), &context, &run_summary, Outputs::Sweep)
}

/// The summary.json already in `dir`, if readable.
fn stored_summary(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join(SUMMARY_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// What an earlier run recorded as its reason to stop (kept by reports).
fn stored_stopped_by(dir: &Path) -> String {
    stored_summary(dir)
        .and_then(|v| v.get("stopped_by").and_then(|s| s.as_str()).map(String::from))
        .unwrap_or_else(|| "unknown".into())
}

/// `runner report DIR`.
pub fn run(args: &ReportArgs) -> Result<u8> {
    let dir = &args.dir;
    let run = read_run_file(dir)
        .with_context(|| format!("{} is not a results directory", dir.display()))?;
    let plan = run.plan;
    let records = crate::cmd::sweep::read_records(dir)?;
    match SweepPlan::load(dir)? {
        Some(sweep) => {
            let table =
                write_sweep_stopped_by(dir, &sweep, &plan, &records, &stored_stopped_by(dir))?;
            print!("{table}");
        }
        None => {
            let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
            let t = tally(&plan, &records);
            for (p, pt) in plan.pairings.iter().zip(&t.pairings) {
                print!("{}", format_pairing(p, &names, pt, plan.sprt));
            }
            let labels: Vec<String> = plan.pairings.iter().map(|p| p.label.clone()).collect();
            let tracker = replay(labels.clone(), None, &plan, &records)?;
            let points: Vec<Point> = labels
                .iter()
                .map(|l| Point { assignments: vec![("pairing".into(), l.clone())] })
                .collect();
            let opts =
                crate::sweep::analysis::AnalysisOptions { sprt: plan.sprt, ..Default::default() };
            let a =
                analyze(&["pairing".into()], &points, tracker.counts(), tracker.status(), &opts)?;
            let title = format!("{} ({} games)", plan.kind, records.len());
            let table = write_all(
                dir,
                &a,
                &points,
                &title,
                &json!({}),
                &json!({}),
                Outputs::TablesAndPlot,
            )?;
            print!("{table}");
        }
    }
    println!("written: table.md, table.csv, plot.svg in {}", dir.display());
    Ok(0)
}
