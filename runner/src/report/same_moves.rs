//! Game pairs whose engines played the same moves: at a node or depth limit two deterministic
//! engines that do not differ where the games go (MPC that never fires, an option that changes
//! nothing) play each opening's two games (colours reversed) move for move alike, and the run
//! measures nothing. A pair counts here when its two games repeat each other's moves
//! (`identical`), or when every move both games played is the same and one of them ended sooner
//! (`alike`: an adjudication or a score that differed ended it, the moves did not).

use crate::report::figures::MIN_PAIRS;
pub use crate::store::formats::SameMoves;

/// The share of complete pairs (out of at least [`MIN_PAIRS`]) at and above which the runner says
/// the engines may not differ: one pair in five.
pub const SAME_MOVES_SHARE: f64 = 0.2;

/// How a pair's two games compare, move for move (book moves included: one opening).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairMoves {
    /// The same moves in both games.
    Identical,
    /// One game's moves are the other's first moves: the engines played every move alike.
    Alike,
    /// The games went apart.
    Differ,
}

/// Compares the moves of a pair's two games.
pub fn compare(a: &[String], b: &[String]) -> PairMoves {
    let n = a.len().min(b.len());
    if a[..n] != b[..n] {
        PairMoves::Differ
    } else if a.len() == b.len() {
        PairMoves::Identical
    } else {
        PairMoves::Alike
    }
}

impl SameMoves {
    pub fn add(&mut self, m: PairMoves) {
        match m {
            PairMoves::Identical => self.identical += 1,
            PairMoves::Alike => self.alike += 1,
            PairMoves::Differ => {}
        }
    }

    /// Pairs of either kind.
    pub fn pairs(&self) -> u64 {
        self.identical + self.alike
    }

    /// The note said once (progress, summary.json's warnings, `runner report`, the page) when
    /// at least [`MIN_PAIRS`] pairs are complete and [`SAME_MOVES_SHARE`] of them or more
    /// played the same moves; `None` otherwise.
    pub fn note(&self, complete_pairs: u64) -> Option<String> {
        let n = self.pairs();
        let enough = complete_pairs >= MIN_PAIRS && n > 0;
        (enough && n as f64 >= SAME_MOVES_SHARE * complete_pairs as f64).then(|| {
            format!(
                "{n} of {complete_pairs} pairs: the engines played the same moves; they may not \
                 differ at this limit"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn pairs_are_compared_move_for_move() {
        let a = moves("e2e4 e7e5 g1f3");
        assert_eq!(compare(&a, &a), PairMoves::Identical);
        assert_eq!(compare(&a, &moves("e2e4 e7e5")), PairMoves::Alike);
        assert_eq!(compare(&moves("e2e4"), &a), PairMoves::Alike);
        assert_eq!(compare(&a, &moves("e2e4 e7e6 g1f3")), PairMoves::Differ);
        assert_eq!(compare(&a, &moves("d2d4")), PairMoves::Differ);
    }

    /// Said from 10 complete pairs on, at one pair in five or more.
    #[test]
    fn the_note_waits_for_ten_pairs_and_a_fifth_of_them() {
        let s = SameMoves { identical: 2, alike: 1 };
        assert_eq!(s.note(9), None, "fewer than 10 pairs");
        assert_eq!(
            s.note(15).as_deref(),
            Some(
                "3 of 15 pairs: the engines played the same moves; they may not differ at this limit"
            )
        );
        assert_eq!(s.note(16), None, "3 of 16 is under 20 %");
        assert_eq!(SameMoves::default().note(100), None);
    }
}
