//! `badengine tunable`: an engine with one UCI option `X` (spin 0..100, default 50) whose playing
//! strength peaks at X = 37 and falls off smoothly, so tuners and sweeps can be checked against
//! a known optimum.
//!
//! Every move is chosen by a two-ply material search (mates seen at both plies, ties broken at
//! random): the best move, except that with probability `((X - 37) / 160)^2` it plays a blunder,
//! the move that search likes least. (A first form, a uniformly random move with
//! probability `min(1, ((X - 37) / 50)^2)`, was measured first: 200 games each against X = 50 gave
//! Elo -676, -69, +135 (X = 37), -215, -727, -849 at X = 0, 20, 37, 60, 80, 100, scores of 1-2% at
//! the ends, where a fitted curve learns nothing. The blunder form falls off more gently: -230,
//! -44, +52 (X = 40), -78, -291, -443 at X = 0, 20, 40, 60, 80, 100.) Every random draw comes from a generator seeded
//! by the position (its FEN) and X, so the engine is deterministic: the same position with the
//! same X always gets the same move, whatever ran before. It answers every `go` at once.

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, Role};

/// Where the strength peaks.
pub const OPTIMUM: i64 = 37;
/// The option's declaration.
pub const OPTION_LINE: &str = "option name X type spin default 50 min 0 max 100";

const MATE: i32 = 100_000;

/// Chance of a blunder at `x`.
pub fn blunder_probability(x: i64) -> f64 {
    let d = (x - OPTIMUM) as f64 / 160.0;
    (d * d).min(1.0)
}

/// The value of `setoption name X value V` (clamped to 0..100), or `None` for another option.
pub fn parse_x(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("setoption")?.trim();
    let rest = rest.strip_prefix("name")?.trim();
    let (name, value) = rest.split_once(" value ")?;
    if name.trim() != "X" {
        return None;
    }
    Some(value.trim().parse::<f64>().ok()?.round().clamp(0.0, 100.0) as i64)
}

/// A splitmix64 stream: small, seedable, good enough for test play.
struct Rng(u64);

impl Rng {
    fn new(pos: &Chess, x: i64) -> Rng {
        let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
        // FNV-1a over the FEN, then X mixed in.
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in fen.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h ^ (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight | Role::Bishop => 300,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    }
}

/// Material from the side to move's point of view, plus a point per rank a pawn has advanced
/// (so that won endings make progress).
fn material(pos: &Chess) -> i32 {
    let board = pos.board();
    let mut white = 0;
    for sq in board.occupied() {
        let Some(piece) = board.piece_at(sq) else { continue };
        let mut v = value(piece.role);
        if piece.role == Role::Pawn {
            let rank = u32::from(sq.rank()) as i32;
            v += if piece.color.is_white() { rank - 1 } else { 6 - rank };
        }
        white += if piece.color.is_white() { v } else { -v };
    }
    if pos.turn().is_white() { white } else { -white }
}

/// Score of `pos` for the side to move at the leaf (mate and stalemate seen).
fn leaf(pos: &Chess) -> i32 {
    if pos.is_checkmate() {
        -MATE
    } else if pos.is_stalemate() {
        0
    } else {
        material(pos)
    }
}

/// Score of playing `m` in `pos`, for the mover: the opponent's best reply by material.
fn two_ply(pos: &Chess, m: Move) -> i32 {
    let mut after = pos.clone();
    after.play_unchecked(m);
    let replies = after.legal_moves();
    if replies.is_empty() {
        return if after.is_check() { MATE } else { 0 };
    }
    let mut best_reply = i32::MIN;
    for r in replies {
        let mut p = after.clone();
        p.play_unchecked(r);
        // `leaf` is from the mover's side (to move again after the reply).
        best_reply = best_reply.max(-leaf(&p));
    }
    -best_reply
}

/// The move (UCI) and its score for the side to move; `None` when there is no legal move.
pub fn choose(pos: &Chess, x: i64) -> Option<(String, i32)> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let mut rng = Rng::new(pos, x);
    let blunder = rng.unit() < blunder_probability(x);
    let scored: Vec<(Move, i32)> = moves.iter().map(|&m| (m, two_ply(pos, m))).collect();
    let target = if blunder {
        scored.iter().map(|s| s.1).min().unwrap_or(0)
    } else {
        scored.iter().map(|s| s.1).max().unwrap_or(0)
    };
    let ties: Vec<&(Move, i32)> = scored.iter().filter(|s| s.1 == target).collect();
    let &(pick, score) = ties[rng.below(ties.len())];
    let cp = score.clamp(-30_000, 30_000);
    Some((UciMove::from_move(pick, CastlingMode::Standard).to_string(), cp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blunders_are_rarest_at_the_optimum() {
        assert_eq!(blunder_probability(37), 0.0);
        assert!(blunder_probability(50) < blunder_probability(80));
        assert!(blunder_probability(100) < 0.2);
    }

    #[test]
    fn takes_a_free_queen_and_mates_in_one() {
        let pos: Chess = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(choose(&pos, OPTIMUM).unwrap().0, "d2d5");
        let mate: Chess = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        assert_eq!(choose(&mate, OPTIMUM).unwrap().0, "a1a8");
    }

    #[test]
    fn same_position_same_x_same_move() {
        let pos = Chess::default();
        for x in [0, 37, 80] {
            assert_eq!(choose(&pos, x), choose(&pos, x));
        }
        assert_eq!(parse_x("setoption name X value 42"), Some(42));
        assert_eq!(parse_x("setoption name Hash value 42"), None);
    }
}
