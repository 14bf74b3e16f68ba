//! Score constants and mate-score helpers. Scores are centipawns from the side
//! to move's point of view; mates are `MATE - plies`.

/// Larger than any score.
pub const INF: i32 = 32_000;
/// Score of delivering mate at the root (mate in 0 plies).
pub const MATE: i32 = 31_000;
/// Deepest ply the search can reach.
pub const MAX_PLY: usize = 128;
/// Any score at or beyond this magnitude is a mate score.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32 * 2;
/// Static evaluations are clamped strictly inside this magnitude, so any
/// non-mate search score lies in `(-EVAL_LIMIT, EVAL_LIMIT)`.
pub const EVAL_LIMIT: i32 = 4_000;
/// Score of a draw.
pub const DRAW: i32 = 0;

/// Whether `score` denotes a forced mate (for either side).
pub fn is_mate(score: i32) -> bool {
    score.abs() >= MATE_BOUND
}

/// Mate score as stored in the TT: relative to the node, not the root.
pub fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// Inverse of [`to_tt`].
pub fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// UCI form of a score: `cp N` or `mate M` (M in moves, negative when mated).
pub fn uci_score(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_round_trip_through_tt() {
        for ply in [0usize, 3, 17] {
            for s in [MATE - 5, -MATE + 9, 120, -40, 0] {
                assert_eq!(from_tt(to_tt(s, ply), ply), s);
            }
        }
        assert_eq!(to_tt(MATE - 7, 4), MATE - 3);
    }

    #[test]
    fn uci_mate_notation() {
        assert_eq!(uci_score(MATE - 1), "mate 1");
        assert_eq!(uci_score(MATE - 3), "mate 2");
        assert_eq!(uci_score(-MATE + 2), "mate -1");
        assert_eq!(uci_score(35), "cp 35");
    }
}
