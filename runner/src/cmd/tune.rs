//! `runner tune`: SPSA over UCI options of one engine (both sides of every game), fishtest's
//! parameter format and gains; prints the table of final values and writes tune.json, tune.csv,
//! tune.md and tune.svg beside the runner's run.json, games.jsonl and games.pgn.
//!
//! ```text
//! runner tune --param NAME,start,min,max,c_end,r_end [--param ...] [--spsa-A A]
//!             [--engine SPEC] [--games N] [--concurrency N] [match options]
//! ```

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};

use crate::cli::TuneArgs;
use crate::plan::engines::resolve_engines;
use crate::plan::schedule::Pairing;
use crate::plan::time_control::time_control;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::game::GameSettings;
use crate::run::{self, INTERRUPTED, RunOptions};
use crate::store::dir::resume_command;
use crate::tune::files::{CSV_FILE, JSON_FILE, PLOT_FILE, TABLE_FILE, write_outputs};
use crate::tune::log::LOG_FILE;
use crate::tune::params::parse_params;
use crate::tune::run::{TuneSetup, TuneState, run_tune};

/// `runner tune`. Returns the process exit code.
pub async fn run(args: &TuneArgs) -> Result<u8> {
    let params = parse_params(&args.params).map_err(|e| anyhow!(e))?;
    let x = &args.run.exec;
    if x.shard.is_some() {
        bail!("tune does not take --shard: each iteration starts from the updates before it");
    }
    let e = &args.run.engines;
    let mut specs = resolve_engines(&e.engines, e.each.as_deref(), e.engines_file.as_deref())?;
    if specs.len() != 1 {
        bail!(
            "tune takes one --engine (got {}): both sides are that engine with different values",
            specs.len()
        );
    }
    let engine = specs.remove(0);
    let side = |suffix: &str| {
        let mut s = engine.clone();
        s.name = format!("{}{suffix}", engine.name);
        s
    };
    let engines = vec![side("+"), side("-")];
    let label = format!("{} vs {}", engines[0].name, engines[1].name);
    let pairings = vec![Pairing { label, first: 0, second: 1, tc: None }];
    let out: PathBuf = run::args::out_dir(x)?;
    let l = &args.run.limit;
    let tc = time_control(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let (plan, openings) =
        run::args::run_plan(&args.run, "tune", (engines, pairings), tc, None, &out)?;
    let iterations = plan.pairs as f64;
    let big_a = match args.spsa_a {
        None => (0.1 * iterations).round(),
        Some(a) if a.is_finite() && a >= 0.0 => a,
        Some(a) => bail!("--spsa-A must be a number >= 0, got {a}"),
    };
    let dir = run::args::take_dir(x, &out)?;
    let out = dir.path().to_path_buf();
    let opts = RunOptions::from_exec(x, out.clone())?;
    let settings = GameSettings::of_plan(&plan, opts.stall_timeout);
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    errln!(
        "tune {}: {} iterations (game pairs), A = {big_a}, {}, {} opening(s), concurrency {}, \
         results in {}",
        params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
        plan.pairs,
        plan.tc,
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
        return Ok(130);
    }
    Ok(0)
}
