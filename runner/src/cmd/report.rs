//! `runner report DIR`: re-prints the table and redraws the plot from a results directory's
//! store (run.json + games.jsonl, and sweep.json for a sweep). Nothing comes from memory: the
//! live sweep writes its outputs through the same function, so a report reproduces them.
//! For a match it prints the runner's summary and writes the match layout (table.md, table.csv,
//! plot.svg: `crate::report::match_files`), leaving the runner's summary.json alone; for a
//! gauntlet or round-robin it rewrites its tables with the anchor the run used. `--html` writes
//! only report.html (the run's page, `report::html`) and leaves every other file alone, so it is
//! safe on any kind of folder (a gauntlet's own table.md, a calibration's outputs).
//!
//! A run that is still going (a runner holds its run.lock) writes its own tables and page: the
//! report then prints the table and writes nothing, so its older view never replaces the run's
//! last files. Otherwise the report holds a shared lock on run.lock while it writes, so no
//! runner resumes the folder under it.

use std::fs::{File, TryLockError};
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::ReportArgs;
use crate::exit::Exit;
use crate::gauntlet;
use crate::plan::run_plan::RunKind;
use crate::report::html::write_report_noting;
use crate::report::match_files;
use crate::report::summary::{Tally, format_pairing};
use crate::store::dir::LOCK_FILE;
use crate::store::{read_records, read_run_file, read_summary, stored_stopped_by};
use crate::sweep::plan::SweepPlan;
use crate::sweep::report::write_sweep_stopped_by;

/// `runner report DIR`.
pub fn run(args: &ReportArgs) -> Result<Exit> {
    let _shared = match reading_lock(&args.dir)? {
        Lock::Shared(f) => f,
        Lock::Running(who) => {
            let what = if args.html { "report.html" } else { "its tables" };
            outln!(
                "{} is still being run by a runner{who}, which writes {what} itself: nothing \
                 written (run `runner report` again once it has stopped)",
                args.dir.display()
            );
            if !args.html {
                print_live_table(&args.dir)?;
            }
            return Ok(Exit::Done);
        }
    };
    if args.html {
        let (path, notes) = write_report_noting(&args.dir)?;
        for n in notes {
            errln!("warning: {n}");
        }
        outln!("written: {}", path.display());
        return Ok(Exit::Done);
    }
    tables(args)
}

/// Whether a runner still runs the folder.
enum Lock {
    /// No runner: a shared lock on run.lock (none for a folder without one), kept while writing.
    Shared(Option<File>),
    /// A runner holds run.lock (" (pid N)" when the file says which).
    Running(String),
}

fn reading_lock(dir: &Path) -> Result<Lock> {
    let p = dir.join(LOCK_FILE);
    let mut f = match File::open(&p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::Shared(None)),
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", p.display())),
    };
    match f.try_lock_shared() {
        Ok(()) => Ok(Lock::Shared(Some(f))),
        Err(TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = f.read_to_string(&mut pid);
            let pid = pid.trim();
            let valid =
                !pid.is_empty() && pid.len() < 12 && pid.bytes().all(|b| b.is_ascii_digit());
            Ok(Lock::Running(if valid { format!(" (pid {pid})") } else { String::new() }))
        }
        Err(TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", p.display()))
        }
    }
}

/// The table of a running match, printed from its games so far (nothing written).
fn print_live_table(dir: &Path) -> Result<()> {
    let run = read_run_file(dir)
        .with_context(|| format!("{} is not a results directory", dir.display()))?;
    let plan = run.plan;
    if plan.kind != RunKind::Match || SweepPlan::load(dir)?.is_some() {
        return Ok(());
    }
    let records = read_records(dir, &plan)?;
    let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let t = Tally::of_records(plan.pairings.len(), &records);
    for (p, pt) in plan.pairings.iter().zip(&t.pairings) {
        out!("{}", format_pairing(p, &names, pt, plan.sprt));
    }
    Ok(())
}

/// Re-prints the table and rewrites table.md, table.csv and plot.svg (and a sweep's files).
fn tables(args: &ReportArgs) -> Result<Exit> {
    let dir = &args.dir;
    let run = read_run_file(dir)
        .with_context(|| format!("{} is not a results directory", dir.display()))?;
    let plan = run.plan;
    let records = read_records(dir, &plan)?;
    match SweepPlan::load(dir)? {
        Some(sweep) => {
            let decided = fleet_decisions(dir);
            let table = write_sweep_stopped_by(
                dir,
                &sweep,
                &plan,
                &records,
                &stored_stopped_by(dir),
                decided.as_deref(),
            )?;
            out!("{table}");
        }
        None if plan.kind == RunKind::Match => {
            let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
            let t = Tally::of_records(plan.pairings.len(), &records);
            for (p, pt) in plan.pairings.iter().zip(&t.pairings) {
                out!("{}", format_pairing(p, &names, pt, plan.sprt));
            }
            match_files::write(dir, &plan, &records)?;
        }
        None => {
            // A gauntlet or round-robin: its own tables, anchored as the run was.
            let (anchor, anchor_elo) =
                read_summary(dir).and_then(|s| s.ratings_anchor()).unwrap_or((0, 0.0));
            let tables = gauntlet::files::write_tables(dir, &plan, &records, anchor, anchor_elo)?;
            outln!("{}", tables.markdown());
            outln!("written: table.md, table.csv, ratings.csv in {}", dir.display());
            return Ok(Exit::Done);
        }
    }
    outln!("written: table.md, table.csv, plot.svg in {}", dir.display());
    Ok(Exit::Done)
}

/// A pulled fleet sweep's points as the fleet decided them (summary.json's `fleet.points`), so
/// that a report tells the same story as the pull; none for other folders.
fn fleet_decisions(dir: &std::path::Path) -> Option<Vec<crate::sweep::analysis::PointStatus>> {
    crate::store::read_summary(dir)?.fleet?.points
}
