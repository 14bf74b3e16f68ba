//! `runner sweep`'s arguments turned into its plans, as `runner sweep` and `runner submit sweep`
//! build them: the sweep plan (points, engine, baseline, racing) from the flags in command-line
//! order, then the runner's plan of the points.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::{ArgMatches, CommandFactory};

use super::plan::{SweepPlan, baseline_options, baseline_with_options, validate};
use super::racing::RaceConfig;
use super::values::{ValueArg, assign, grid, parse_fixed};
use crate::cli::SweepArgs;
use crate::plan::engine_spec::{EngineSpec, set_option};
use crate::plan::engines::{bundled_engine_path, resolve_engines};
use crate::plan::openings::Opening;
use crate::plan::run_plan::{RunKind, RunPlan};
use crate::plan::time_control::time_control;
use crate::run;

/// The `sweep` subcommand's matches from the process's own command line (clap keeps the
/// position of every flag there, which decides which --param a --values belongs to): `runner
/// sweep ...`, or nested under another subcommand (`runner submit --db URL sweep ...`).
fn own_matches() -> Option<ArgMatches> {
    let m = crate::cli::Cli::command().try_get_matches_from(std::env::args_os()).ok()?;
    nested_sweep(&m)
}

/// The matches of the first `sweep` subcommand at any depth of `m`.
fn nested_sweep(m: &ArgMatches) -> Option<ArgMatches> {
    let (name, sub) = m.subcommand()?;
    if name == "sweep" { Some(sub.clone()) } else { nested_sweep(sub) }
}

/// `(index, text)` of every occurrence of a flag.
fn indexed(m: &ArgMatches, id: &str) -> Vec<(usize, String)> {
    match (m.indices_of(id), m.get_many::<String>(id)) {
        (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
        _ => Vec::new(),
    }
}

/// The flags' order: from the process command line when it parses to these same arguments,
/// else the order of the lists (every --param, then its values in turn; used by tests that
/// build `SweepArgs` directly).
/// `--param` and `--values`/`--range` flags with their command-line positions.
type OrderedFlags = (Vec<(usize, String)>, Vec<(usize, ValueArg)>);

fn ordered_flags(args: &SweepArgs) -> OrderedFlags {
    if let Some(m) = own_matches() {
        let params = indexed(&m, "params");
        let values = indexed(&m, "values");
        let ranges = indexed(&m, "ranges");
        let same = params.iter().map(|x| &x.1).eq(args.params.iter())
            && values.iter().map(|x| &x.1).eq(args.values.iter())
            && ranges.iter().map(|x| &x.1).eq(args.ranges.iter());
        if same {
            let mut v: Vec<(usize, ValueArg)> =
                values.into_iter().map(|(i, t)| (i, ValueArg::List(t))).collect();
            v.extend(ranges.into_iter().map(|(i, t)| (i, ValueArg::Range(t))));
            return (params, v);
        }
    }
    // Programmatic use: --values then --range are given to the params in order.
    let params: Vec<(usize, String)> =
        args.params.iter().enumerate().map(|(i, p)| (3 * i, p.clone())).collect();
    let mut v = Vec::new();
    let mut slot = 0;
    for t in &args.values {
        v.push((3 * slot + 1, ValueArg::List(t.clone())));
        slot += 1;
    }
    for t in &args.ranges {
        v.push((3 * slot + 1, ValueArg::Range(t.clone())));
        slot += 1;
    }
    (params, v)
}

fn is_bundled(spec: &EngineSpec) -> bool {
    bundled_engine_path().is_ok_and(|p| Path::new(&spec.cmd) == p)
}

/// Builds the sweep plan (engines, points, baseline) from the arguments.
pub fn sweep_plan(args: &SweepArgs) -> Result<SweepPlan> {
    let (params, values) = ordered_flags(args);
    let params = assign(&params, &values)?;
    let points = grid(&params)?;
    let fixed: Vec<(String, String)> =
        args.fixed.iter().map(|f| parse_fixed(f)).collect::<Result<_, _>>()?;
    validate(&params, &fixed)?;
    let e = &args.run.engines;
    let mut specs = resolve_engines(&e.engines, e.each.as_deref(), e.engines_file.as_deref())?;
    if specs.len() != 1 {
        bail!("sweep takes one --engine (got {}); give the opponent with --baseline", specs.len());
    }
    let mut engine = specs.remove(0);
    let bundled = is_bundled(&engine);
    if bundled && !engine.options.iter().any(|(n, _)| n.eq_ignore_ascii_case("MPC")) {
        set_option(&mut engine.options, "MPC", "true");
    }
    let baseline = match args.baseline.as_deref() {
        None if bundled => baseline_with_options(&engine, &[("MPC".into(), "false".into())]),
        None => baseline_with_options(&engine, &[]),
        Some(text) => match baseline_options(text)? {
            Some(opts) => baseline_with_options(&engine, &opts),
            None => {
                let spec = [text.to_string()];
                let mut b =
                    resolve_engines(&spec, e.each.as_deref(), e.engines_file.as_deref())?.remove(0);
                if b.name == engine.name || b.name.starts_with(&format!("{}[", engine.name)) {
                    b.name = format!("{}[baseline]", b.name);
                }
                b
            }
        },
    };
    let sprt = run::args::sprt(args.sprt.as_deref())?;
    let unit = |x: f64, what: &str| {
        if x > 0.0 && x < 1.0 { Ok(x) } else { Err(anyhow!("{what} must be between 0 and 1")) }
    };
    unit(args.alpha, "--alpha")?;
    if let Some(d) = args.draws_floor
        && !(0.0..1.0).contains(&d)
    {
        bail!("--draws-floor must be in [0, 1)");
    }
    let race = if args.adaptive {
        if args.adaptive_min_pairs == 0 {
            bail!("--adaptive-min-pairs must be > 0");
        }
        Some(RaceConfig {
            alpha: unit(args.adaptive_alpha, "--adaptive-alpha")?,
            min_pairs: args.adaptive_min_pairs,
        })
    } else {
        None
    };
    Ok(SweepPlan {
        params,
        fixed,
        points,
        engine,
        baseline,
        race,
        alpha: args.alpha,
        draws_floor: args.draws_floor,
        sprt,
    })
}

/// The sweep plan, the runner's plan of its points and the book's openings. `out` gives the
/// results directory once the sweep plan is valid (its run.json gives the seed on `--resume`);
/// it is returned with the plans.
pub fn sweep_run_plan(
    args: &SweepArgs,
    out: impl FnOnce() -> Result<PathBuf>,
) -> Result<(SweepPlan, RunPlan, Vec<Opening>, PathBuf)> {
    let sweep = sweep_plan(args)?;
    let out = out()?;
    let l = &args.run.limit;
    let tc = time_control(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let members = (sweep.engines(), sweep.pairings());
    let (plan, openings) =
        run::args::run_plan(&args.run, RunKind::Sweep, members, tc, sweep.sprt, &out)?;
    Ok((sweep, plan, openings, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `runner submit --db URL sweep ...`: the flags' positions come from the nested `sweep`.
    #[test]
    fn the_sweep_subcommand_is_found_at_any_depth() {
        let sweep = || clap::Command::new("sweep").arg(clap::Arg::new("params").long("param"));
        let cli = clap::Command::new("runner").subcommand(sweep()).subcommand(
            clap::Command::new("submit").arg(clap::Arg::new("db").long("db")).subcommand(sweep()),
        );
        let m = cli.clone().get_matches_from(["runner", "sweep", "--param", "X"]);
        let s = nested_sweep(&m).unwrap();
        assert_eq!(s.get_one::<String>("params").map(String::as_str), Some("X"));
        let m = cli
            .clone()
            .get_matches_from(["runner", "submit", "--db", "u", "sweep", "--param", "Y"]);
        let s = nested_sweep(&m).unwrap();
        assert_eq!(indexed(&s, "params"), [(2, "Y".to_string())]);
        assert!(nested_sweep(&cli.get_matches_from(["runner"])).is_none());
    }
}
