//! `runner report DIR`: re-prints the table and redraws the plot from a results directory's
//! store (run.json + games.jsonl, and sweep.json for a sweep). Nothing comes from memory: the
//! live sweep writes its outputs through the same function, so a report reproduces them.
//! For a match (no sweep.json) it prints the runner's summary and writes table.md, table.csv and
//! plot.svg, leaving the runner's summary.json alone. `--html` writes only report.html (the run's
//! page, `report::html`) and leaves every other file alone, so it is safe on a live run and on
//! any kind of folder (a gauntlet's own table.md, a calibration's outputs).

use anyhow::{Context, Result};

use crate::cli::ReportArgs;
use crate::report::html::write_report;
use crate::report::summary::{Tally, format_pairing};
use crate::store::{read_records, read_run_file, stored_stopped_by};
use crate::sweep::plan::SweepPlan;
use crate::sweep::report::{write_match_tables, write_sweep_stopped_by};

/// `runner report DIR`.
pub fn run(args: &ReportArgs) -> Result<u8> {
    if args.html {
        let path = write_report(&args.dir)?;
        println!("written: {}", path.display());
        return Ok(0);
    }
    tables(args)
}

/// Re-prints the table and rewrites table.md, table.csv and plot.svg (and a sweep's files).
fn tables(args: &ReportArgs) -> Result<u8> {
    let dir = &args.dir;
    let run = read_run_file(dir)
        .with_context(|| format!("{} is not a results directory", dir.display()))?;
    let plan = run.plan;
    let records = read_records(dir)?;
    match SweepPlan::load(dir)? {
        Some(sweep) => {
            let table =
                write_sweep_stopped_by(dir, &sweep, &plan, &records, &stored_stopped_by(dir))?;
            print!("{table}");
        }
        None => {
            let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
            let t = Tally::of_records(plan.pairings.len(), &records);
            for (p, pt) in plan.pairings.iter().zip(&t.pairings) {
                print!("{}", format_pairing(p, &names, pt, plan.sprt));
            }
            print!("{}", write_match_tables(dir, &plan, &records)?);
        }
    }
    println!("written: table.md, table.csv, plot.svg in {}", dir.display());
    Ok(0)
}
