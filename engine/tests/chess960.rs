//! Chess960: FEN castling fields (Shredder-FEN and X-FEN), king-takes-rook
//! move notation, and perft through the engine's move picker against counts
//! from an independent move generator.

use cozy_chess::Board;
use engine::options::EngineOptions;
use engine::perft::{perft_picker, perft_plain};
use engine::position::{Position, format_move, parse_fen_960, parse_move};
use engine::search::Searcher;
use engine::timeman::Limits;

/// Positions with their perft counts for depths 1..=4, computed outside the
/// repository with python-chess 1.11.2 (`chess.Board(fen, chess960=True)`, a
/// plain recursive perft over `legal_moves`). The second FEN column is the
/// Shredder-FEN python-chess reads the position as.
const PERFT_960: &[(&str, &str, [u64; 4])] = &[
    (
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        [21, 528, 12_189, 326_672],
    ),
    (
        "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
        "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
        [21, 807, 18_002, 667_366],
    ),
    (
        "nrkbqrbn/pppppppp/8/8/8/8/PPPPPPPP/NRKBQRBN w KQkq - 0 1",
        "nrkbqrbn/pppppppp/8/8/8/8/PPPPPPPP/NRKBQRBN w FBfb - 0 1",
        [18, 324, 6_658, 136_313],
    ),
    (
        "1r2k1r1/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        "1r2k1r1/8/8/8/8/8/8/R3K2R w HAgb - 0 1",
        [25, 617, 15_138, 369_764],
    ),
    (
        "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/4KR1R w F - 0 1",
        "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/4KR1R w F - 0 1",
        [20, 440, 8_696, 189_792],
    ),
    (
        "1rk2r2/8/8/8/8/8/8/1RK2R2 w BFbf - 0 1",
        "1rk2r2/8/8/8/8/8/8/1RK2R2 w FBfb - 0 1",
        [23, 442, 9_859, 210_648],
    ),
    (
        "r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1",
        "r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1",
        [24, 479, 11_069, 242_097],
    ),
];

#[test]
fn perft_960_through_the_move_picker() {
    for (fen, shredder, counts) in PERFT_960 {
        let b = parse_fen_960(fen).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b, parse_fen_960(shredder).unwrap(), "X-FEN and Shredder-FEN of {fen}");
        assert_eq!(format!("{b:#}"), *shredder);
        for (d, &want) in counts.iter().enumerate() {
            assert_eq!(perft_picker(&b, d as u32 + 1), want, "picker perft {} of {fen}", d + 1);
        }
        assert_eq!(perft_plain(&b, 4), counts[3], "plain perft 4 of {fen}");
    }
}

#[test]
fn xfen_and_shredder_castling_fields() {
    // An inner rook is named by its file in X-FEN: F next to an outer H rook.
    let b = parse_fen_960("rk2r3/pppppppp/8/8/8/8/PPPPPPPP/4KR1R w F - 0 1").unwrap();
    assert_eq!(b.castle_rights(cozy_chess::Color::White).short, Some(cozy_chess::File::F));
    // K names the outermost rook: H here, not F.
    let b = parse_fen_960("rk2r3/pppppppp/8/8/8/8/PPPPPPPP/4KR1R w K - 0 1").unwrap();
    assert_eq!(b.castle_rights(cozy_chess::Color::White).short, Some(cozy_chess::File::H));
    // Without move counters.
    assert!(parse_fen_960("r5kr/8/8/8/8/8/8/R5KR w HAha -").is_ok());
    for bad in [
        "r5kr/8/8/8/8/8/8/R5KR w X - 0 1",
        "r5kr/8/8/8/8/8/8/R5KR w Kk1 - 0 1",
        "r5kr/8/8/8/8/8/8/6KR w Q - 0 1",
        "r5kr/8/8/8/8/8/8/R5KR w HH - 0 1",
        "r5kr/8/8/8/8/8/8/R5KR w C - 0 1",
        "r5kr/8/8/8/8/8/8/R5KR w HAha - 0",
        "",
        "8/8/8/8/8/8/8/8 w - - 0 1",
    ] {
        assert!(parse_fen_960(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn castling_is_read_and_written_as_king_takes_rook() {
    let b = parse_fen_960("r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1").unwrap();
    // Short castling with the king already on g1: g1h1; long: g1a1.
    for (uci, after) in [
        ("g1h1", "r5kr/8/8/8/8/8/8/R4RK1 b ha - 1 1"),
        ("g1a1", "r5kr/8/8/8/8/8/8/2KR3R b ha - 1 1"),
    ] {
        let mv = parse_move(&b, uci, true).unwrap_or_else(|| panic!("{uci}"));
        assert_eq!(format_move(&b, mv, true), uci);
        let mut c = b.clone();
        c.play(mv);
        assert_eq!(format!("{c:#}"), after);
    }
    // In standard mode the same position keeps standard notation rules.
    let std = Board::default();
    let mv = parse_move(&std, "e2e4", true).unwrap();
    assert_eq!(format_move(&std, mv, true), "e2e4");
}

#[test]
fn search_returns_a_legal_960_move() {
    let mut opts = EngineOptions::default();
    opts.set("UCI_Chess960", Some("true")).unwrap();
    for (fen, _, _) in PERFT_960 {
        let pos = Position::from_fen_mode(fen, true).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut s = Searcher::new(&opts, stop);
        let r = s.search(&pos, &Limits { depth: Some(5), ..Default::default() });
        let mv = r.best_move.expect("a move");
        assert!(pos.board.is_legal(mv), "{fen}: {mv}");
    }
}
