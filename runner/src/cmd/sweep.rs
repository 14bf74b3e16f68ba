//! `runner sweep`: one engine, many option values, each point against the same baseline, points
//! interleaved pair by pair over the same openings; then the table, summary and plot.
//!
//! ```text
//! runner sweep --param NAME [--values 0.8,0.9,1.0 | --range 0.8:1.3:0.1] [--param NAME2 ...]
//!              [--fixed NAME=VALUE]... [--engine SPEC] [--baseline SPEC-or-options]
//!              [--games N | --sprt elo0=..,elo1=..] [--adaptive] [match options]
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::{ArgMatches, CommandFactory};

use crate::cli::SweepArgs;
use crate::plan::engine_spec::{EngineSpec, set_option};
use crate::plan::engines::{bundled_engine_path, resolve_engines};
use crate::plan::time_control::time_control;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::game::GameSettings;
use crate::report::html::live::LivePage;
use crate::run::live::LiveOutputs;
use crate::run::{self, INTERRUPTED, RunOptions, StopReason, execute_with};
use crate::store::dir::resume_command;
use crate::store::{GAMES_FILE, GameRecord};
use crate::sweep::plan::{
    SWEEP_FILE, SweepPlan, baseline_options, baseline_with_options, validate,
};
use crate::sweep::racing::RaceConfig;
use crate::sweep::report::{write_sweep, write_sweep_stopped_by};
use crate::sweep::tracker::Tracker;
use crate::sweep::values::{ValueArg, assign, grid, parse_fixed};

/// The `sweep` subcommand's matches from the process's own command line (clap keeps the
/// position of every flag there, which decides which --param a --values belongs to).
fn own_matches() -> Option<ArgMatches> {
    let m = crate::cli::Cli::command().try_get_matches_from(std::env::args_os()).ok()?;
    m.subcommand_matches("sweep").cloned()
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
pub async fn run(args: &SweepArgs) -> Result<u8> {
    let sweep = sweep_plan(args)?;
    let x = &args.run.exec;
    let out: PathBuf = run::args::out_dir(x)?;
    let l = &args.run.limit;
    let tc = time_control(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let members = (sweep.engines(), sweep.pairings());
    let (plan, openings) = run::args::run_plan(&args.run, "sweep", members, tc, sweep.sprt, &out)?;
    let dir = run::args::take_dir(x, &out)?;
    let out = dir.path().to_path_buf();
    let mut opts = RunOptions::from_exec(x, out.clone())?;
    // A swept option the engine does not declare would make the whole sweep a no-op.
    opts.required_options = sweep.param_names();
    save_or_check(&sweep, &out, x.resume)?;
    let settings = GameSettings::of_plan(&plan, opts.stall_timeout);
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    errln!(
        "{}: {} points x {} games max, {}, {} opening(s), concurrency {}, results in {}",
        sweep.title(),
        sweep.points.len(),
        plan.pairs * 2,
        plan.tc,
        openings.len(),
        opts.concurrency,
        out.display()
    );
    let page = LivePage::new(out.clone());
    let mut write = |records: &[GameRecord]| -> Result<()> {
        let written = write_sweep_stopped_by(&out, &sweep, &plan, records, "running").map(|_| ());
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
            130
        }
        _ => 0,
    })
}
