//! `runner sweep`: one engine, many option values, each point against the same baseline, points
//! interleaved pair by pair over the same openings; then the table, summary and plot.
//!
//! ```text
//! runner sweep --param NAME [--values 0.8,0.9,1.0 | --range 0.8:1.3:0.1] [--param NAME2 ...]
//!              [--fixed NAME=VALUE]... [--engine SPEC] [--baseline SPEC-or-options]
//!              [--games N | --sprt elo0=..,elo1=..] [--adaptive] [match options]
//! ```

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::SweepArgs;
use crate::exit::Exit;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::game::GameSettings;
use crate::report::html::live::LivePage;
use crate::run::live::LiveOutputs;
use crate::run::{self, INTERRUPTED, RunOptions, StopReason, execute_with};
use crate::store::dir::resume_command;
use crate::store::{GAMES_FILE, GameRecord};
use crate::sweep::args::sweep_run_plan;
use crate::sweep::plan::{SWEEP_FILE, SweepPlan};
use crate::sweep::report::{write_sweep, write_sweep_stopped_by};
use crate::sweep::tracker::Tracker;

/// Saves sweep.json for a new run, or checks it against the stored one on --resume.
fn save_or_check(sweep: &SweepPlan, dir: &Path, resume: bool) -> Result<()> {
    if resume {
        match SweepPlan::load(dir)? {
            Some(stored) => sweep.check_same(&stored, dir),
            None => bail!(
                "cannot resume {}: it holds no sweep plan ({}); is it a match?",
                dir.display(),
                SWEEP_FILE
            ),
        }
    } else {
        let games = dir.join(GAMES_FILE);
        if std::fs::metadata(&games).is_ok_and(|m| m.len() > 0) {
            bail!(
                "{} already holds games: add --resume to continue it, or choose another --out",
                dir.display()
            );
        }
        crate::store::files::create_dir_all(dir)
            .with_context(|| format!("cannot create results directory {}", dir.display()))?;
        sweep.save(dir)
    }
}

/// `runner sweep`. Returns the process exit code.
pub async fn run(args: &SweepArgs) -> Result<Exit> {
    let x = &args.run.exec;
    let (sweep, plan, openings, out) = sweep_run_plan(args, || run::args::out_dir(x))?;
    let tables = run::args::tables(&args.run.adjudication, &plan)?;
    let dir = run::args::take_dir(x, &out)?;
    let out = dir.path().to_path_buf();
    let mut opts = RunOptions::from_exec(x, out.clone())?;
    // A swept option the engine does not declare would make the whole sweep a no-op.
    opts.required_options = sweep.param_names();
    save_or_check(&sweep, &out, x.resume)?;
    let settings = GameSettings::of_plan(&plan, opts.stall_timeout).with_tables(tables.as_ref())?;
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    errln!(
        "{}: {} points x {} games max, {}, {} opening(s), concurrency {}, results in {}",
        sweep.title(),
        sweep.points.len(),
        plan.pairs * 2,
        plan.limits_text(),
        openings.len(),
        opts.concurrency,
        out.display()
    );
    let page = LivePage::new(out.clone());
    let mut write = |records: &[GameRecord]| -> Result<()> {
        let written =
            write_sweep_stopped_by(&out, &sweep, &plan, records, "running", None).map(|_| ());
        page.refresh();
        written
    };
    let live = Some(LiveOutputs::new(&mut write));
    let played = match sweep.race {
        Some(_) => {
            let mut tracker = Tracker::new(
                plan.pairings.iter().map(|p| p.label.clone()).collect(),
                sweep.race,
                sweep.sprt,
            );
            let mut hook = |rec: &GameRecord| -> Result<Vec<(usize, String)>> {
                let stopped = tracker.record_game(rec)?;
                Ok(stopped.into_iter().map(|p| (p, tracker.status()[p].short())).collect())
            };
            execute_with(&plan, openings, &opts, settings, cancel, Some(&mut hook), live).await
        }
        None => execute_with(&plan, openings, &opts, settings, cancel, None, live).await,
    };
    let (records, stop) = match played {
        Ok(o) => (o.records, o.stop),
        Err(e) => {
            dir.discard_if_unplayed(&[SWEEP_FILE]);
            return Err(e);
        }
    };
    let table = write_sweep(&out, &sweep, &plan, &records, stop)?;
    out!("{table}");
    page.finish_or_warn();
    outln!("results: {}", out.display());
    Ok(match stop {
        StopReason::Interrupted => {
            errln!("sweep interrupted: continue it with:\n  {}", resume_command(&out));
            Exit::Interrupted
        }
        _ => Exit::Done,
    })
}
