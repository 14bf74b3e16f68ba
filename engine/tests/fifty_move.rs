//! The fifty-move rule must not hide a mate. A mate delivered
//! with the 100th half-move is a mate; any other move reaching 100 is a draw.

use engine::options::EngineOptions;
use engine::score::MATE;
use engine::search::search_fen_depth;

#[test]
fn mate_on_the_hundredth_half_move_is_a_mate() {
    // Halfmove clock 99: Ra8# makes it 100 and mates.
    let fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80";
    for depth in [1, 4] {
        let r = search_fen_depth(&EngineOptions::default(), fen, depth).unwrap();
        assert_eq!(r.best_move.map(|m| m.to_string()).as_deref(), Some("a1a8"), "depth {depth}");
        assert_eq!(r.score, MATE - 1, "depth {depth}");
    }
}

#[test]
fn a_check_that_is_not_mate_on_the_hundredth_half_move_is_a_draw() {
    // Without the pawns Ra8+ is no mate: every move reaches 100 half-moves.
    let fen = "6k1/8/8/8/8/8/8/R5K1 w - - 99 80";
    let r = search_fen_depth(&EngineOptions::default(), fen, 4).unwrap();
    assert_eq!(r.score, 0, "{r:?}");
}
