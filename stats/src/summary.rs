//! Everything about a set of counts in one serializable record.

use serde::{Deserialize, Serialize};

use crate::counts::{Counts, Penta};
use crate::error::StatsError;
use crate::estimate::ScoreMoments;
use crate::fixed_sample::{check_alpha, check_draws_floor, draw_aware_test, pair_variance_test};
use crate::sprt::{SprtResult, SprtSpec, sprt};
use crate::sprt_length::expected_pairs;

/// What to compute besides the estimates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Draws floor `D` of the fixed-sample test (see [`crate::fixed_sample`]); `None`: use the
    /// observed draw ratio.
    pub draws_floor: Option<f64>,
    /// The SPRT to evaluate, if any.
    pub sprt: Option<SprtSpec>,
    /// Significance level of the fixed-sample test's critical score (default 0.05).
    pub alpha: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { draws_floor: None, sprt: None, alpha: 0.05 }
    }
}

/// What the variance of the fixed-sample test ([`crate::fixed_sample`]) was based on.
/// Serialized as `"observed_draws"`, `"draws_floor"`, `"pair_variance"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestBasis {
    /// The observed draw ratio of the games (W/D/L known).
    ObservedDraws,
    /// The draws floor of [`Options::draws_floor`].
    DrawsFloor,
    /// The pair scores: pentanomial counts alone, without a floor
    /// ([`crate::fixed_sample::pair_variance_test`]).
    PairVariance,
}

/// Counts, estimates and tests. Undefined values are `None` (JSON `null`), never NaN or
/// infinite. With pentanomial counts (alone or [`Counts::Paired`]) the score's error, the
/// intervals, nElo, LOS and the SPRT come from the pair scores; the draw ratio and the
/// fixed-sample test come from the games when W/D/L are known.
///
/// Pentanomial counts alone do not know wins, draws and losses (a DD+WL pair is two draws or
/// a win and a loss): `wins`, `draws`, `losses` and `draw_ratio` are then `None`, and the
/// fixed-sample test uses the pair-score variance (`test_basis` says which was used).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub games: u64,
    pub pairs: Option<u64>,
    pub wins: Option<u64>,
    pub draws: Option<u64>,
    pub losses: Option<u64>,
    /// Points of the first engine out of `games`.
    pub points: f64,
    pub penta: Option<Penta>,
    /// Points per game, in [0, 1].
    pub score: Option<f64>,
    pub draw_ratio: Option<f64>,
    /// Logistic Elo (None for a 0 % or 100 % score).
    pub elo: Option<f64>,
    /// 95 % interval of the logistic Elo, ends clamped to about +/-1200.
    pub elo_ci: Option<[f64; 2]>,
    pub nelo: Option<f64>,
    pub nelo_ci: Option<[f64; 2]>,
    /// Likelihood of superiority, in [0, 1].
    pub los: Option<f64>,
    /// One-sided p-value of the draw-aware fixed-sample test.
    pub p_value: Option<f64>,
    /// Points needed out of `games` for `p < alpha` in that test.
    pub critical_score: Option<f64>,
    /// What the fixed-sample test's variance came from (`None` if no games).
    pub test_basis: Option<TestBasis>,
    pub sprt: Option<SprtResult>,
    /// Standard deviation of a pair's score (points per game averaged over the two games of the
    /// pair; sample deviation, at least two pairs): compares how much books (or conditions)
    /// spread the results of the same engines.
    pub pair_sd: Option<f64>,
    /// Pairs the SPRT is expected to take in all if the true difference is the one measured
    /// (Wald's approximation, [`crate::sprt_length`]); with an SPRT and pentanomial counts.
    pub sprt_expected_pairs: Option<f64>,
}

/// Computes the [`Summary`] of some counts.
pub fn summarize(counts: &Counts, opts: &Options) -> Result<Summary, StatsError> {
    check_alpha(opts.alpha)?;
    if let Some(f) = opts.draws_floor {
        check_draws_floor(f)?;
    }
    counts.check()?;
    let wdl = counts.wdl();
    let penta = counts.penta();
    let games = counts.games();
    let points = counts.points();
    let moments = match (penta, wdl) {
        (Some(p), _) => ScoreMoments::from_penta(&p),
        (None, Some(w)) => ScoreMoments::from_wdl(&w),
        (None, None) => None,
    };
    let est = moments.map(|m| m.estimates()).unwrap_or_default();
    let draw_ratio = wdl.filter(|w| w.games() > 0).map(|w| w.draws as f64 / w.games() as f64);
    let (test, basis) = match (wdl, penta, opts.draws_floor) {
        (Some(_), _, None) => (
            draw_aware_test(games, points, draw_ratio.unwrap_or(0.0), None, opts.alpha)?,
            TestBasis::ObservedDraws,
        ),
        (_, _, Some(floor)) => {
            (draw_aware_test(games, points, 0.0, Some(floor), opts.alpha)?, TestBasis::DrawsFloor)
        }
        (None, Some(p), None) => (pair_variance_test(&p, opts.alpha)?, TestBasis::PairVariance),
        (None, None, None) => (None, TestBasis::ObservedDraws),
    };
    let sprt = opts.sprt.as_ref().map(|spec| sprt(counts, spec)).transpose()?;
    let pair_sd = penta.and_then(|p| {
        let m = ScoreMoments::from_penta(&p)?;
        let n = p.pairs() as f64;
        (p.pairs() >= 2).then(|| m.std_error * n / (n - 1.0).sqrt())
    });
    let sprt_expected_pairs = match (opts.sprt.as_ref(), moments, pair_sd) {
        (Some(spec), Some(m), Some(sd)) if penta.is_some() => expected_pairs(m.score, sd, spec),
        _ => None,
    };
    Ok(Summary {
        games,
        pairs: penta.map(|p| p.pairs()),
        wins: wdl.map(|w| w.wins),
        draws: wdl.map(|w| w.draws),
        losses: wdl.map(|w| w.losses),
        points,
        penta,
        score: moments.map(|m| m.score),
        draw_ratio,
        elo: est.elo,
        elo_ci: est.elo_ci,
        nelo: est.nelo,
        nelo_ci: est.nelo_ci,
        los: est.los,
        p_value: test.map(|t| t.p_value),
        critical_score: test.and_then(|t| t.critical_score),
        test_basis: (games > 0).then_some(basis),
        sprt,
        pair_sd,
        sprt_expected_pairs,
    })
}

/// `"+12.3 +/- 20.1"`: a value and half the width of its interval, or `"n/a"` parts.
fn format_pm(value: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (value, ci) {
        (None, _) => "n/a".to_string(),
        (Some(v), Some([lo, hi])) => format!("{v:+.1} +/- {:.1}", (hi - lo) / 2.0),
        (Some(v), None) => format!("{v:+.1} +/- n/a"),
    }
}

impl Summary {
    /// Logistic Elo as `"+12.3 +/- 20.1"` (the +/- is half the 95 % interval's width), or
    /// `"n/a"` when the Elo is undefined.
    pub fn format_elo(&self) -> String {
        format_pm(self.elo, self.elo_ci)
    }

    /// Normalized Elo in the same format as [`Summary::format_elo`].
    pub fn format_nelo(&self) -> String {
        format_pm(self.nelo, self.nelo_ci)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::Wdl;

    #[test]
    fn formats() {
        let s =
            summarize(&Counts::Wdl(Wdl { wins: 30, draws: 20, losses: 14 }), &Options::default())
                .unwrap();
        let e = s.format_elo();
        assert!(e.starts_with('+') && e.contains(" +/- "), "{e}");
        let s = summarize(&Counts::Wdl(Wdl::default()), &Options::default()).unwrap();
        assert_eq!(s.format_elo(), "n/a");
        assert_eq!(s.format_nelo(), "n/a");
        let s = summarize(&Counts::Wdl(Wdl { wins: 0, draws: 5, losses: 0 }), &Options::default())
            .unwrap();
        assert_eq!(s.format_elo(), "+0.0 +/- n/a");
    }
}
