//! The few fields of a UCI `info` line the runner needs (score, depth, seldepth, time, nodes,
//! nps, hashfull, the principal variation), read by a small hand scan.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

/// An evaluation from the mover's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Eval {
    /// Centipawns.
    Cp(i32),
    /// Mate in N moves (negative: the mover gets mated).
    Mate(i32),
}

impl Eval {
    /// Centipawns, with mates mapped far outside any real evaluation (+-100000 minus distance).
    pub fn as_cp(self) -> i32 {
        match self {
            Eval::Cp(cp) => cp,
            Eval::Mate(n) if n > 0 => 100_000 - n,
            Eval::Mate(n) => -100_000 - n,
        }
    }
}

/// Fields found in one info line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InfoSummary {
    pub score: Option<Eval>,
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub time_ms: Option<u64>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    /// Permille of the hash table in use.
    pub hashfull: Option<u32>,
}

/// Scans an `info ...` line. Every field is read wherever it stands (a later copy of a field
/// replaces an earlier one): the moves of `pv`, `refutation` and `currline` are not keywords, so
/// they are skipped like any unknown token and the list ends at the next keyword, as engines do
/// not always put `pv` last. `string` takes the rest of the line.
pub fn parse_info(line: &str) -> InfoSummary {
    let mut out = InfoSummary::default();
    let mut it = line.split_ascii_whitespace();
    if it.next() != Some("info") {
        return out;
    }
    while let Some(tok) = it.next() {
        match tok {
            "depth" => out.depth = it.next().and_then(|v| v.parse().ok()),
            "seldepth" => out.seldepth = it.next().and_then(|v| v.parse().ok()),
            "time" => out.time_ms = it.next().and_then(|v| v.parse().ok()),
            "nodes" => out.nodes = it.next().and_then(|v| v.parse().ok()),
            "nps" => out.nps = it.next().and_then(|v| v.parse().ok()),
            "hashfull" => out.hashfull = it.next().and_then(|v| v.parse().ok()),
            "score" => {
                out.score = match (it.next(), it.next().and_then(|v| v.parse::<i32>().ok())) {
                    (Some("cp"), Some(v)) => Some(Eval::Cp(v)),
                    (Some("mate"), Some(v)) => Some(Eval::Mate(v)),
                    _ => out.score,
                }
            }
            // Free text runs to the end of the line.
            "string" => break,
            _ => {}
        }
    }
    out
}

/// The principal variation of an `info` line: the moves after `pv` up to the next keyword a
/// UCI info line may carry after it (engines put `pv` last, but not all do), at most 64 moves of
/// at most 5 characters each (a longer token is not a move: the list ends there).
pub fn parse_pv(line: &str) -> Option<String> {
    let mut it = line.split_ascii_whitespace();
    if it.next() != Some("info") {
        return None;
    }
    it.by_ref().take_while(|t| *t != "string").find(|t| *t == "pv")?;
    let moves: Vec<&str> = it.take_while(|t| is_uci_move(t)).take(64).collect();
    (!moves.is_empty()).then(|| moves.join(" "))
}

/// A token shaped like a UCI move (`e2e4`, `e7e8q`, `0000`).
fn is_uci_move(t: &str) -> bool {
    let square = |f: &u8, r: &u8| (b'a'..=b'h').contains(f) && (b'1'..=b'8').contains(r);
    match t.as_bytes() {
        b"0000" => true,
        [f1, r1, f2, r2] => square(f1, r1) && square(f2, r2),
        [f1, r1, f2, r2, p] => square(f1, r1) && square(f2, r2) && b"nbrq".contains(p),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn scans_stockfish_lines() {
        let i = parse_info(
            "info depth 12 seldepth 17 multipv 1 score cp -31 upperbound nodes 41234 nps 900000 hashfull 3 tbhits 0 time 45 pv e2e4 e7e5",
        );
        assert_eq!(i.depth, Some(12));
        assert_eq!(i.seldepth, Some(17));
        assert_eq!(i.score, Some(Eval::Cp(-31)));
        assert_eq!(i.nodes, Some(41234));
        assert_eq!(i.time_ms, Some(45));
        assert_eq!((i.nps, i.hashfull), (Some(900000), Some(3)));
        let m = parse_info("info depth 20 score mate -3 time 7 pv a1a2");
        assert_eq!(m.score, Some(Eval::Mate(-3)));
        assert!(Eval::Mate(-3).as_cp() < -99_000 && Eval::Mate(2).as_cp() > 99_000);
    }

    #[test]
    fn reads_fields_after_the_principal_variation() {
        let stockfish = "info depth 24 seldepth 31 multipv 1 score cp 27 wdl 61 876 63 nodes 1460023 nps 1225040 hashfull 512 tbhits 0 time 1192 pv e2e4 e7e5 g1f3 b8c6 f1b5";
        let i = parse_info(stockfish);
        assert_eq!((i.depth, i.seldepth, i.score), (Some(24), Some(31), Some(Eval::Cp(27))));
        assert_eq!(
            (i.nodes, i.nps, i.hashfull, i.time_ms),
            (Some(1460023), Some(1225040), Some(512), Some(1192))
        );
        // The same fields with the PV first, or in the middle.
        let moved = "info pv e2e4 e7e5 g1f3 depth 24 seldepth 31 score cp 27 nodes 1460023 nps 1225040 hashfull 512 time 1192";
        assert_eq!(parse_info(moved), i);
        let middle = "info depth 24 seldepth 31 pv e2e4 e7e5 g1f3 score cp 27 nodes 1460023 nps 1225040 hashfull 512 time 1192";
        assert_eq!(parse_info(middle), i);
        let s = parse_info("info depth 9 pv e2e4 e7e5 score mate 4");
        assert_eq!(s.score, Some(Eval::Mate(4)));
        let n = parse_info("info depth 9 score cp 3 pv e7e8q a2a1n nodes 77 time 4");
        assert_eq!((n.nodes, n.time_ms, n.score), (Some(77), Some(4), Some(Eval::Cp(3))));
        // A later copy of a field replaces an earlier one.
        let twice = parse_info("info depth 20 score mate -3 time 7 pv a1a2 score cp 5");
        assert_eq!(twice.score, Some(Eval::Cp(5)));
        // `refutation` and `currline` lists end at the next keyword too.
        let r = parse_info("info refutation d1h5 g6h5 depth 3 currline 1 e2e4 e7e5 nodes 9");
        assert_eq!((r.depth, r.nodes), (Some(3), Some(9)));
    }

    #[test]
    fn string_takes_the_rest_of_the_line() {
        let i = parse_info("info depth 5 pv e2e4 string score cp 900 nodes 1 depth 99");
        assert_eq!(i.depth, Some(5));
        assert_eq!((i.score, i.nodes), (None, None));
        let j = parse_info("info nodes 12 string pv e2e4 score cp 1");
        assert_eq!((j.nodes, j.score), (Some(12), None));
        assert_eq!(parse_pv("info nodes 12 string pv e2e4 score cp 1"), None);
    }

    #[test]
    fn reads_the_principal_variation() {
        let l = "info depth 3 score cp 5 nodes 10 pv e2e4 e7e5 g1f3 b8c6";
        assert_eq!(parse_pv(l).as_deref(), Some("e2e4 e7e5 g1f3 b8c6"));
        let l = "info depth 3 pv e7e8q a2a1n nodes 77 hashfull 5";
        assert_eq!(parse_pv(l).as_deref(), Some("e7e8q a2a1n"));
        assert_eq!(parse_pv("info depth 3 score cp 5"), None);
        assert_eq!(parse_pv("info string pv e2e4"), None);
        assert_eq!(parse_pv("info pv {} \"x"), None);
    }

    #[test]
    fn tolerates_garbage() {
        assert_eq!(parse_info("hello world"), InfoSummary::default());
        assert_eq!(parse_info("info string score cp 5"), InfoSummary::default());
        let i = parse_info("info depth x score cp y time");
        assert_eq!(i, InfoSummary::default());
        assert_eq!(parse_info("info score cp 12").score, Some(Eval::Cp(12)));
    }
}
