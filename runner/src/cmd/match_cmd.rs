//! `runner match`: one pairing of two engines over a paired opening schedule, optional SPRT.
//! The argument-to-plan helpers here are shared by other subcommands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::cancel::Cancel;
use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, ExecArgs, LimitArgs, MatchArgs};
use crate::clock::TimeControl;
use crate::config::{BUNDLED_NAME, EngineCatalog, bundled_engine_path};
use crate::engine_spec::{EngineSpec, PartialSpec};
use crate::game::GameSettings;
use crate::gauntlet;
use crate::openings::{Opening, load_book, startpos_book};
use crate::progress::ProgressMode;
use crate::run::{RunOptions, StopReason, execute};
use crate::schedule::{Pairing, Shard};
use crate::store::{BookInfo, RunPlan, file_sha256, read_run_file};

/// The default opening book.
pub const DEFAULT_BOOK: &str = "openings/default.epd";
/// Default games without and with --sprt.
pub const DEFAULT_GAMES: u64 = 64;
pub const DEFAULT_SPRT_CAP: u64 = 100_000;

/// Turns `--engine`/`--each` into engine specs; with no `--engine`, the bundled engine.
pub fn resolve_engines(args: &EngineArgs) -> Result<Vec<EngineSpec>> {
    let catalog = EngineCatalog::load(args.engines_file.as_deref())?;
    for w in &catalog.warnings {
        eprintln!("warning: {w}");
    }
    let each = args.each.as_deref().map(PartialSpec::parse).transpose()?;
    let mut specs = Vec::new();
    if args.engines.is_empty() {
        let path = bundled_engine_path()?;
        specs.push(EngineSpec {
            name: BUNDLED_NAME.into(),
            cmd: path.to_string_lossy().into_owned(),
            args: vec![],
            dir: None,
            options: vec![],
        });
    }
    for text in &args.engines {
        let p = PartialSpec::parse(text)?;
        let mut spec = match (&p.cmd, &p.name) {
            (Some(cmd), _) => EngineSpec {
                name: p.name.clone().unwrap_or_else(|| default_name(cmd)),
                cmd: cmd.clone(),
                args: vec![],
                dir: None,
                options: vec![],
            },
            (None, Some(name)) => match catalog.get(name) {
                Some(s) => s.clone(),
                None if name == BUNDLED_NAME => EngineSpec {
                    name: name.clone(),
                    cmd: bundled_engine_path()?.to_string_lossy().into_owned(),
                    args: vec![],
                    dir: None,
                    options: vec![],
                },
                None => bail!(
                    "engine {name:?} is not defined (give cmd=PATH, or add it to {})",
                    args.engines_file
                        .as_deref()
                        .unwrap_or(Path::new(crate::config::DEFAULT_ENGINES_FILE))
                        .display()
                ),
            },
            (None, None) => bail!("engine spec {text:?} needs cmd=PATH or name=NAME"),
        };
        spec.overlay(&p);
        specs.push(spec);
    }
    if let Some(each) = &each {
        for s in &mut specs {
            s.add_defaults(each);
        }
    }
    Ok(specs)
}

fn default_name(cmd: &str) -> String {
    Path::new(cmd).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or(cmd.into())
}

/// The time control from `--tc`/`--st`/`--nodes`/`--depth` (default 10+0.1); one only.
pub fn time_control(args: &LimitArgs) -> Result<TimeControl> {
    let mut tcs = time_controls(args)?;
    if tcs.len() > 1 {
        bail!("give one --tc here (several are for `runner match` gauntlets)");
    }
    Ok(tcs.remove(0))
}

/// The time controls: every `--tc` in order, else `--st`/`--nodes`/`--depth`, else 10+0.1.
pub fn time_controls(args: &LimitArgs) -> Result<Vec<TimeControl>> {
    if !args.tc.is_empty() {
        let mut v: Vec<TimeControl> = Vec::new();
        for tc in &args.tc {
            let tc = TimeControl::parse_tc(tc)?;
            if v.contains(&tc) {
                bail!("--tc {} is given twice", tc.pgn_tag());
            }
            v.push(tc);
        }
        return Ok(v);
    }
    Ok(vec![match (&args.st, args.nodes, args.depth) {
        (Some(st), ..) => TimeControl::parse_st(st)?,
        (_, Some(n), _) if n > 0 => TimeControl::Nodes { nodes: n },
        (_, _, Some(d)) if d > 0 => TimeControl::Depth { depth: d },
        (_, Some(_), _) | (_, _, Some(_)) => bail!("--nodes and --depth must be > 0"),
        _ => TimeControl::parse_tc("10+0.1")?,
    }])
}

/// The opening book and its description for the plan.
pub fn book(args: &BookArgs) -> Result<(Vec<Opening>, BookInfo)> {
    let path = match &args.book {
        Some(p) => Some(p.clone()),
        None if Path::new(DEFAULT_BOOK).is_file() => Some(PathBuf::from(DEFAULT_BOOK)),
        None => {
            eprintln!(
                "warning: no --book and no {DEFAULT_BOOK}: every game starts from the start position"
            );
            None
        }
    };
    match path {
        Some(p) => {
            if !p.is_file() {
                bail!("book {} not found", p.display());
            }
            let openings = load_book(&p, args.book_plies)?;
            let info = BookInfo {
                path: Some(p.display().to_string()),
                sha256: Some(file_sha256(&p)?),
                openings: openings.len(),
                plies: args.book_plies,
            };
            Ok((openings, info))
        }
        None => {
            let openings = startpos_book();
            Ok((openings, BookInfo { path: None, sha256: None, openings: 1, plies: None }))
        }
    }
}

/// Adjudication rules from the command line.
pub fn adjudication(args: &AdjudicationArgs) -> Result<Adjudication> {
    Ok(Adjudication {
        draw: args.draw.as_deref().map(DrawRule::parse).transpose().map_err(|e| anyhow!(e))?,
        resign: args
            .resign
            .as_deref()
            .map(ResignRule::parse)
            .transpose()
            .map_err(|e| anyhow!(e))?,
        max_moves: match args.maxmoves {
            Some(0) => bail!("--maxmoves must be > 0"),
            m => m,
        },
    })
}

/// The results directory: `--out`, or on `--resume` the newest run under results/, or a new
/// timestamped directory.
pub fn out_dir(exec: &ExecArgs) -> Result<PathBuf> {
    if let Some(o) = &exec.out {
        return Ok(o.clone());
    }
    if exec.resume {
        let mut runs: Vec<PathBuf> = std::fs::read_dir("results")
            .context("--resume without --out: no results/ directory")?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join(crate::store::RUN_FILE).is_file())
            .collect();
        runs.sort();
        return runs
            .pop()
            .ok_or_else(|| anyhow!("--resume without --out: no run found in results/"));
    }
    Ok(PathBuf::from("results").join(chrono::Local::now().format("%Y%m%d-%H%M%S").to_string()))
}

/// Execution options shared by run-based subcommands.
pub fn run_options(exec: &ExecArgs, out: PathBuf) -> Result<RunOptions> {
    let secs = |v: f64, what: &str| {
        if v.is_finite() && v > 0.0 && v < 1.0e6 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(anyhow!("{what} must be a positive number of seconds"))
        }
    };
    let concurrency = match exec.concurrency {
        Some(0) => bail!("--concurrency must be > 0"),
        Some(n) => n,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    Ok(RunOptions {
        out_dir: out,
        concurrency,
        resume: exec.resume,
        stall_timeout: secs(exec.stall_timeout, "--stall-timeout")?,
        handshake_timeout: secs(exec.start_timeout, "--start-timeout")?,
        protocol_log: exec.debug_log,
        progress: match exec.progress.as_str() {
            "plain" => ProgressMode::Plain,
            "quiet" => ProgressMode::Quiet,
            _ => ProgressMode::Auto,
        },
    })
}

/// Cancels on Ctrl-C or SIGTERM.
pub fn install_signal_handlers(cancel: Cancel) {
    tokio::spawn(async move {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term => {},
        }
        eprintln!(
            "interrupted: stopping games and engines (finished games are kept; --resume continues)"
        );
        cancel.cancel();
    });
}

/// Builds the plan of a match from its arguments.
pub fn match_plan(args: &MatchArgs) -> Result<(RunPlan, Vec<Opening>, RunOptions)> {
    let mut engines = resolve_engines(&args.engines)?;
    if engines.len() == 2 && engines[0].name == engines[1].name {
        if engines[0] == engines[1] {
            engines.pop();
        } else {
            bail!("both engines are named {:?}: give them different name=", engines[0].name);
        }
    }
    let tcs = time_controls(&args.limit)?;
    let tc = tcs[0];
    let t = &args.tournament;
    // Two engines (or one playing itself) at one time control: a plain match, as before.
    let (kind, pairings) = if engines.len() <= 2 && tcs.len() == 1 {
        let second = engines.len() - 1;
        let label = format!("{} vs {}", engines[0].name, engines[second].name);
        ("match".to_string(), vec![Pairing { label, first: 0, second, tc: None }])
    } else {
        if engines.len() < 2 {
            bail!("several --tc need two engines or more (give --engine twice or more)");
        }
        let names: Vec<String> = engines.iter().map(|e| e.name.clone()).collect();
        let pairings = gauntlet::plan::pairings(&names, t.tournament, t.gauntlet_seats, &tcs)?;
        (t.tournament.as_str().to_string(), pairings)
    };
    let (openings, book_info) = book(&args.book)?;
    let adjudication = adjudication(&args.adjudication)?;
    let sprt = args
        .sprt
        .as_deref()
        .map(|s| stats::SprtSpec::parse(s).map_err(|e| anyhow!("bad --sprt {s:?}: {e}")))
        .transpose()?;
    let games = match args.exec.games {
        Some(0) => bail!("--games must be > 0"),
        Some(g) => g,
        None if sprt.is_some() => DEFAULT_SPRT_CAP,
        None => DEFAULT_GAMES,
    };
    let shard = args.exec.shard.as_deref().map(Shard::parse).transpose().map_err(|e| anyhow!(e))?;
    let out = out_dir(&args.exec)?;
    let seed = match args.book.seed {
        Some(s) => s,
        None if args.exec.resume => read_run_file(&out)?.plan.seed,
        None => rand::random(),
    };
    let plan = RunPlan {
        kind,
        engines,
        pairings,
        tc,
        timemargin_ms: args.exec.timemargin,
        book: book_info,
        book_order: args.book.book_order,
        seed,
        pairs: games.div_ceil(2) as usize,
        adjudication,
        sprt,
        shard,
    };
    let opts = run_options(&args.exec, out)?;
    Ok((plan, openings, opts))
}

/// `runner match`. Returns the process exit code.
pub async fn run(args: &MatchArgs) -> Result<u8> {
    let (plan, openings, opts) = match_plan(args)?;
    let settings = GameSettings {
        tc: plan.tc,
        margin: Duration::from_millis(plan.timemargin_ms),
        adjudication: plan.adjudication,
        stall_timeout: opts.stall_timeout,
    };
    let tournament = plan.kind != "match";
    let anchor = gauntlet::files::anchor_index(&plan, args.tournament.anchor.as_deref())?;
    let cancel = Cancel::new();
    install_signal_handlers(cancel.clone());
    if tournament {
        let mut tcs: Vec<String> = Vec::new();
        for p in 0..plan.pairings.len() {
            let tc = plan.pairing_tc(p).to_string();
            if !tcs.contains(&tc) {
                tcs.push(tc);
            }
        }
        eprintln!(
            "{} of {} engines: {} pairings, {} games max each, {}, {} opening(s), concurrency {}, \
             results in {}",
            plan.kind,
            plan.engines.len(),
            plan.pairings.len(),
            plan.pairs * 2,
            tcs.join(" and "),
            openings.len(),
            opts.concurrency,
            opts.out_dir.display()
        );
    } else {
        eprintln!(
            "{}: {} games max, {}, {} opening(s), concurrency {}, results in {}",
            plan.pairings[0].label,
            plan.pairs * 2,
            plan.tc,
            openings.len(),
            opts.concurrency,
            opts.out_dir.display()
        );
    }
    let outcome = execute(&plan, openings, &opts, settings, cancel).await?;
    print!("{}", outcome.report);
    if tournament {
        let tables = gauntlet::files::write_tables(
            &outcome.dir,
            &plan,
            &outcome.records,
            anchor,
            args.tournament.anchor_elo,
        )?;
        println!("\n{}", tables.markdown());
    }
    println!("results: {}", outcome.dir.display());
    Ok(match outcome.stop {
        StopReason::Interrupted => {
            eprintln!("run interrupted: continue it with the same command and --resume");
            130
        }
        _ => 0,
    })
}
