//! `runner tune`'s arguments turned into its plan, as `runner tune` and `runner submit tune`
//! build it: the parameters, one engine playing itself as `NAME+` and `NAME-`, the runner's
//! plan (one pairing, one game pair per iteration) and fishtest's A.

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};

use super::params::{TuneParam, parse_params};
use crate::cli::TuneArgs;
use crate::plan::engines::resolve_engines;
use crate::plan::openings::Opening;
use crate::plan::run_plan::{RunKind, RunPlan};
use crate::plan::schedule::Pairing;
use crate::plan::time_control::time_control;
use crate::run;

/// What a tuning run plays, before any engine starts.
pub struct TunePlan {
    pub plan: RunPlan,
    pub openings: Vec<Opening>,
    pub params: Vec<TuneParam>,
    /// fishtest's A (`--spsa-A`, default 10 % of the iterations).
    pub big_a: f64,
    /// The results directory given by the caller.
    pub out: PathBuf,
}

/// The plan of `runner tune`. `out` gives the results directory once the engine is known (its
/// run.json gives the seed on `--resume`).
pub fn tune_plan(args: &TuneArgs, out: impl FnOnce() -> Result<PathBuf>) -> Result<TunePlan> {
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
    let out = out()?;
    let l = &args.run.limit;
    let tc = time_control(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let (plan, openings) =
        run::args::run_plan(&args.run, RunKind::Tune, (engines, pairings), tc, None, &out)?;
    let s = plan.scheduling;
    if s.repeat != 2 || s.noswap || s.reverse {
        bail!(
            "runner tune plays game pairs with colours reversed: --repeat, --noswap and --reverse do not apply"
        );
    }
    let iterations = plan.pairs as f64;
    let big_a = match args.spsa_a {
        None => (0.1 * iterations).round(),
        Some(a) if a.is_finite() && a >= 0.0 => a,
        Some(a) => bail!("--spsa-A must be a number >= 0, got {a}"),
    };
    Ok(TunePlan { plan, openings, params, big_a, out })
}
