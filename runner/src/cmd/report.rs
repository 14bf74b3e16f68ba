//! `runner report DIR`: re-prints the table and redraws the plot from a results directory's
//! store (run.json + games.jsonl, and sweep.json for a sweep). Nothing comes from memory: the
//! live sweep writes its outputs through the same function, so a report reproduces them.
//! For a match it prints the runner's summary and writes the match layout (table.md, table.csv,
//! plot.svg: `crate::report::match_files`), leaving the runner's summary.json alone; for a
//! gauntlet or round-robin it rewrites its tables with the anchor the run used. `--html` writes
//! only report.html (the run's page, `report::html`) and leaves every other file alone, so it is
//! safe on a live run and on any kind of folder (a gauntlet's own table.md, a calibration's
//! outputs).

use anyhow::{Context, Result};

use crate::cli::ReportArgs;
use crate::gauntlet;
use crate::report::html::write_report_noting;
use crate::report::match_files;
use crate::report::summary::{Tally, format_pairing};
use crate::store::{read_records, read_run_file, read_summary, stored_stopped_by};
use crate::sweep::plan::SweepPlan;
use crate::sweep::report::write_sweep_stopped_by;

/// `runner report DIR`.
pub fn run(args: &ReportArgs) -> Result<u8> {
    if args.html {
        let (path, notes) = write_report_noting(&args.dir)?;
        for n in notes {
            eprintln!("warning: {n}");
        }
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
        None if plan.kind == "match" => {
            let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
            let t = Tally::of_records(plan.pairings.len(), &records);
            for (p, pt) in plan.pairings.iter().zip(&t.pairings) {
                print!("{}", format_pairing(p, &names, pt, plan.sprt));
            }
            match_files::write(dir, &plan, &records)?;
        }
        None => {
            // A gauntlet or round-robin: its own tables, anchored as the run was.
            let (anchor, anchor_elo) = read_summary(dir)
                .and_then(|s| s.pointer("/gauntlet/ratings/0/ratings").cloned())
                .and_then(|r| Some((r["anchor"].as_u64()? as usize, r["anchor_elo"].as_f64()?)))
                .unwrap_or((0, 0.0));
            let tables = gauntlet::files::write_tables(dir, &plan, &records, anchor, anchor_elo)?;
            println!("{}", tables.markdown());
            println!("written: table.md, table.csv, ratings.csv in {}", dir.display());
            return Ok(0);
        }
    }
    println!("written: table.md, table.csv, plot.svg in {}", dir.display());
    Ok(0)
}
