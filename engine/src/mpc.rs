//! Multi-ProbCut (Buro), as in Jiang & Buro's Crafty experiments (seed 000,
//! Figure 3): at a node of remaining depth ("check height") `h`, a shallow
//! null-window search of depth `d'` predicts the deep value through the linear
//! model `v_h = a * v_d' + b + e`, `e ~ N(0, sigma)`. With threshold `t`:
//!
//! - beta side: `bound = round((t*sigma + beta - b) / a)`; if a
//!   `(bound-1, bound)` search returns `>= bound`, the node returns `beta`;
//! - alpha side: `bound = round((-t*sigma + alpha - b) / a)`; if a
//!   `(bound, bound+1)` search returns `<= bound`, the node returns `alpha`.
//!
//! The parameter table is indexed stage x check height x try. As in the
//! seed's Figure 3 (`if (height <= MAX_HEIGHT)`), heights above the table's
//! largest height `H` (10 by default) get no MPC test. Optionally (UCI option
//! `MPCExtend`, off by default) they reuse height `H`'s entries with the
//! shallow depth shifted by `h - H` (the same depth gap, so the same fitted
//! error model). Single-pair ProbCut never extends: it tests only at its one
//! height.

use cozy_chess::{Board, Color, Piece};

use crate::score::EVAL_LIMIT;

/// Game stage as in the seed paper (Crafty's definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Middlegame,
    Endgame,
}

/// Weighted material of one side: Q=9, R=5, B=N=3, pawns not counted.
pub fn weighted_material(board: &Board, color: Color) -> u32 {
    let n = |p| board.colored_pieces(color, p).len();
    9 * n(Piece::Queen) + 5 * n(Piece::Rook) + 3 * (n(Piece::Bishop) + n(Piece::Knight))
}

/// Endgame when both sides' weighted material is below 15.
pub fn stage_of(board: &Board) -> Stage {
    if weighted_material(board, Color::White) < 15 && weighted_material(board, Color::Black) < 15 {
        Stage::Endgame
    } else {
        Stage::Middlegame
    }
}

/// One linear model: deep value = a * shallow value + b, residual sigma.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpcParam {
    pub shallow: i32,
    pub a: f64,
    pub b: f64,
    pub sigma: f64,
}

/// Beta-side bound: `round((t*sigma + beta - b) / a)`.
pub fn beta_bound(p: &MpcParam, t: f64, beta: i32) -> i32 {
    ((t * p.sigma + beta as f64 - p.b) / p.a).round() as i32
}

/// Alpha-side bound: `round((-t*sigma + alpha - b) / a)`.
pub fn alpha_bound(p: &MpcParam, t: f64, alpha: i32) -> i32 {
    ((-t * p.sigma + alpha as f64 - p.b) / p.a).round() as i32
}

/// Whether a bound can be decided by a non-mate score. A bound at or beyond
/// the evaluation limit could only be passed by a mate score, which the model
/// excludes, so such a try is skipped (it could never cut otherwise).
pub fn bound_usable(bound: i32) -> bool {
    bound.abs() < EVAL_LIMIT
}

/// Maximum number of tries per stage and height.
pub const NUM_TRY: usize = 2;

/// The table `[stage][height][try]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MpcTable {
    /// `rows[stage][height]` holds up to `NUM_TRY` parameter sets.
    rows: [Vec<Vec<MpcParam>>; 2],
    /// Extend the largest height's entries to greater heights.
    extend: bool,
}

/// Seed Table 1, (4,8) rows: (a, b, sigma) for middlegame and endgame.
pub const TABLE1_48_MID: (f64, f64, f64) = (1.02, 2.36, 82.0);
pub const TABLE1_48_END: (f64, f64, f64) = (1.11, 1.75, 75.0);
/// The engine's own MPC parameters, fitted by `runner calibrate` on 3000 positions from its
/// self-play games (configs/positions/README.md has the commands); compiled in as the defaults.
pub const FITTED_PARAMS_JSON: &str = include_str!("../../configs/mpc-params.json");
/// Default (shallow, deep) pairs for multi-cut mode.
pub const DEFAULT_PAIRS: [(i32, i32); 5] = [(2, 6), (3, 7), (4, 8), (3, 9), (4, 10)];

fn stage_index(s: Stage) -> usize {
    match s {
        Stage::Middlegame => 0,
        Stage::Endgame => 1,
    }
}

impl MpcTable {
    pub fn empty(extend: bool) -> Self {
        Self { rows: [Vec::new(), Vec::new()], extend }
    }

    /// Adds a try at `stage`, `height`; false if that cell is already full.
    pub fn add(&mut self, stage: Stage, height: usize, p: MpcParam) -> bool {
        let rows = &mut self.rows[stage_index(stage)];
        if rows.len() <= height {
            rows.resize(height + 1, Vec::new());
        }
        if rows[height].len() >= NUM_TRY {
            return false;
        }
        rows[height].push(p);
        true
    }

    /// Built-in multi-cut defaults: the engine's own fitted parameters ([`FITTED_PARAMS_JSON`],
    /// the default pairs for both stages). Falls back to [`MpcTable::seed_table1`] only if that
    /// compiled-in file failed to parse, which a unit test rules out.
    pub fn default_multi() -> Self {
        crate::mpc_params::parse_params(FITTED_PARAMS_JSON).unwrap_or_else(|_| Self::seed_table1())
    }

    /// The seed's parameters: the default pairs, each with the seed's (4,8) Table 1 row for its
    /// stage (the table gives no other pairs we use). The defaults before calibration.
    pub fn seed_table1() -> Self {
        let mut t = Self::empty(true);
        for (d, h) in DEFAULT_PAIRS {
            for (stage, (a, b, sigma)) in
                [(Stage::Middlegame, TABLE1_48_MID), (Stage::Endgame, TABLE1_48_END)]
            {
                t.add(stage, h as usize, MpcParam { shallow: d, a, b, sigma });
            }
        }
        t
    }

    /// Single-pair ProbCut (4,8): taken from `from` if it has a (4,8) entry
    /// for a stage, else the seed's Table 1 row. No extension to other heights.
    pub fn single_from(from: &MpcTable) -> Self {
        let mut t = Self::empty(false);
        for (stage, (a, b, sigma)) in
            [(Stage::Middlegame, TABLE1_48_MID), (Stage::Endgame, TABLE1_48_END)]
        {
            let p = from.rows[stage_index(stage)]
                .get(8)
                .and_then(|c| c.iter().find(|p| p.shallow == 4).copied())
                .unwrap_or(MpcParam { shallow: 4, a, b, sigma });
            t.add(stage, 8, p);
        }
        t
    }

    /// The tries for a node at `height` in `stage` (shallow depths already shifted).
    pub fn tries(&self, stage: Stage, height: i32) -> impl Iterator<Item = MpcParam> + '_ {
        let rows = &self.rows[stage_index(stage)];
        let h = height.max(0) as usize;
        let (cell, shift) = if h < rows.len() {
            (rows[h].as_slice(), 0)
        } else if self.extend && !rows.is_empty() {
            (rows[rows.len() - 1].as_slice(), (h - (rows.len() - 1)) as i32)
        } else {
            (&[][..], 0)
        };
        cell.iter().map(move |p| MpcParam { shallow: p.shallow + shift, ..*p })
    }

    /// Turns the extension beyond the largest height on or off.
    pub fn set_extend(&mut self, on: bool) {
        self.extend = on;
    }

    /// Largest height with an entry, per stage.
    pub fn max_height(&self, stage: Stage) -> usize {
        self.rows[stage_index(stage)].len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: MpcParam = MpcParam { shallow: 4, a: 1.02, b: 2.36, sigma: 82.0 };

    #[test]
    fn bound_formula_matches_figure_3() {
        // (1.0*82 + 50 - 2.36) / 1.02 = 127.098 -> 127
        assert_eq!(beta_bound(&P, 1.0, 50), 127);
        // (-82 + 50 - 2.36) / 1.02 = -33.686 -> -34
        assert_eq!(alpha_bound(&P, 1.0, 50), -34);
        // t = 0 and a = 1, b = 0: the bound is the window edge itself.
        let unit = MpcParam { shallow: 2, a: 1.0, b: 0.0, sigma: 50.0 };
        assert_eq!(beta_bound(&unit, 0.0, -17), -17);
        assert_eq!(alpha_bound(&unit, 0.0, 33), 33);
        // round half away from zero, as C's round().
        let half = MpcParam { shallow: 2, a: 2.0, b: 0.0, sigma: 0.0 };
        assert_eq!(beta_bound(&half, 0.0, 5), 3);
        assert_eq!(alpha_bound(&half, 0.0, -5), -3);
    }

    #[test]
    fn huge_threshold_makes_bounds_unusable() {
        assert!(!bound_usable(beta_bound(&P, 100.0, 0)));
        assert!(!bound_usable(alpha_bound(&P, 100.0, 0)));
        assert!(bound_usable(beta_bound(&P, 1.0, 0)));
    }

    #[test]
    fn stage_classifier() {
        let b = |f: &str| Board::from_fen(f, false).unwrap();
        assert_eq!(stage_of(&Board::default()), Stage::Middlegame);
        // Each side: rook + bishop = 8 < 15.
        assert_eq!(stage_of(&b("4k3/pp3r2/2b5/8/8/2B5/PP3R2/4K3 w - - 0 1")), Stage::Endgame);
        // White queen + rook = 14 < 15, black queen + rook + knight = 17.
        assert_eq!(stage_of(&b("3qk3/pp3r2/2n5/8/8/8/PP3R2/3QK3 w - - 0 1")), Stage::Middlegame);
        // White queen + two bishops = exactly 15, which is not below 15.
        let fifteen = b("4k3/8/8/8/8/8/8/2BQKB2 w - - 0 1");
        assert_eq!(weighted_material(&fifteen, Color::White), 15);
        assert_eq!(stage_of(&fifteen), Stage::Middlegame);
        let thirteen = b("4k3/8/8/8/8/8/8/1N1RK2R w - - 0 1");
        assert_eq!(weighted_material(&thirteen, Color::White), 13);
        assert_eq!(stage_of(&thirteen), Stage::Endgame);
    }

    #[test]
    fn default_table_heights_and_extension() {
        let t = MpcTable::default_multi();
        let d = |s, h| t.tries(s, h).map(|p| p.shallow).collect::<Vec<_>>();
        assert_eq!(d(Stage::Middlegame, 5), Vec::<i32>::new());
        assert_eq!(d(Stage::Middlegame, 6), vec![2]);
        assert_eq!(d(Stage::Middlegame, 7), vec![3]);
        assert_eq!(d(Stage::Endgame, 8), vec![4]);
        assert_eq!(d(Stage::Middlegame, 9), vec![3]);
        assert_eq!(d(Stage::Middlegame, 10), vec![4]);
        assert_eq!(d(Stage::Middlegame, 13), vec![7]);
        let s = MpcTable::single_from(&t);
        assert_eq!(s.tries(Stage::Middlegame, 8).count(), 1);
        assert_eq!(s.tries(Stage::Middlegame, 9).count(), 0);
        assert_eq!(s.tries(Stage::Middlegame, 7).count(), 0);
        // Single mode takes the loaded table's (4,8) entry when it has one...
        assert_eq!(s.tries(Stage::Endgame, 8).next(), t.tries(Stage::Endgame, 8).next());
        // ...and Table 1's otherwise.
        let seed = MpcTable::single_from(&MpcTable::seed_table1());
        assert_eq!(seed.tries(Stage::Endgame, 8).next().unwrap().sigma, 75.0);
    }

    #[test]
    fn fitted_defaults_parse_and_cover_the_default_pairs() {
        let fitted =
            crate::mpc_params::parse_params(FITTED_PARAMS_JSON).expect("fitted params parse");
        assert_eq!(fitted, MpcTable::default_multi());
        assert_ne!(fitted, MpcTable::seed_table1());
        for stage in [Stage::Middlegame, Stage::Endgame] {
            for (d, h) in DEFAULT_PAIRS {
                let p: Vec<_> = fitted.tries(stage, h).collect();
                assert_eq!(p.len(), 1, "{stage:?} height {h}");
                assert_eq!(p[0].shallow, d);
                assert!(p[0].sigma > 20.0 && p[0].sigma < 200.0 && p[0].a > 0.5 && p[0].a < 2.0);
            }
        }
    }
}
