//! The draw-aware fixed-sample test of the Crafty ProbCut paper (after Amir Ban's program).
//!
//! Question: after `N` games scoring `S` points, is the first engine stronger? Under the null
//! hypothesis of equal strength each game scores 1/2 on average; with a draw probability `d` and
//! wins and losses equally likely, a game's score has variance
//!
//! ```text
//! Var = (1 - d)/2 * (1/2)^2 + d * 0 = (1 - d) / 4.
//! ```
//!
//! The normal approximation (no continuity correction) gives the one-sided p-value
//!
//! ```text
//! z = (S - N/2) / sqrt(N (1 - d) / 4),       p = 1 - Phi(z),
//! ```
//!
//! and the result is significant when `p < alpha`, i.e. when `S` exceeds
//! `N/2 + Phi^-1(1 - alpha) sqrt(N (1 - d) / 4)`.
//!
//! Which `d`: without a floor the observed draw ratio. With a draws floor `D` (an assumption made
//! before the match, "at least a fraction D of the games are draws") the test uses the largest
//! variance compatible with that assumption, `(1 - D) / 4`, whatever the observed draws: the
//! variance falls as `d` grows, so `d = D` is the conservative choice and the critical score is
//! fixed in advance.
//!
//! The seed's example: 64 games, `D = 0.3`: `sqrt(64 * 0.7 / 4) = 3.3466`, threshold
//! `32 + 1.6449 * 3.3466 = 37.505` points, so 38 points (59.4 %) are significant (`p = 0.0365`)
//! and 37.5 or 37 are not (`p = 0.0501`, `0.0676`). A continuity correction would push 38 to
//! `p = 0.0501`; the paper's "a score above 38 points (or 59%)" means 38 is enough, so there is
//! no correction. [`DrawAwareTest::critical_score`] is the smallest score in half points that is
//! significant: 38.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::StatsError;

/// The test's inputs and results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawAwareTest {
    /// The draw ratio `d` the variance is computed from (observed, or the floor); `None` for
    /// [`pair_variance_test`], which does not use one.
    pub draw_ratio_used: Option<f64>,
    /// `z = (S - N/2) / sqrt(N (1 - d) / 4)`.
    pub z: f64,
    /// One-sided p-value `1 - Phi(z)` that the first engine is not stronger.
    pub p_value: f64,
    /// Smallest score (a multiple of 1/2 point) with `p < alpha`; `None` if no score up to `N`
    /// points is significant.
    pub critical_score: Option<f64>,
}

/// Checks a draws floor: `0 <= D < 1`.
pub fn check_draws_floor(d: f64) -> Result<(), StatsError> {
    if (0.0..1.0).contains(&d) {
        Ok(())
    } else {
        Err(StatsError::InvalidOption(format!(
            "the draws floor must be in [0, 1), e.g. 0.3, got {d}"
        )))
    }
}

/// Checks a significance level: `0 < alpha < 1`.
pub fn check_alpha(alpha: f64) -> Result<(), StatsError> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidOption(format!(
            "the significance level must be between 0 and 1 (exclusive), got {alpha}"
        )))
    }
}

/// Runs the test for `points` out of `games` with observed draw ratio `observed_draws`.
///
/// Returns `Ok(None)` when the test is undefined: no games, or zero variance (observed draw
/// ratio 1 and no floor).
pub fn draw_aware_test(
    games: u64,
    points: f64,
    observed_draws: f64,
    draws_floor: Option<f64>,
    alpha: f64,
) -> Result<Option<DrawAwareTest>, StatsError> {
    check_alpha(alpha)?;
    if let Some(f) = draws_floor {
        check_draws_floor(f)?;
    }
    let d = draws_floor.unwrap_or(observed_draws);
    let sd = (games as f64 * (1.0 - d) / 4.0).sqrt();
    Ok(normal_test(games, points, sd, alpha)
        .map(|t| DrawAwareTest { draw_ratio_used: Some(d), ..t }))
}

/// The same test for pentanomial counts alone, which do not know the draw ratio (a DD+WL pair
/// is two draws or a win and a loss): the variance of the match score is estimated from the
/// pair scores instead, as the second moment about the null hypothesis's mean,
///
/// ```text
/// Var(S) = 4 sum_i n_i (a_i - 1/2)^2,     a_i = 0, 1/4, 1/2, 3/4, 1 (a pair's average),
/// ```
///
/// the pair analogue of `N (1 - d) / 4`, which is `sum (game score - 1/2)^2` over the games.
/// For independent games both agree on average; for paired games (same opening, colours
/// reversed) this one also counts the correlation within pairs. `Ok(None)` when undefined (no
/// pairs, or every pair scored exactly 1). Validates `alpha`.
pub fn pair_variance_test(
    penta: &crate::counts::Penta,
    alpha: f64,
) -> Result<Option<DrawAwareTest>, StatsError> {
    check_alpha(alpha)?;
    let (points, games) = penta.to_wdl_score();
    let var: f64 = penta
        .ascending()
        .iter()
        .enumerate()
        .map(|(i, &n)| n as f64 * (i as f64 / 4.0 - 0.5).powi(2))
        .sum::<f64>()
        * 4.0;
    Ok(normal_test(games, points, var.sqrt(), alpha))
}

/// `z`, p-value and critical score for `points` out of `games` with standard deviation `sd`
/// of the score under the null hypothesis; `None` if `sd` is 0 or there are no games.
fn normal_test(games: u64, points: f64, sd: f64, alpha: f64) -> Option<DrawAwareTest> {
    let n = games as f64;
    if games == 0 || !sd.is_finite() || sd <= 0.0 {
        return None;
    }
    let normal = Normal::standard();
    let z = (points - n / 2.0) / sd;
    let p_value = normal.sf(z);
    let threshold = n / 2.0 + normal.inverse_cdf(1.0 - alpha) * sd;
    // Smallest multiple of 1/2 strictly above the threshold.
    let critical = ((2.0 * threshold).floor() + 1.0) / 2.0;
    let critical_score = (critical <= n).then_some(critical);
    Some(DrawAwareTest { draw_ratio_used: None, z, p_value, critical_score })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Crafty ProbCut paper (seed 000, section 4, footnote 4): with at least 30 % draws, in a
    /// 64-game match "a score above 38 points (or 59%) is statistically significant with
    /// p < 0.05". 38 is significant, 37 and 37.5 are not.
    #[test]
    fn crafty_paper_64_games_30_percent_draws() {
        let t = |s: f64| draw_aware_test(64, s, 0.0, Some(0.3), 0.05).unwrap().unwrap();
        assert!(t(38.0).p_value < 0.05, "{}", t(38.0).p_value);
        assert!(t(37.5).p_value >= 0.05, "{}", t(37.5).p_value);
        assert!(t(37.0).p_value >= 0.05, "{}", t(37.0).p_value);
        assert_eq!(t(38.0).critical_score, Some(38.0));
        // Hand computation: z = 6 / sqrt(11.2) = 1.79284, p = 0.036500.
        assert!((t(38.0).z - 6.0 / 11.2f64.sqrt()).abs() < 1e-12);
        assert!((t(38.0).p_value - 0.036_500).abs() < 5e-6, "{}", t(38.0).p_value);
        // The match the paper calls significant: ProbCut won 40-24 without null move.
        assert!(t(40.0).p_value < 0.05);
    }

    #[test]
    fn floor_overrides_observed_draws() {
        let observed = draw_aware_test(64, 38.0, 0.6, None, 0.05).unwrap().unwrap();
        let floored = draw_aware_test(64, 38.0, 0.6, Some(0.3), 0.05).unwrap().unwrap();
        assert_eq!(observed.draw_ratio_used, Some(0.6));
        assert_eq!(floored.draw_ratio_used, Some(0.3));
        assert!(observed.p_value < floored.p_value);
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(draw_aware_test(0, 0.0, 0.0, None, 0.05).unwrap(), None);
        assert_eq!(draw_aware_test(10, 5.0, 1.0, None, 0.05).unwrap(), None);
        // One game: even a win is not significant, and no score is.
        let one = draw_aware_test(1, 1.0, 0.0, None, 0.05).unwrap().unwrap();
        assert!(one.p_value > 0.05);
        assert_eq!(one.critical_score, None);
        assert!(draw_aware_test(10, 5.0, 0.0, Some(1.0), 0.05).is_err());
        assert!(draw_aware_test(10, 5.0, 0.0, Some(-0.1), 0.05).is_err());
        assert!(draw_aware_test(10, 5.0, 0.0, None, 0.0).is_err());
        assert!(draw_aware_test(10, 5.0, 0.0, None, f64::NAN).is_err());
    }

    /// Pentanomial counts 1,6,20,8,1 (36 pairs, 72 games, 37 points). Pair
    /// averages' squared distances from 1/2: LL and WW 1/4, LD and WD 1/16, DD 0, so
    /// Var(S) = 4 (2/4 + 14/16) = 5.5, z = (37 - 36) / sqrt(5.5) = 0.42640.
    #[test]
    fn pair_variance_by_hand() {
        use crate::counts::Penta;
        let p = Penta { ll: 1, ld: 6, dd: 20, wd: 8, ww: 1 };
        let t = pair_variance_test(&p, 0.05).unwrap().unwrap();
        assert_eq!(t.draw_ratio_used, None);
        assert!((t.z - 1.0 / 5.5f64.sqrt()).abs() < 1e-15, "{}", t.z);
        // 36 + 1.6449 * 2.3452 = 39.858: 40 points needed.
        assert_eq!(t.critical_score, Some(40.0));
        assert!((t.p_value - 0.334_908).abs() < 1e-5, "{}", t.p_value);
        assert_eq!(pair_variance_test(&Penta { dd: 5, ..Penta::default() }, 0.05).unwrap(), None);
        assert_eq!(pair_variance_test(&Penta::default(), 0.05).unwrap(), None);
        assert!(pair_variance_test(&p, 1.0).is_err());
    }
}
