//! Fixed workloads: `bench` (fixed-depth search over a built-in position list,
//! the engine's functional signature: its node count changes only when search
//! behaviour changes) and `depthtest` (depth reached at a fixed time per
//! position, for comparing search variants such as MPC on and off).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::options::EngineOptions;
use crate::position::Position;
use crate::search::{MpcStats, Searcher};
use crate::timeman::Limits;

/// Default `bench` depth (about 2-5 s in a release build on one core).
pub const DEFAULT_BENCH_DEPTH: i32 = 9;

/// Bench positions: openings, middlegames, endgames and tactical positions.
pub const BENCH_FENS: &[&str] = &[
    // Openings.
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2",
    "rnbqk2r/pppp1ppp/4pn2/8/1bPP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 2 4",
    "r1bqkb1r/pppp1ppp/2n2n2/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "rnbqkb1r/pppppp1p/5np1/8/2PP4/2N5/PP2PPPP/R1BQKBNR b KQkq - 1 3",
    // Middlegames.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "5rk1/q6p/2p3bR/1pPp1rP1/1P1Pp3/P3B1Q1/1K3P2/R7 w - - 93 90",
    "4rrk1/1p1nq3/p7/2p1P1pp/3P2bp/3Q1Bn1/PPPB4/1K2R1NR w - - 40 21",
    "r3k2r/3nnpbp/q2pp1p1/p7/Pp1PPPP1/4BNN1/1P5P/R2Q1RK1 w kq - 0 16",
    "3Qb1k1/1r2ppb1/pN1n2q1/Pp1Pp1Pr/4P2p/4BP2/4B1R1/1R5K b - - 11 40",
    "4k3/3q1r2/1N2r1b1/3ppN2/2nPP3/1B1R2n1/2R1Q3/3K4 w - - 5 1",
    "1r3k2/4q3/2Pp3b/3Bp3/2Q2p2/1p1P2P1/1P2KP2/3N4 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    // Endgames.
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
    "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 1",
    "2K5/p7/7P/5pR1/8/5k2/r7/8 w - - 0 1",
    "8/6pk/1p6/8/PP3p1p/5P2/4KP1q/3Q4 w - - 0 1",
    "7k/3p2pp/4q3/8/4Q3/5Kp1/P6b/8 w - - 0 1",
    "8/2p5/8/2kPKp1p/2p4P/2P5/3P4/8 w - - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "8/3p4/p1bk3p/Pp6/1Kp1PpPp/2P2P1P/2P5/5B2 b - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 1",
    "8/3p3B/5p2/5P2/p7/PP5b/k7/6K1 w - - 0 1",
    "8/8/4k3/8/2K5/3P4/8/8 w - - 0 1",
    "8/8/1p1k4/p1p5/P1P5/1P1K4/8/8 w - - 0 1",
    "6k1/8/8/8/8/8/1B6/N3K3 w - - 0 1",
    "8/4kp2/4p3/3pP3/3P4/4K3/5P2/8 w - - 0 1",
    // Tactics and mates.
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1",
    "2r2rk1/1bqnbpp1/1p1ppn1p/pP6/N1P1P3/P2B1N1P/1B2QPP1/R2R2K1 b - - 0 1",
];

/// Result of a bench run.
pub struct BenchReport {
    pub nodes: u64,
    pub ms: u64,
    pub tries: u64,
    pub cuts: u64,
    /// Every MPC counter, summed over the positions (the diagnostics' too).
    pub mpc: MpcStats,
}

impl BenchReport {
    pub fn nps(&self) -> u64 {
        self.nodes * 1000 / self.ms.max(1)
    }
}

/// Searches every bench position to `depth` with a fresh TT and histories.
pub fn run_bench(opts: &EngineOptions, depth: i32, progress: impl FnMut(&str)) -> BenchReport {
    run_bench_on(opts, BENCH_FENS, depth, progress)
}

/// The FENs of an EPD file's positions (`--epd` of `bench`): the four FEN fields of each
/// position line with the move counters reset (`0 1`); `#` comments and blank lines skipped.
/// `limit` keeps that many, evenly spaced through the file. An unreadable position is an error
/// naming its line.
pub fn epd_fens(text: &str, limit: Option<usize>) -> Result<Vec<String>, String> {
    let mut fens = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        let fen = format!("{} 0 1", fields.join(" "));
        Position::from_fen(&fen).map_err(|e| format!("line {}: {e}", i + 1))?;
        fens.push(fen);
    }
    if let Some(n) = limit.filter(|&n| n > 0 && n < fens.len()) {
        let len = fens.len();
        fens = (0..n).map(|k| fens[k * len / n].clone()).collect();
    }
    Ok(fens)
}

/// Searches each of `fens` to `depth` with a fresh TT and histories.
pub fn run_bench_on<S: AsRef<str>>(
    opts: &EngineOptions,
    fens: &[S],
    depth: i32,
    mut progress: impl FnMut(&str),
) -> BenchReport {
    let mut searcher = Searcher::new(opts, Arc::new(AtomicBool::new(false)));
    let start = Instant::now();
    let mut report = BenchReport { nodes: 0, ms: 0, tries: 0, cuts: 0, mpc: MpcStats::default() };
    for (i, fen) in fens.iter().map(AsRef::as_ref).enumerate() {
        let Ok(pos) = Position::from_fen(fen) else {
            continue;
        };
        searcher.clear();
        let r = searcher.search(&pos, &Limits { depth: Some(depth), ..Default::default() });
        report.nodes += r.nodes;
        report.tries += r.mpc.tries;
        report.cuts += r.mpc.cuts();
        report.mpc.add(&r.mpc);
        progress(&format!(
            "position {:>2} depth {} score {} nodes {} mpc tries {} cuts {} verified {} wrong {}",
            i + 1,
            r.depth,
            crate::score::uci_score(r.score),
            r.nodes,
            r.mpc.tries,
            r.mpc.cuts(),
            r.mpc.verified_beta + r.mpc.verified_alpha,
            r.mpc.wrong_beta + r.mpc.wrong_alpha
        ));
    }
    report.ms = start.elapsed().as_millis() as u64;
    report
}

/// Per-position depth reached within `limits` (`movetime`, or `nodes` for a result that does
/// not depend on the machine), with a fresh TT for each position.
pub fn run_depthtest(
    opts: &EngineOptions,
    limits: &Limits,
    mut progress: impl FnMut(&str),
) -> Vec<i32> {
    let mut searcher = Searcher::new(opts, Arc::new(AtomicBool::new(false)));
    let mut out = Vec::new();
    for (i, fen) in BENCH_FENS.iter().enumerate() {
        let Ok(pos) = Position::from_fen(fen) else {
            continue;
        };
        searcher.clear();
        let r = searcher.search(&pos, limits);
        progress(&format!(
            "position {:>2} depth {} nodes {} time {} ms",
            i + 1,
            r.depth,
            r.nodes,
            r.elapsed_ms
        ));
        out.push(r.depth);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_positions_are_valid_and_varied() {
        assert!(BENCH_FENS.len() >= 50, "{}", BENCH_FENS.len());
        for fen in BENCH_FENS {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{e}"));
            let mut n = 0;
            pos.board.generate_moves(|m| {
                n += m.len();
                false
            });
            assert!(n > 0, "no legal move in {fen}");
        }
    }

    #[test]
    fn epd_positions_are_read_and_spread() {
        let text = "# comment\n\n".to_string()
            + &BENCH_FENS[..10]
                .iter()
                .map(|f| {
                    let four: Vec<&str> = f.split_whitespace().take(4).collect();
                    format!("{} hmvc 3; id \"x\";", four.join(" "))
                })
                .collect::<Vec<_>>()
                .join("\n");
        let all = epd_fens(&text, None).unwrap();
        assert_eq!(all.len(), 10);
        assert!(all[0].ends_with(" 0 1"));
        let some = epd_fens(&text, Some(3)).unwrap();
        assert_eq!(some, vec![all[0].clone(), all[3].clone(), all[6].clone()]);
        let err = epd_fens("8/8/8 w - -\n", None).unwrap_err();
        assert!(err.starts_with("line 1: "), "{err}");
    }

    #[test]
    fn bench_is_deterministic() {
        let opts = EngineOptions::default();
        let a = run_bench(&opts, 4, |_| {});
        let b = run_bench(&opts, 4, |_| {});
        assert_eq!(a.nodes, b.nodes);
        assert!(a.nodes > 0);
    }
}
