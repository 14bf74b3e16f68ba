//! `engine` binary: a UCI engine by default; subcommands for fixed workloads:
//!
//! - `engine bench [depth] [--option NAME=VALUE]...`: MPC's counters (tries, cuts, their
//!   overlap with null move and reverse futility; with `MPCDiag`/`MPCVerifySample` the
//!   diagnostics), then the last line `<N> nodes <M> nps`
//! - `engine depthtest (<ms> | --nodes N) [--option NAME=VALUE]...`: average depth reached per
//!   position
//! - `engine perft <depth> [fen]`: leaf count

use std::process::ExitCode;

use engine::bench::{BENCH_FENS, DEFAULT_BENCH_DEPTH, run_bench, run_depthtest};
use engine::options::EngineOptions;
use engine::perft::perft_picker;
use engine::position::{parse_fen, parse_fen_960};
use engine::timeman::Limits;
use engine::uci::Uci;

const USAGE: &str = "usage: engine [uci | bench [depth] [--option NAME=VALUE]... | \
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
            let (opts, pos) = options_and_positionals(rest)?;
            let depth = match pos.first() {
                Some(d) => d
                    .parse::<i32>()
                    .ok()
                    .filter(|d| (1..=64).contains(d))
                    .ok_or_else(|| format!("bench depth must be 1..=64, got {d:?}"))?,
                None => DEFAULT_BENCH_DEPTH,
            };
            let r = run_bench(&opts, depth, |l| eprintln!("{l}"));
            println!("mpc tries {} cuts {}", r.tries, r.cuts);
            for line in engine::mpc_diag::summary_lines(&r.mpc).iter().skip(1) {
                println!("{line}");
            }
            println!("mpc counters {}", r.mpc.overlap_fields());
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
