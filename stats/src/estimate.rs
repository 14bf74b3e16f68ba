//! Point estimates and 95 % intervals: score, logistic Elo, normalized Elo, LOS.
//!
//! Let the trials be games (trinomial counts) or game pairs (pentanomial counts), `n` of them,
//! with outcome `a_i` (a game's score 0, 1/2, 1, or a pair's average score 0, 1/4, ..., 1) seen
//! `n_i` times. Then
//!
//! ```text
//! score        mu    = sum n_i a_i / n                    (points per game)
//! variance     v     = sum n_i (a_i - mu)^2 / n           (of one trial's outcome)
//! std. error   se    = sqrt(v / n)                        (of mu)
//! per game     sigma = sqrt(v) for games, sqrt(2 v) for pairs
//! ```
//!
//! For pairs this is the variance of the pair score, as fishtest and fastchess use it: the two
//! games of a pair share an opening, so their results are correlated and the trinomial variance
//! would misstate the error. `sigma` is the per-game standard deviation a pair's variance
//! corresponds to (a pair averages two games).
//!
//! ```text
//! Elo          E     = -400 log10(1/mu - 1)
//! Elo interval [E(mu - z se), E(mu + z se)],    z = Phi^-1(0.975) = 1.95996...
//! nElo         (mu - 1/2) / sigma * 800 / ln 10
//! nElo interval (mu - 1/2 -/+ z se) / sigma * 800 / ln 10
//! LOS          Phi((mu - 1/2) / se)
//! ```
//!
//! The Elo interval maps the score's normal interval through the logistic curve (it is
//! asymmetric); its ends are clamped to scores in [0.001, 0.999] (about +/-1200 Elo). A value
//! that is undefined is `None`: the Elo of a 0 % or 100 % score, and everything that divides by
//! a zero variance (all games with the same result, or no games).
//!
//! These are fastchess's formulas (its reports are reproduced to the printed digits in
//! `tests/fastchess_reference.rs`). Fishtest's `get_elo` is the same except that it first
//! replaces empty bins by 1e-3 (the SPRT's regularization); that moves the estimates by
//! O(1e-3 / N) when a bin is empty, and makes the Elo of a 100 % score finite. Here the
//! estimates use the counts as observed.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::counts::{Penta, Wdl};
use crate::elo::{NELO_PER_T, logistic_elo, logistic_elo_clamped};

/// Sample moments of a score distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreMoments {
    /// Number of trials (games, or pairs for pentanomial counts).
    pub trials: f64,
    /// Mean score per game.
    pub score: f64,
    /// Standard error of `score`.
    pub std_error: f64,
    /// Per-game standard deviation (the nElo denominator).
    pub sigma_per_game: f64,
}

impl ScoreMoments {
    /// Moments of counts in ascending order of score, each trial worth `games_per_trial` games.
    fn from_ascending(counts: &[u64], games_per_trial: f64) -> Option<ScoreMoments> {
        let k = counts.len();
        let n: f64 = counts.iter().map(|&c| c as f64).sum();
        if n == 0.0 || k < 2 {
            return None;
        }
        let a = |i: usize| i as f64 / (k - 1) as f64;
        let mu = counts.iter().enumerate().map(|(i, &c)| c as f64 * a(i)).sum::<f64>() / n;
        let var =
            counts.iter().enumerate().map(|(i, &c)| c as f64 * (a(i) - mu).powi(2)).sum::<f64>()
                / n;
        Some(ScoreMoments {
            trials: n,
            score: mu,
            std_error: (var / n).sqrt(),
            sigma_per_game: (var * games_per_trial).sqrt(),
        })
    }

    /// Moments of trinomial counts (games assumed independent).
    pub fn from_wdl(w: &Wdl) -> Option<ScoreMoments> {
        ScoreMoments::from_ascending(&w.ascending(), 1.0)
    }

    /// Moments of pentanomial counts (pair-score variance).
    pub fn from_penta(p: &Penta) -> Option<ScoreMoments> {
        ScoreMoments::from_ascending(&p.ascending(), 2.0)
    }
}

/// Estimates with 95 % intervals; `None` where undefined (never NaN or infinite).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimates {
    pub elo: Option<f64>,
    pub elo_ci: Option<[f64; 2]>,
    pub nelo: Option<f64>,
    pub nelo_ci: Option<[f64; 2]>,
    pub los: Option<f64>,
}

/// `z` of a two-sided 95 % interval: `Phi^-1(0.975)`.
pub fn z95() -> f64 {
    Normal::standard().inverse_cdf(0.975)
}

impl ScoreMoments {
    /// Elo, nElo (with 95 % intervals) and LOS.
    pub fn estimates(&self) -> Estimates {
        let mu = self.score;
        let se = self.std_error;
        let z = z95();
        let defined = se > 0.0 && se.is_finite();
        let elo = logistic_elo(mu);
        let elo_ci = (elo.is_some() && defined)
            .then(|| [logistic_elo_clamped(mu - z * se), logistic_elo_clamped(mu + z * se)]);
        let (nelo, nelo_ci) = if defined && self.sigma_per_game > 0.0 {
            let k = NELO_PER_T / self.sigma_per_game;
            (Some((mu - 0.5) * k), Some([(mu - 0.5 - z * se) * k, (mu - 0.5 + z * se) * k]))
        } else {
            (None, None)
        };
        let los = defined.then(|| Normal::standard().cdf((mu - 0.5) / se));
        Estimates { elo, elo_ci, nelo, nelo_ci, los }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trinomial_moments_by_hand() {
        // 6 W, 2 D, 2 L: mu = 7/10, v = (6*0.09 + 2*0.04 + 2*0.49)/10 = 0.16.
        let m = ScoreMoments::from_wdl(&Wdl { wins: 6, draws: 2, losses: 2 }).unwrap();
        assert!((m.score - 0.7).abs() < 1e-15);
        assert!((m.std_error - (0.16f64 / 10.0).sqrt()).abs() < 1e-15);
        assert!((m.sigma_per_game - 0.4).abs() < 1e-15);
    }

    #[test]
    fn pentanomial_uses_pair_variance() {
        // 4 pairs: LD, DD, DD, WD -> pair averages 0.25, 0.5, 0.5, 0.75; v = 0.03125.
        let p = Penta { ll: 0, ld: 1, dd: 2, wd: 1, ww: 0 };
        let m = ScoreMoments::from_penta(&p).unwrap();
        assert!((m.score - 0.5).abs() < 1e-15);
        assert!((m.std_error - (0.03125f64 / 4.0).sqrt()).abs() < 1e-15);
        assert!((m.sigma_per_game - (0.0625f64).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn z_is_1_96() {
        assert!((z95() - 1.959_963_984_540_054).abs() < 1e-12);
    }
}
