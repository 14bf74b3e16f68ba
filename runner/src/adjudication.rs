//! Ending games early on the engines' own evaluations (draw, resign) or on a move limit.

use serde::{Deserialize, Serialize};
use shakmaty::Color;

use crate::termination::Termination;
use crate::uci_info::Eval;

/// `--draw movenumber=N,movecount=N,score=CP`: a draw once at least `movenumber` full moves were
/// played and both engines' scores stayed within `score` cp of zero for `movecount` consecutive
/// moves each (2 x movecount plies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawRule {
    pub movenumber: u32,
    pub movecount: u32,
    pub score: i32,
}

/// `--resign movecount=N,score=CP`: a side whose own score was at most -`score` for `movecount`
/// consecutive moves of its own loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignRule {
    pub movecount: u32,
    pub score: i32,
}

/// All adjudication settings of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    pub draw: Option<DrawRule>,
    pub resign: Option<ResignRule>,
    /// A draw after this many full moves played by the engines (book moves not counted).
    pub max_moves: Option<u32>,
}

fn key_values(input: &str, keys: &[&str]) -> Result<Vec<i64>, String> {
    let mut vals: Vec<Option<i64>> = vec![None; keys.len()];
    for item in input.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("{item:?} is not key=value"))?;
        let idx = keys
            .iter()
            .position(|x| *x == k.trim())
            .ok_or_else(|| format!("unknown key {k:?} (expected {})", keys.join(", ")))?;
        let v: i64 = v.trim().parse().map_err(|_| format!("{k}: {v:?} is not a whole number"))?;
        if !(0..=1_000_000).contains(&v) {
            return Err(format!("{k}: {v} is out of range"));
        }
        vals[idx] = Some(v);
    }
    keys.iter().zip(vals).map(|(k, v)| v.ok_or_else(|| format!("missing {k}="))).collect()
}

impl DrawRule {
    pub fn parse(s: &str) -> Result<DrawRule, String> {
        let v = key_values(s, &["movenumber", "movecount", "score"])
            .map_err(|e| format!("bad --draw {s:?}: {e}"))?;
        if v[1] == 0 {
            return Err(format!("bad --draw {s:?}: movecount must be > 0"));
        }
        Ok(DrawRule { movenumber: v[0] as u32, movecount: v[1] as u32, score: v[2] as i32 })
    }
}

impl ResignRule {
    pub fn parse(s: &str) -> Result<ResignRule, String> {
        let v = key_values(s, &["movecount", "score"])
            .map_err(|e| format!("bad --resign {s:?}: {e}"))?;
        if v[0] == 0 {
            return Err(format!("bad --resign {s:?}: movecount must be > 0"));
        }
        Ok(ResignRule { movecount: v[0] as u32, score: v[1] as i32 })
    }
}

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

    #[test]
    fn parses_rules() {
        assert_eq!(
            DrawRule::parse("movenumber=40,movecount=8,score=10").unwrap(),
            DrawRule { movenumber: 40, movecount: 8, score: 10 }
        );
        assert_eq!(
            ResignRule::parse("movecount=3,score=600").unwrap(),
            ResignRule { movecount: 3, score: 600 }
        );
        assert!(DrawRule::parse("movenumber=40,movecount=8").unwrap_err().contains("score"));
        assert!(ResignRule::parse("movecount=x,score=1").is_err());
        assert!(ResignRule::parse("movecount=1,score=1,foo=2").is_err());
        assert!(ResignRule::parse("movecount=0,score=1").is_err());
    }

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
