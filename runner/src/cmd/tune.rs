//! `runner tune`: SPSA over UCI options of one engine (both sides of every game), fishtest's
//! parameter format and gains; prints the table of final values and writes tune.json, tune.csv,
//! tune.md and tune.svg beside the runner's run.json, games.jsonl and games.pgn.
//!
//! ```text
//! runner tune --param NAME,start,min,max,c_end,r_end [--param ...] [--spsa-A A]
//!             [--engine SPEC] [--games N] [--concurrency N] [match options]
//! ```

use anyhow::Result;

use crate::cli::TuneArgs;
use crate::exit::Exit;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::game::GameSettings;
use crate::run::{self, INTERRUPTED, RunOptions};
use crate::store::dir::resume_command;
use crate::tune::args::{TunePlan, tune_plan};
use crate::tune::files::{CSV_FILE, JSON_FILE, PLOT_FILE, TABLE_FILE, write_outputs};
use crate::tune::log::LOG_FILE;
use crate::tune::run::{TuneSetup, TuneState, run_tune};

/// `runner tune`. Returns the process exit code.
pub async fn run(args: &TuneArgs) -> Result<Exit> {
    let x = &args.run.exec;
    let TunePlan { plan, openings, params, big_a, out } =
        tune_plan(args, || run::args::out_dir(x))?;
    let tables = run::args::tables(&args.run.adjudication, &plan)?;
    let dir = run::args::take_dir(x, &out)?;
    let out = dir.path().to_path_buf();
    let opts = RunOptions::from_exec(x, out.clone())?;
    let settings = GameSettings::of_plan(&plan, opts.stall_timeout).with_tables(tables.as_ref())?;
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    errln!(
        "tune {}: {} iterations (game pairs), A = {big_a}, {}, {} opening(s), concurrency {}, \
         results in {}",
        params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
        plan.pairs,
        plan.limits_text(),
        openings.len(),
        opts.concurrency,
        out.display()
    );
    let setup = TuneSetup { plan: &plan, openings, opts: &opts, settings, params, big_a, cancel };
    let mut write = |s: &TuneState| write_outputs(&out, s, "running").map(|_| ());
    let outcome = match run_tune(setup, &mut write).await {
        Ok(o) => o,
        Err(e) => {
            dir.discard_if_unplayed(&[LOG_FILE, JSON_FILE, CSV_FILE, TABLE_FILE, PLOT_FILE]);
            return Err(e);
        }
    };
    let stopped_by = if outcome.interrupted { "interrupted" } else { "complete" };
    let table = write_outputs(&out, &outcome.state, stopped_by)?;
    out!("{table}");
    outln!("results: {}", out.display());
    if outcome.interrupted {
        errln!("tune interrupted: continue it with:\n  {}", resume_command(&out));
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Done)
}
