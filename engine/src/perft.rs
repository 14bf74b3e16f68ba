//! Perft (leaf-node counts), run through the engine's own staged move picker so
//! that tests prove the picker yields exactly the legal moves, each once.

use cozy_chess::{Board, Move};

use crate::history::History;
use crate::movepick::MovePicker;

/// Counts leaves at `depth` using only cozy-chess move generation.
pub fn perft_plain(board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut n = 0;
    board.generate_moves(|moves| {
        if depth == 1 {
            n += moves.len() as u64;
        } else {
            for mv in moves {
                let mut b = board.clone();
                b.play_unchecked(mv);
                n += perft_plain(&b, depth - 1);
            }
        }
        false
    });
    n
}

/// Counts leaves at `depth` iterating the staged move picker. The picker gets
/// a "TT move" and killers taken from sibling nodes (often illegal here) to
/// exercise its legality checks and de-duplication.
pub fn perft_picker(board: &Board, depth: u32) -> u64 {
    let history = History::default();
    let mut hints = vec![(None, [None, None]); depth as usize + 1];
    perft_picker_rec(board, depth, 0, &history, &mut hints)
}

type Hints = (Option<Move>, [Option<Move>; 2]);

fn perft_picker_rec(
    board: &Board,
    depth: u32,
    ply: usize,
    history: &History,
    hints: &mut Vec<Hints>,
) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (tt, killers) = hints[ply];
    let mut picker = MovePicker::new(tt, killers);
    let mut n = 0;
    let mut first = None;
    let mut last_quiet = None;
    while let Some(mv) = picker.next(board, history) {
        first.get_or_insert(mv);
        if !crate::movepick::is_noisy(board, mv) {
            last_quiet = Some(mv);
        }
        let mut b = board.clone();
        b.play_unchecked(mv);
        n += perft_picker_rec(&b, depth - 1, ply + 1, history, hints);
    }
    hints[ply] = (first, [last_quiet, killers[0]]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standard perft suite (start, Kiwipete, positions 3 to 6).
    const SUITE: &[(&str, &[u64])] = &[
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &[20, 400, 8902, 197_281]),
        (
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            &[48, 2039, 97_862],
        ),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", &[14, 191, 2812, 43_238]),
        ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", &[6, 264, 9467]),
        ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", &[44, 1486, 62_379]),
        (
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            &[46, 2079, 89_890],
        ),
    ];

    #[test]
    fn perft_suite_through_the_move_picker() {
        for (fen, counts) in SUITE {
            let b = Board::from_fen(fen, false).unwrap();
            for (d, &want) in counts.iter().enumerate() {
                let d = d as u32 + 1;
                assert_eq!(perft_picker(&b, d), want, "picker perft {d} of {fen}");
            }
            let d = counts.len() as u32;
            assert_eq!(perft_plain(&b, d), counts[d as usize - 1], "plain perft of {fen}");
        }
    }
}
