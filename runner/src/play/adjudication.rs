//! Ending games early on the engines' own evaluations (draw, resign) or on a move limit: the
//! rules come from the plan ([`crate::plan::adjudication`]), tracked here move by move.

use shakmaty::Color;

use crate::plan::adjudication::Adjudication;
use crate::play::termination::Termination;
use crate::play::uci_info::Eval;

/// Tracks one game's evaluations against the rules.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Adjudication,
    draw_plies: u32,
    resign_moves: [u32; 2],
}

/// A decision: the ending and the winner (`None` = draw).
pub type Decision = (Termination, Option<Color>);

impl Adjudicator {
    pub fn new(rules: Adjudication) -> Adjudicator {
        Adjudicator { rules, draw_plies: 0, resign_moves: [0; 2] }
    }

    /// Called after each legal engine move. `total_plies` counts every ply from the root (book
    /// included), `engine_plies` only the engines' moves.
    pub fn on_move(
        &mut self,
        mover: Color,
        eval: Option<Eval>,
        total_plies: u32,
        engine_plies: u32,
    ) -> Option<Decision> {
        if let Some(r) = self.rules.resign {
            let idx = mover as usize;
            match eval {
                Some(e) if e.as_cp() <= -r.score => self.resign_moves[idx] += 1,
                _ => self.resign_moves[idx] = 0,
            }
            if self.resign_moves[idx] >= r.movecount {
                return Some((Termination::AdjudicationResign, Some(!mover)));
            }
        }
        if let Some(r) = self.rules.draw {
            match eval {
                Some(Eval::Cp(cp)) if cp.abs() <= r.score => self.draw_plies += 1,
                _ => self.draw_plies = 0,
            }
            if total_plies / 2 >= r.movenumber && self.draw_plies >= 2 * r.movecount {
                return Some((Termination::AdjudicationDraw, None));
            }
        }
        if let Some(m) = self.rules.max_moves
            && engine_plies >= 2 * m
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
    #[test]
    fn draw_needs_both_sides_quiet_after_movenumber() {
        let rules = Adjudication {
            draw: Some(DrawRule { movenumber: 2, movecount: 2, score: 10 }),
            ..Default::default()
        };
        let mut a = Adjudicator::new(rules);
        assert_eq!(a.on_move(Color::White, Some(Eval::Cp(5)), 1, 1), None);
        assert_eq!(a.on_move(Color::Black, Some(Eval::Cp(-50)), 2, 2), None); // resets
        assert_eq!(a.on_move(Color::White, Some(Eval::Cp(0)), 3, 3), None);
        assert_eq!(a.on_move(Color::Black, Some(Eval::Cp(3)), 4, 4), None);
        assert_eq!(a.on_move(Color::White, None, 5, 5), None); // no score resets
        for (i, c) in [Color::Black, Color::White, Color::Black].into_iter().enumerate() {
            assert_eq!(a.on_move(c, Some(Eval::Cp(1)), 6 + i as u32, 6 + i as u32), None);
        }
        assert_eq!(
            a.on_move(Color::White, Some(Eval::Cp(-10)), 9, 9),
            Some((Termination::AdjudicationDraw, None))
        );
    }

    #[test]
    fn resign_counts_each_side_separately() {
        let rules = Adjudication {
            resign: Some(ResignRule { movecount: 2, score: 500 }),
            ..Default::default()
        };
        let mut a = Adjudicator::new(rules);
        assert_eq!(a.on_move(Color::White, Some(Eval::Cp(-600)), 1, 1), None);
        assert_eq!(a.on_move(Color::Black, Some(Eval::Cp(600)), 2, 2), None);
        assert_eq!(
            a.on_move(Color::White, Some(Eval::Mate(-3)), 3, 3),
            Some((Termination::AdjudicationResign, Some(Color::Black)))
        );
    }

    #[test]
    fn max_moves_counts_engine_plies() {
        let rules = Adjudication { max_moves: Some(2), ..Default::default() };
        let mut a = Adjudicator::new(rules);
        assert_eq!(a.on_move(Color::White, None, 10, 3), None);
        assert_eq!(a.on_move(Color::Black, None, 11, 4), Some((Termination::MaxMoves, None)));
    }
}
