//! How many game pairs an SPRT is expected to take, from the per-pair mean and standard
//! deviation of the score (Wald's approximation: the log-likelihood ratio as a random walk with
//! the drift and variance of one pair's increment, overshoot of the bounds ignored).
//!
//! With pair scores `X` (points per game, averaged over the pair) of mean `mu` and standard
//! deviation `sd`, and the hypotheses' means `mu0 < mu1`, one pair adds
//! `(mu1 - mu0) / sd^2 * (X - (mu0 + mu1) / 2)` to the LLR: drift
//! `d = (mu1 - mu0) / sd^2 * (mu - (mu0 + mu1) / 2)`, variance `v = (mu1 - mu0)^2 / sd^2`. The
//! walk from 0 ends at `A = ln((1 - beta) / alpha)` with probability
//! `P = (1 - e^(-hB)) / (e^(-hA) - e^(-hB))`, `h = 2d/v`, and after about `(P A + (1 - P) B) / d`
//! pairs (`-A B / v` when `d = 0`).
//!
//! For the normalized model `mu_i = 1/2 + t_i * sd * sqrt(2)` (`t_i` from nElo, whose per-game
//! deviation is `sd * sqrt(2)`), so the length depends on the true nElo alone: a book is worth
//! what it does to the nElo of a given change. For the logistic model `mu_i` are the Elo's
//! scores, and a smaller `sd` (fewer decisive pairs) shortens the test.

use crate::elo::{logistic_score, t_from_nelo};
use crate::sprt::{EloModel, SprtSpec};

/// The drift and the variance of the LLR's increment per pair when pair scores have mean `mu`
/// and standard deviation `sd` (see the module's text); `None` when `sd` is not positive.
pub fn walk_steps(mu: f64, sd: f64, spec: &SprtSpec) -> Option<(f64, f64)> {
    if !(sd > 0.0 && sd.is_finite()) {
        return None;
    }
    let (mu0, mu1) = match spec.model {
        EloModel::Normalized => {
            let per_game = sd * std::f64::consts::SQRT_2;
            (0.5 + t_from_nelo(spec.elo0) * per_game, 0.5 + t_from_nelo(spec.elo1) * per_game)
        }
        EloModel::Logistic => (logistic_score(spec.elo0), logistic_score(spec.elo1)),
    };
    let step = (mu1 - mu0) / (sd * sd);
    Some((step * (mu - (mu0 + mu1) / 2.0), step * (mu1 - mu0)))
}

/// Expected pairs until `spec` ends when pair scores have mean `mu` and standard deviation `sd`;
/// `None` when `sd` is not positive or a figure is not finite.
pub fn expected_pairs(mu: f64, sd: f64, spec: &SprtSpec) -> Option<f64> {
    expected_pairs_from(mu, sd, spec, 0.0).filter(|n| *n > 0.0)
}

/// Expected pairs still to play until `spec` ends, from a log-likelihood ratio of `llr` now
/// (the same walk started at `llr`: the bounds are `A - llr` and `B - llr` away); 0 when `llr`
/// is already outside the bounds, `None` when `sd` is not positive or a figure is not finite.
pub fn expected_pairs_from(mu: f64, sd: f64, spec: &SprtSpec, llr: f64) -> Option<f64> {
    if !(sd > 0.0 && sd.is_finite() && mu.is_finite() && llr.is_finite()) {
        return None;
    }
    if llr >= spec.upper_bound() || llr <= spec.lower_bound() {
        return Some(0.0);
    }
    let (d, v) = walk_steps(mu, sd, spec)?;
    let (a, b) = (spec.upper_bound() - llr, spec.lower_bound() - llr);
    let n = if (d / v.sqrt()).abs() < 1e-9 {
        -a * b / v
    } else {
        let h = 2.0 * d / v;
        let p = (1.0 - (-h * b).exp()) / ((-h * a).exp() - (-h * b).exp());
        (p * a + (1.0 - p) * b) / d
    };
    (n.is_finite() && n >= 0.0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(model: EloModel) -> SprtSpec {
        SprtSpec { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05, model }
    }

    #[test]
    fn zero_drift_is_the_limit_of_small_drift() {
        let s = spec(EloModel::Logistic);
        let mid = (logistic_score(0.0) + logistic_score(5.0)) / 2.0;
        let at = expected_pairs(mid, 0.3, &s).unwrap();
        let near = expected_pairs(mid + 1e-7, 0.3, &s).unwrap();
        assert!((at - near).abs() / at < 1e-3, "{at} {near}");
        // -A B / v with A = -B = ln 19.
        let step = (logistic_score(5.0) - logistic_score(0.0)) / 0.09;
        let v = step * (logistic_score(5.0) - logistic_score(0.0));
        assert!((at - 19f64.ln().powi(2) / v).abs() < 1e-6 * at);
    }

    #[test]
    fn normalized_length_depends_on_nelo_alone() {
        let s = spec(EloModel::Normalized);
        // The same true nElo (t = 0.02) with two spreads: the same length.
        let (sd1, sd2) = (0.2, 0.35);
        let t = 0.02;
        let a = expected_pairs(0.5 + t * sd1 * 2f64.sqrt(), sd1, &s).unwrap();
        let b = expected_pairs(0.5 + t * sd2 * 2f64.sqrt(), sd2, &s).unwrap();
        assert!((a - b).abs() < 1e-6 * a, "{a} {b}");
        // A clearly better engine ends sooner than one at the hypotheses' midpoint.
        let fast = expected_pairs(0.6, sd1, &s).unwrap();
        assert!(fast < a, "{fast} {a}");
        assert_eq!(expected_pairs(0.5, 0.0, &s), None);
    }

    #[test]
    fn from_the_start_is_the_whole_length_and_nearer_a_bound_is_shorter() {
        let s = spec(EloModel::Logistic);
        let (mu, sd) = (logistic_score(4.0), 0.3);
        let whole = expected_pairs(mu, sd, &s).unwrap();
        assert_eq!(expected_pairs_from(mu, sd, &s, 0.0), Some(whole));
        // Positive drift: halfway to the upper bound leaves fewer pairs.
        let half = expected_pairs_from(mu, sd, &s, s.upper_bound() / 2.0).unwrap();
        assert!(half > 0.0 && half < whole, "{half} {whole}");
        // Decided already: nothing left.
        assert_eq!(expected_pairs_from(mu, sd, &s, s.upper_bound() + 0.1), Some(0.0));
        assert_eq!(expected_pairs_from(mu, sd, &s, f64::NAN), None);
    }

    #[test]
    fn a_large_drift_takes_about_a_over_d() {
        let s = spec(EloModel::Logistic);
        let (mu, sd) = (0.6, 0.25);
        let n = expected_pairs(mu, sd, &s).unwrap();
        let (m0, m1) = (logistic_score(0.0), logistic_score(5.0));
        let d = (m1 - m0) / (sd * sd) * (mu - (m0 + m1) / 2.0);
        assert!((n - s.upper_bound() / d).abs() < 1e-6 * n, "{n}");
    }
}
