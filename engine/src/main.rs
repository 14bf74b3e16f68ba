//! `engine` binary: a UCI engine by default; subcommands for fixed workloads:
//!
//! - `engine bench [depth] [--epd FILE [--limit N]] [--option NAME=VALUE]...`: MPC's counters (tries, cuts, their
//!   overlap with null move and reverse futility; with `MPCDiag`/`MPCVerifySample` the
//!   diagnostics), then the last line `<N> nodes <M> nps`
//! - `engine depthtest (<ms> | --nodes N) [--option NAME=VALUE]...`: average depth reached per
//!   position
//! - `engine perft <depth> [fen]`: leaf count

use std::process::ExitCode;

use engine::bench::{BENCH_FENS, DEFAULT_BENCH_DEPTH, epd_fens, run_bench_on, run_depthtest};
use engine::options::EngineOptions;
use engine::perft::perft_picker;
use engine::position::{parse_fen, parse_fen_960};
use engine::timeman::Limits;
use engine::uci::Uci;

const USAGE: &str = "usage: engine [uci | bench [depth] [--epd FILE [--limit N]] \
[--option NAME=VALUE]... | \
depthtest (<ms> | --nodes N) [--option NAME=VALUE]... | perft <depth> [fen]]";

/// Splits `args` into positional arguments and applied `--option` settings.
fn options_and_positionals(args: &[String]) -> Result<(EngineOptions, Vec<String>), String> {
    let mut opts = EngineOptions::default();
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--option" || a == "-o" {
            let kv = it
                .next()
                .ok_or_else(|| format!("{a} needs NAME=VALUE, e.g. --option MPC=false"))?;
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("--option {kv}: expected NAME=VALUE, e.g. MPC=false"))?;
            opts.set(k, Some(v)).map_err(|e| format!("--option {kv}: {e}"))?;
        } else if let Some(kv) = a.strip_prefix("--option=") {
            let (k, v) =
                kv.split_once('=').ok_or_else(|| format!("--option={kv}: expected NAME=VALUE"))?;
            opts.set(k, Some(v)).map_err(|e| format!("--option {kv}: {e}"))?;
        } else {
            pos.push(a.clone());
        }
    }
    Ok((opts, pos))
}

/// Takes `--epd FILE [--limit N]` out of `bench`'s positionals: that file's positions instead
/// of the built-in ones.
fn bench_positions(pos: &mut Vec<String>) -> Result<Option<Vec<String>>, String> {
    let take = |pos: &mut Vec<String>, flag: &str| -> Result<Option<String>, String> {
        match pos.iter().position(|p| p == flag) {
            None => Ok(None),
            Some(i) if i + 1 < pos.len() => {
                let v = pos.remove(i + 1);
                pos.remove(i);
                Ok(Some(v))
            }
            Some(_) => Err(format!("bench {flag} needs a value, e.g. `engine bench 9 --epd FILE`")),
        }
    };
    let file = take(pos, "--epd")?;
    let limit = match take(pos, "--limit")? {
        None => None,
        Some(n) => Some(
            n.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("bench --limit must be a positive integer, got {n:?}"))?,
        ),
    };
    let Some(file) = file else {
        return match limit {
            Some(_) => Err("bench --limit needs --epd FILE".into()),
            None => Ok(None),
        };
    };
    let text = std::fs::read_to_string(&file).map_err(|e| format!("bench --epd {file}: {e}"))?;
    let fens = epd_fens(&text, limit).map_err(|e| format!("bench --epd {file}: {e}"))?;
    if fens.is_empty() {
        return Err(format!("bench --epd {file}: no positions in the file"));
    }
    Ok(Some(fens))
}

fn run(args: &[String]) -> Result<(), String> {
    let Some(cmd) = args.first() else {
        Uci::new().run();
        return Ok(());
    };
    let rest = &args[1..];
    match cmd.as_str() {
        "uci" => {
            // Answer the `uci` we were started with, then run the loop.
            let mut u = Uci::new();
            u.handle("uci");
            u.run();
            Ok(())
        }
        "bench" => {
            let (opts, mut pos) = options_and_positionals(rest)?;
            let fens = bench_positions(&mut pos)?;
            let depth = match pos.first() {
                Some(d) => d
                    .parse::<i32>()
                    .ok()
                    .filter(|d| (1..=64).contains(d))
                    .ok_or_else(|| format!("bench depth must be 1..=64, got {d:?}"))?,
                None => DEFAULT_BENCH_DEPTH,
            };
            let r = match &fens {
                Some(f) => run_bench_on(&opts, f, depth, |l| eprintln!("{l}")),
                None => run_bench_on(&opts, BENCH_FENS, depth, |l| eprintln!("{l}")),
            };
            println!("mpc tries {} cuts {}", r.tries, r.cuts);
            for line in engine::mpc_diag::summary_lines(&r.mpc).iter().skip(1) {
                println!("{line}");
            }
            let all = r.mpc.info_line();
            println!("mpc counters {}", all.trim_start_matches("info string mpc "));
            println!("{} nodes {} nps", r.nodes, r.nps());
            Ok(())
        }
        "depthtest" => {
            let (opts, pos) = options_and_positionals(rest)?;
            let number =
                |s: Option<&String>| s.and_then(|s| s.parse::<u64>().ok()).filter(|&m| m > 0);
            let (limits, what) = if pos.first().is_some_and(|p| p == "--nodes") {
                let n = number(pos.get(1)).ok_or(
                    "depthtest --nodes needs a node count, e.g. `engine depthtest --nodes 200000`",
                )?;
                (Limits { nodes: Some(n), ..Default::default() }, format!("nodes_per_position {n}"))
            } else {
                let ms = number(pos.first()).ok_or(
                    "depthtest needs a time per position in ms, e.g. `engine depthtest 1000`",
                )?;
                (
                    Limits { movetime: Some(ms), ..Default::default() },
                    format!("ms_per_position {ms}"),
                )
            };
            let depths = run_depthtest(&opts, &limits, |l| eprintln!("{l}"));
            let avg = depths.iter().map(|&d| d as f64).sum::<f64>() / depths.len().max(1) as f64;
            println!("positions {} {what} average_depth {avg:.2}", depths.len());
            Ok(())
        }
        "perft" => {
            let depth = rest
                .first()
                .and_then(|d| d.parse::<u32>().ok())
                .filter(|&d| d <= 10)
                .ok_or("perft needs a depth 0..=10, e.g. `engine perft 5`")?;
            let board = match rest.get(1..).filter(|r| !r.is_empty()) {
                Some(f) => {
                    // Standard or Shredder-FEN first, then Chess960 X-FEN.
                    let fen = f.join(" ");
                    parse_fen(&fen).or_else(|e| parse_fen_960(&fen).map_err(|_| e))?
                }
                None => cozy_chess::Board::default(),
            };
            println!("{}", perft_picker(&board, depth));
            Ok(())
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            println!("bench positions: {}", BENCH_FENS.len());
            Ok(())
        }
        other => Err(format!("unknown subcommand {other:?}; {USAGE}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
