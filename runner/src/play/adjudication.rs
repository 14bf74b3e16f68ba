//! Ending games early on the engines' own evaluations (draw, resign) or on a move limit: the
//! rules come from the plan ([`crate::plan::adjudication`]), tracked here move by move.
//!
//! The counters follow cutechess-cli's documented rules (its `-draw` and `-resign`), so the same
//! numbers end the same games at the same ply:
//! - draw: one counter of consecutive plies (both sides' moves) whose mover scored within
//!   `score` cp of zero; a ply without a score or outside the window sets it to 0, and a capture
//!   or a pawn move sets it to 0 before its own score is counted (so that ply counts 1). The game
//!   is drawn after a ply at which the counter is at least 2 x `movecount` and the plies played
//!   from the opening's position (book moves included), halved, are at least `movenumber`.
//! - resign: per side, consecutive own moves scored at most -`score` (and, for `twosided`, at
//!   least +`score`); a move without a score sets both of its side's counters to 0. A side loses
//!   after its own move that brings its first counter to `movecount`, when (twosided) the other
//!   side's second counter is at `movecount` too.
//! - The draw is looked at before the resignation, as cutechess-cli does.

use shakmaty::Color;

use crate::plan::adjudication::Adjudication;
use crate::play::termination::Termination;
use crate::play::uci_info::Eval;

/// Tracks one game's evaluations against the rules.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Adjudication,
    draw_plies: u32,
    /// Per side (White, Black): consecutive own moves at or below -score.
    resign_moves: [u32; 2],
    /// Per side: consecutive own moves at or above +score (used by `twosided`).
    winning_moves: [u32; 2],
}

/// A decision: the ending and the winner (`None` = draw).
pub type Decision = (Termination, Option<Color>);

/// What the adjudicator needs to know of one engine move.
#[derive(Clone, Copy, Debug)]
pub struct MovePlayed {
    pub mover: Color,
    pub eval: Option<Eval>,
    /// A capture or a pawn move (the fifty-move counter went back to 0).
    pub zeroing: bool,
    /// Plies from the opening's position, book moves included, this one too.
    pub total_plies: u32,
    /// The engines' plies only, this one too.
    pub engine_plies: u32,
}

impl Adjudicator {
    pub fn new(rules: Adjudication) -> Adjudicator {
        Adjudicator { rules, draw_plies: 0, resign_moves: [0; 2], winning_moves: [0; 2] }
    }

    /// Called after each legal engine move that did not end the game by the rules.
    pub fn on_move(&mut self, m: MovePlayed) -> Option<Decision> {
        let idx = m.mover as usize;
        if let Some(r) = self.rules.draw {
            if m.zeroing {
                self.draw_plies = 0;
            }
            match m.eval {
                Some(e) if e.as_cp().abs() <= r.score => self.draw_plies += 1,
                _ => self.draw_plies = 0,
            }
            if m.total_plies / 2 >= r.movenumber && self.draw_plies >= 2 * r.movecount {
                return Some((Termination::AdjudicationDraw, None));
            }
        }
        if let Some(r) = self.rules.resign {
            let cp = m.eval.map(Eval::as_cp);
            let count = |c: &mut u32, hit: bool| *c = if hit { *c + 1 } else { 0 };
            count(&mut self.resign_moves[idx], cp.is_some_and(|cp| cp <= -r.score));
            count(&mut self.winning_moves[idx], cp.is_some_and(|cp| cp >= r.score));
            let other_agrees = !r.twosided || self.winning_moves[1 - idx] >= r.movecount;
            if self.resign_moves[idx] >= r.movecount && other_agrees {
                return Some((Termination::AdjudicationResign, Some(!m.mover)));
            }
        }
        if let Some(max) = self.rules.max_moves
            && m.engine_plies >= 2 * max
        {
            return Some((Termination::MaxMoves, None));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::adjudication::{DrawRule, ResignRule};

    /// One engine ply: the mover's score (`None`: no score) and whether it captured or moved a
    /// pawn.
    type Ply = (Option<i32>, bool);

    /// Feeds `plies` (White first, after `book` book plies) and returns the 1-based engine ply at
    /// which the game was adjudicated, with the decision.
    fn first_decision(rules: Adjudication, book: u32, plies: &[Ply]) -> Option<(u32, Decision)> {
        let mut a = Adjudicator::new(rules);
        for (i, &(cp, zeroing)) in plies.iter().enumerate() {
            let n = i as u32 + 1;
            let mover = if (book + n) % 2 == 1 { Color::White } else { Color::Black };
            let eval = cp.map(Eval::Cp);
            let m = MovePlayed { mover, eval, zeroing, total_plies: book + n, engine_plies: n };
            if let Some(d) = a.on_move(m) {
                return Some((n, d));
            }
        }
        None
    }

    fn draw(movenumber: u32, movecount: u32, score: i32) -> Adjudication {
        Adjudication { draw: Some(DrawRule { movenumber, movecount, score }), ..Default::default() }
    }

    fn resign(movecount: u32, score: i32, twosided: bool) -> Adjudication {
        let rule = ResignRule { movecount, score, twosided };
        Adjudication { resign: Some(rule), ..Default::default() }
    }

    const DRAWN: Decision = (Termination::AdjudicationDraw, None);

    /// The draw counter, as cutechess-cli keeps it: +1 for every ply (either side's) whose mover
    /// scored within `score` cp of zero, 0 after a ply outside the window or without a score;
    /// a capture or a pawn move first sets it to 0 and then counts its own ply (so it is 1
    /// after a quiet-scored capture). The game is drawn at the first ply where the counter is at
    /// least 2 x movecount and (plies from the opening's position) / 2 >= movenumber.
    /// movecount=3: six quiet plies. After five nothing happens, the sixth draws.
    #[test]
    fn draw_ends_at_exactly_two_movecount_quiet_plies() {
        let quiet = [(Some(5), false); 6];
        assert_eq!(first_decision(draw(1, 3, 10), 0, &quiet[..5]), None);
        assert_eq!(first_decision(draw(1, 3, 10), 0, &quiet), Some((6, DRAWN)));
        // The window is inclusive: -10 and +10 count, 11 sets the counter back to 0.
        let edge = [(Some(-10), false), (Some(10), false)];
        assert_eq!(first_decision(draw(0, 1, 10), 0, &edge), Some((2, DRAWN)));
        let out = [(Some(10), false), (Some(11), false), (Some(0), false), (Some(0), false)];
        assert_eq!(first_decision(draw(0, 1, 10), 0, &out), Some((4, DRAWN)));
        // A ply without a score sets it back to 0 as well.
        let unscored = [(Some(0), false), (None, false), (Some(0), false), (Some(0), false)];
        assert_eq!(first_decision(draw(0, 1, 10), 0, &unscored), Some((4, DRAWN)));
    }

    /// A capture or pawn move on the ply that would have drawn starts the count again: that ply
    /// counts 1, so the draw comes 2 x movecount - 1 plies later.
    #[test]
    fn a_capture_or_pawn_move_on_the_last_ply_resets_the_draw_count() {
        let mut plies = vec![(Some(5), false); 11];
        plies[5].1 = true;
        assert_eq!(first_decision(draw(1, 3, 10), 0, &plies[..10]), None);
        assert_eq!(first_decision(draw(1, 3, 10), 0, &plies), Some((11, DRAWN)));
    }

    /// movenumber counts full moves from the opening's position, book plies included: with 3
    /// book plies and movenumber=5 the draw waits for ply 10 of the game (engine ply 7), even
    /// though the counter was high enough long before.
    #[test]
    fn draw_waits_for_movenumber_book_plies_included() {
        let quiet = [(Some(0), false); 7];
        assert_eq!(first_decision(draw(5, 1, 10), 3, &quiet[..6]), None);
        assert_eq!(first_decision(draw(5, 1, 10), 3, &quiet), Some((7, DRAWN)));
        assert_eq!(first_decision(draw(5, 1, 10), 0, &[(Some(0), false); 10][..9]), None);
        assert_eq!(first_decision(draw(5, 1, 10), 0, &[(Some(0), false); 10]), Some((10, DRAWN)));
    }

    /// Resign counters are per side and count only that side's own moves: White scoring -600
    /// on its moves 1, 2, 3 (plies 1, 3, 5) resigns at ply 5, not at ply 3; a move above the
    /// threshold (-599) starts White's count again.
    #[test]
    fn resign_ends_at_the_losers_movecount_th_move() {
        let white_lost = (Some(-600), false);
        let black_fine = (Some(50), false);
        let plies = [white_lost, black_fine, white_lost, black_fine, white_lost];
        let lost = Some((5, (Termination::AdjudicationResign, Some(Color::Black))));
        assert_eq!(first_decision(resign(3, 600, false), 0, &plies[..4]), None);
        assert_eq!(first_decision(resign(3, 600, false), 0, &plies), lost);
        let mut broken = plies.to_vec();
        broken[2] = (Some(-599), false);
        assert_eq!(first_decision(resign(3, 600, false), 0, &broken), None);
        // Mate scores count as far below any threshold.
        let mut a = Adjudicator::new(resign(1, 600, false));
        let m = MovePlayed {
            mover: Color::White,
            eval: Some(Eval::Mate(-3)),
            zeroing: false,
            total_plies: 1,
            engine_plies: 1,
        };
        assert_eq!(a.on_move(m), Some((Termination::AdjudicationResign, Some(Color::Black))));
    }

    /// twosided: the loser's count must reach movecount while the winner's last movecount own
    /// moves all scored at least +score. Black's +600 on plies 2 and 4 is one move short at ply
    /// 5; after Black's third (ply 6) White's next move (ply 7) resigns. One winner move at +599
    /// among the last three keeps the game going.
    #[test]
    fn twosided_resign_needs_the_winner_to_agree() {
        let (w, b) = ((Some(-600), false), (Some(600), false));
        let plies = [w, b, w, b, w, b, w];
        let lost = Some((7, (Termination::AdjudicationResign, Some(Color::Black))));
        assert_eq!(first_decision(resign(3, 600, true), 0, &plies[..6]), None);
        assert_eq!(first_decision(resign(3, 600, true), 0, &plies), lost);
        assert_eq!(
            first_decision(resign(3, 600, false), 0, &plies),
            Some((5, (Termination::AdjudicationResign, Some(Color::Black))))
        );
        let mut doubt = plies.to_vec();
        doubt[3] = (Some(599), false);
        assert_eq!(first_decision(resign(3, 600, true), 0, &doubt), None);
    }

    /// Both rules hit on one ply: the draw is looked at first, as in cutechess-cli.
    #[test]
    fn draw_is_decided_before_resign() {
        // At ply 4 Black's second -7 would resign it, and the draw's movenumber=2 is reached.
        let rules = Adjudication { draw: draw(2, 1, 10).draw, ..resign(2, 5, false) };
        let plies = [(Some(0), false), (Some(-7), false), (Some(0), false), (Some(-7), false)];
        assert_eq!(first_decision(rules, 0, &plies), Some((4, DRAWN)));
        let resign_only = resign(2, 5, false);
        let lost = Some((4, (Termination::AdjudicationResign, Some(Color::White))));
        assert_eq!(first_decision(resign_only, 0, &plies), lost);
    }

    #[test]
    fn max_moves_counts_engine_plies() {
        let rules = Adjudication { max_moves: Some(2), ..Default::default() };
        assert_eq!(first_decision(rules, 9, &[(None, false); 3]), None);
        assert_eq!(
            first_decision(rules, 9, &[(None, false); 4]),
            Some((4, (Termination::MaxMoves, None)))
        );
    }
}
