//! Search behaviour: mates found with the right distance (checked against an
//! exhaustive solver), material won, repetition scored as a draw, and MPC
//! with thresholds too large to cut equal to MPC off.

use cozy_chess::Board;
use engine::options::EngineOptions;
use engine::position::Position;
use engine::score::MATE;
use engine::search::{SearchResult, search_fen_depth};

fn search(fen: &str, depth: i32, opts: &EngineOptions) -> SearchResult {
    search_fen_depth(opts, fen, depth).unwrap()
}

/// Whether the side to move can force mate within `moves` moves (brute force).
fn mates_within(board: &Board, moves: u32) -> bool {
    if moves == 0 {
        return false;
    }
    let mut found = false;
    board.generate_moves(|ms| {
        for mv in ms {
            let mut b = board.clone();
            b.play_unchecked(mv);
            if defender_lost(&b, moves - 1) {
                found = true;
                return true;
            }
        }
        false
    });
    found
}

/// Whether every reply of the side to move loses to mate within `moves` more moves.
fn defender_lost(board: &Board, moves: u32) -> bool {
    let mut replies = Vec::new();
    board.generate_moves(|ms| {
        replies.extend(ms);
        false
    });
    if replies.is_empty() {
        return !board.checkers().is_empty();
    }
    replies.into_iter().all(|mv| {
        let mut b = board.clone();
        b.play_unchecked(mv);
        mates_within(&b, moves)
    })
}

fn shortest_mate(fen: &str, max: u32) -> Option<u32> {
    let b = Board::from_fen(fen, false).unwrap();
    (1..=max).find(|&n| mates_within(&b, n))
}

fn assert_mate_in(fen: &str, n: u32, depth: i32) {
    assert_eq!(shortest_mate(fen, n), Some(n), "solver disagrees on {fen}");
    let r = search(fen, depth, &EngineOptions::default());
    assert_eq!(r.score, MATE - (2 * n as i32 - 1), "engine score on {fen}");
    // The first move must keep the mate: the defender is lost after it.
    let mut b = Board::from_fen(fen, false).unwrap();
    b.play_unchecked(r.best_move.unwrap());
    assert!(defender_lost(&b, n - 1), "{:?} does not mate in {n}", r.best_move);
}

#[test]
fn mate_in_one() {
    assert_mate_in("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, 4);
    assert_mate_in("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", 1, 4);
}

#[test]
fn mate_in_two() {
    // Rook ladder.
    assert_mate_in("7k/8/8/8/8/8/8/RR4K1 w - - 0 1", 2, 6);
}

#[test]
fn mate_in_three() {
    // A bishop-and-rook combination, and a two-rook ladder.
    assert_mate_in("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", 3, 8);
    assert_mate_in("8/8/8/8/7k/8/R7/1R4K1 w - - 0 1", 3, 8);
}

#[test]
fn free_queen_is_taken() {
    let r = search("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1", 6, &EngineOptions::default());
    assert_eq!(r.best_move.unwrap().to_string(), "d2d5");
    assert!(r.score > 300, "{}", r.score);
}

#[test]
fn perpetual_check_is_a_draw() {
    // White is lost on material but draws by repeating checks from h5 and e8.
    let r = search("7k/6p1/8/8/1r6/8/q4PPP/3Q2K1 w - - 0 1", 8, &EngineOptions::default());
    assert_eq!(r.score, 0, "{:?}", r);
}

#[test]
fn repetition_in_game_history_counts() {
    let fen = "7k/6p1/8/8/1r6/8/q4PPP/3Q2K1 w - - 0 1";
    let limits = engine::timeman::Limits { depth: Some(1), ..Default::default() };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut searcher = engine::search::Searcher::new(&EngineOptions::default(), stop);
    // After Qh5+ Kg8 Qe8+ Kh7 Qh5+ Kg8, Qe8+ repeats a position of the game:
    // a draw even at depth 1, although White is a rook down.
    let mut pos = Position::from_fen(fen).unwrap();
    pos.play_uci_moves(["d1h5", "h8g8", "h5e8", "g8h7", "e8h5", "h7g8"], false).unwrap();
    let with_history = searcher.search(&pos, &limits);
    assert_eq!(with_history.score, 0, "{with_history:?}");
    // The same board without the history is just bad for White.
    let fresh = Position { board: pos.board.clone(), history: Vec::new() };
    searcher.clear();
    let without = searcher.search(&fresh, &limits);
    assert!(without.score < -200, "{without:?}");
}

#[test]
fn mpc_with_unreachable_thresholds_equals_mpc_off() {
    let mut off = EngineOptions::default();
    off.set("MPC", Some("false")).unwrap();
    let mut huge = EngineOptions::default();
    huge.set("t_mid", Some("100")).unwrap();
    huge.set("t_end", Some("100")).unwrap();
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ] {
        let a = search(fen, 8, &off);
        let b = search(fen, 8, &huge);
        assert_eq!(a.best_move, b.best_move, "{fen}");
        assert_eq!(a.score, b.score, "{fen}");
        assert_eq!(a.nodes, b.nodes, "{fen}");
        assert_eq!(b.mpc.tries, 0);
    }
}

#[test]
fn mpc_cuts_with_default_thresholds() {
    let fen = "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14";
    let r = search(fen, 9, &EngineOptions::default());
    assert!(r.mpc.tries > 0 && r.mpc.cuts() > 0, "{:?}", r.mpc);
    assert!(r.mpc.cuts() <= r.mpc.tries);
    let mut single = EngineOptions::default();
    single.set("ProbCut", Some("single")).unwrap();
    let s = search(fen, 9, &single);
    assert!(s.mpc.tries > 0, "{:?}", s.mpc);
}

#[test]
fn fixed_depth_search_is_deterministic() {
    let fen = "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15";
    let a = search(fen, 8, &EngineOptions::default());
    let b = search(fen, 8, &EngineOptions::default());
    assert_eq!((a.best_move, a.score, a.nodes), (b.best_move, b.score, b.nodes));
}
