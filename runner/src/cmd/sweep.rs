//! `runner sweep`: one engine, many option values, each point against the same baseline, points
//! interleaved pair by pair over the same openings; then the table, summary and plot.
//!
//! ```text
//! runner sweep --param NAME [--values 0.8,0.9,1.0 | --range 0.8:1.3:0.1] [--param NAME2 ...]
//!              [--fixed NAME=VALUE]... [--engine SPEC] [--baseline SPEC-or-options]
//!              [--games N | --sprt elo0=..,elo1=..] [--adaptive] [match options]
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::{ArgMatches, CommandFactory};

use crate::cancel::Cancel;
use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, ExecArgs, LimitArgs};
use crate::cmd::match_cmd::{
    DEFAULT_GAMES, DEFAULT_SPRT_CAP, adjudication, book, install_signal_handlers, out_dir,
    resolve_engines, run_options, time_control,
};
use crate::config::bundled_engine_path;
use crate::engine_spec::{EngineSpec, set_option};
use crate::game::GameSettings;
use crate::openings::Opening;
use crate::run::{RunOptions, StopReason, execute};
use crate::schedule::Shard;
use crate::store::{GAMES_FILE, GameRecord, RunPlan, read_run_file};
use crate::sweep::plan::{SweepPlan, baseline_options, baseline_with_options, validate};
use crate::sweep::racing::RaceConfig;
use crate::sweep::values::{ValueArg, assign, grid, parse_fixed};

/// `runner sweep` arguments. `--values`/`--range` belong to the `--param` before them.
#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// A UCI option to sweep (repeat for a grid). Without --values/--range, t_mid and t_end take
    /// the seed's ranges (0.8:1.3:0.1 and 0.5:1.3:0.1).
    #[arg(long = "param", value_name = "NAME", required = true)]
    pub params: Vec<String>,
    /// Values of the --param before it, comma-separated (sent verbatim with setoption).
    #[arg(long = "values", value_name = "V1,V2,...", allow_hyphen_values = true)]
    pub values: Vec<String>,
    /// Values of the --param before it: LO:HI:STEP in exact decimal steps, HI included.
    #[arg(long = "range", value_name = "LO:HI:STEP", allow_hyphen_values = true)]
    pub ranges: Vec<String>,
    /// An option set on the swept engine at every point (not on the baseline).
    #[arg(long = "fixed", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub fixed: Vec<String>,
    /// The opponent of every point: options over the swept engine (MPC=false or
    /// option.MPC=false,...) or an engine spec (name=..,cmd=..). Default: the bundled engine
    /// with MPC=false; any other engine with its default options.
    #[arg(long, value_name = "SPEC|OPTIONS")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub engines: EngineArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub book: BookArgs,
    #[command(flatten)]
    pub adjudication: AdjudicationArgs,
    /// (--games counts games per point.)
    #[command(flatten)]
    pub exec: ExecArgs,
    /// An SPRT per point: elo0=..,elo1=..[,alpha,beta,model]; each point plays until its
    /// decision or the --games cap.
    #[arg(long, value_name = "SPEC")]
    pub sprt: Option<String>,
    /// Racing: stop giving games to a point once it is significantly worse than the current
    /// best (one-sided z test on pair scores, Bonferroni over the active points).
    #[arg(long)]
    pub adaptive: bool,
    /// Level of the racing test.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub adaptive_alpha: f64,
    /// Game pairs a point plays before racing may drop it.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub adaptive_min_pairs: u64,
    /// Family-wise level of the table's "significant" column (Holm across points).
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub alpha: f64,
    /// Assume at least this draw ratio in the fixed-sample test (the seed used 0.3).
    #[arg(long, value_name = "D")]
    pub draws_floor: Option<f64>,
}

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
    let mut specs = resolve_engines(&args.engines)?;
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
                let ea = EngineArgs {
                    engines: vec![text.to_string()],
                    each: args.engines.each.clone(),
                    engines_file: args.engines.engines_file.clone(),
                };
                let mut b = resolve_engines(&ea)?.remove(0);
                if b.name == engine.name || b.name.starts_with(&format!("{}[", engine.name)) {
                    b.name = format!("{}[baseline]", b.name);
                }
                b
            }
        },
    };
    let sprt = args
        .sprt
        .as_deref()
        .map(|s| stats::SprtSpec::parse(s).map_err(|e| anyhow!("bad --sprt {s:?}: {e}")))
        .transpose()?;
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

/// The runner plan of a sweep: one pairing per point, each against the baseline.
pub fn run_plan(
    args: &SweepArgs,
    sweep: &SweepPlan,
    out: &Path,
) -> Result<(RunPlan, Vec<Opening>)> {
    let tc = time_control(&args.limit)?;
    let (openings, book_info) = book(&args.book)?;
    let games = match args.exec.games {
        Some(0) => bail!("--games must be > 0"),
        Some(g) => g,
        None if sweep.sprt.is_some() => DEFAULT_SPRT_CAP,
        None => DEFAULT_GAMES,
    };
    let shard = args.exec.shard.as_deref().map(Shard::parse).transpose().map_err(|e| anyhow!(e))?;
    let seed = match args.book.seed {
        Some(s) => s,
        None if args.exec.resume => read_run_file(out)?.plan.seed,
        None => rand::random(),
    };
    let plan = RunPlan {
        kind: "sweep".into(),
        engines: sweep.engines(),
        pairings: sweep.pairings(),
        tc,
        timemargin_ms: args.exec.timemargin,
        book: book_info,
        book_order: args.book.book_order,
        seed,
        pairs: games.div_ceil(2) as usize,
        adjudication: adjudication(&args.adjudication)?,
        sprt: sweep.sprt,
        shard,
    };
    Ok((plan, openings))
}

/// Saves sweep.json for a new run, or checks it against the stored one on --resume.
fn save_or_check(sweep: &SweepPlan, dir: &Path, resume: bool) -> Result<()> {
    if resume {
        match SweepPlan::load(dir)? {
            Some(stored) => sweep.check_same(&stored, dir),
            None => bail!(
                "cannot resume {}: it holds no sweep plan ({}); is it a match?",
                dir.display(),
                crate::sweep::plan::SWEEP_FILE
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
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create results directory {}", dir.display()))?;
        sweep.save(dir)
    }
}

/// `runner sweep`. Returns the process exit code.
pub async fn run(args: &SweepArgs) -> Result<u8> {
    let sweep = sweep_plan(args)?;
    let out: PathBuf = out_dir(&args.exec)?;
    let (plan, openings) = run_plan(args, &sweep, &out)?;
    let opts: RunOptions = run_options(&args.exec, out.clone())?;
    save_or_check(&sweep, &out, args.exec.resume)?;
    let settings = GameSettings {
        tc: plan.tc,
        margin: Duration::from_millis(plan.timemargin_ms),
        adjudication: plan.adjudication,
        stall_timeout: opts.stall_timeout,
    };
    let cancel = Cancel::new();
    install_signal_handlers(cancel.clone());
    eprintln!(
        "{}: {} points x {} games max, {}, {} opening(s), concurrency {}, results in {}",
        sweep.title(),
        sweep.points.len(),
        plan.pairs * 2,
        plan.tc,
        openings.len(),
        opts.concurrency,
        out.display()
    );
    let (records, stop) = match sweep.race {
        Some(_) => {
            let mut tracker = crate::sweep::tracker::Tracker::new(
                plan.pairings.iter().map(|p| p.label.clone()).collect(),
                sweep.race,
                sweep.sprt,
            );
            let mut hook =
                |rec: &crate::store::GameRecord| -> anyhow::Result<Vec<(usize, String)>> {
                    let stopped = tracker.record_game(rec)?;
                    Ok(stopped.into_iter().map(|p| (p, tracker.status()[p].short())).collect())
                };
            let o =
                crate::run::execute_with(&plan, openings, &opts, settings, cancel, Some(&mut hook))
                    .await?;
            (o.records, o.stop)
        }
        None => {
            let o = execute(&plan, openings, &opts, settings, cancel).await?;
            (o.records, o.stop)
        }
    };
    let table = crate::cmd::report::write_sweep(&out, &sweep, &plan, &records, stop)?;
    print!("{table}");
    println!("results: {}", out.display());
    Ok(match stop {
        StopReason::Interrupted => {
            eprintln!("sweep interrupted: continue it with the same command and --resume");
            130
        }
        _ => 0,
    })
}

/// Records of a finished or stopped run, read back without modifying the store.
pub fn read_records(dir: &Path) -> Result<Vec<GameRecord>> {
    let p = dir.join(GAMES_FILE);
    let bytes = match std::fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    Ok(crate::store::parse_games(&bytes).with_context(|| p.display().to_string())?.0)
}
