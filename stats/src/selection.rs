//! Choosing among several candidates measured against one baseline: which is best and how sure
//! we are ([`prob_best`]), and when a candidate is clearly worse than the best so far
//! ([`drop_threshold`], racing).
//!
//! Each candidate's score `S_i` (points per game against the baseline) is given as an estimate
//! `m_i` with standard error `s_i` (e.g. from pentanomial counts, [`crate::ScoreMoments`]).
//! Treating the estimates as independent normals `S_i ~ N(m_i, s_i^2)`, the probability that
//! candidate `i` is the best is
//!
//! ```text
//! P(i best) = P(S_i > S_j for all j != i)
//!           = integral phi(z) * prod_{j != i} Phi((m_i + s_i z - m_j) / s_j) dz
//! ```
//!
//! computed by Simpson's rule over z in [-8, 8]. Elo is a monotone function of the score, so the
//! ranking is the same on the Elo scale.
//!
//! Caveats, said plainly: candidates that meet the same baseline with the same openings have
//! positively correlated estimates in reality; treating them as independent overstates the
//! spread of their differences, which makes `P(best)` conservative (closer to uniform) rather
//! than overconfident. A standard error of zero (e.g. all games drawn) is replaced by a tiny one
//! (1e-9) so the formula stays defined.

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// Smallest standard error used (see the module documentation).
const MIN_SE: f64 = 1e-9;
/// Simpson intervals over [-8, 8] (even).
const STEPS: usize = 4000;

/// `P(i best)` for estimates `(mean, std_error)`; sums to 1 (up to rounding). Empty input gives
/// an empty vector; a single candidate is best with probability 1.
pub fn prob_best(estimates: &[(f64, f64)]) -> Vec<f64> {
    let n = estimates.len();
    if n <= 1 {
        return vec![1.0; n];
    }
    let std = Normal::standard();
    let est: Vec<(f64, f64)> = estimates.iter().map(|&(m, s)| (m, s.max(MIN_SE))).collect();
    let h = 16.0 / STEPS as f64;
    let raw: Vec<f64> = (0..n)
        .map(|i| {
            let (mi, si) = est[i];
            let f = |z: f64| {
                let x = mi + si * z;
                let others: f64 = est
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &(mj, sj))| std.cdf((x - mj) / sj))
                    .product();
                std.pdf(z) * others
            };
            let mut sum = f(-8.0) + f(8.0);
            for k in 1..STEPS {
                let z = -8.0 + h * k as f64;
                sum += if k % 2 == 1 { 4.0 } else { 2.0 } * f(z);
            }
            sum * h / 3.0
        })
        .collect();
    let total: f64 = raw.iter().sum();
    if total > 0.0 && total.is_finite() {
        raw.iter().map(|p| p / total).collect()
    } else {
        vec![1.0 / n as f64; n]
    }
}

/// The critical value of racing's drop test: a candidate whose one-sided z statistic against
/// the best, `(m_best - m_i) / sqrt(s_best^2 + s_i^2)`, exceeds it is worse than the best at
/// family-wise level `alpha` over `comparisons` comparisons made at one look (Bonferroni:
/// `Phi^-1(1 - alpha / comparisons)`). With no comparison the value is infinite (nothing is
/// dropped); it is never below 0 (a candidate is dropped only when it scores below the best).
pub fn drop_threshold(alpha: f64, comparisons: usize) -> f64 {
    if comparisons == 0 {
        return f64::INFINITY;
    }
    let q = 1.0 - alpha / comparisons as f64;
    Normal::standard().inverse_cdf(q.clamp(0.5, 1.0 - 1e-15))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_candidates_match_the_closed_form() {
        // P(X1 > X2) = Phi((m1 - m2) / sqrt(s1^2 + s2^2)).
        let p = prob_best(&[(0.55, 0.02), (0.50, 0.03)]);
        let want = Normal::standard().cdf(0.05 / (0.02f64.powi(2) + 0.03f64.powi(2)).sqrt());
        assert!((p[0] - want).abs() < 1e-6, "{} vs {want}", p[0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-9);
    }

    #[test]
    fn equal_candidates_are_equally_likely() {
        let p = prob_best(&[(0.5, 0.03); 4]);
        for x in &p {
            assert!((x - 0.25).abs() < 1e-6, "{p:?}");
        }
    }

    #[test]
    fn a_clear_winner_and_zero_errors() {
        let p = prob_best(&[(0.50, 0.01), (0.70, 0.01), (0.52, 0.01)]);
        assert!(p[1] > 0.999, "{p:?}");
        let p = prob_best(&[(0.5, 0.0), (0.6, 0.0)]);
        assert!(p[1] > 0.999 && p.iter().all(|x| x.is_finite()), "{p:?}");
        assert_eq!(prob_best(&[(0.4, 0.1)]), [1.0]);
        assert!(prob_best(&[]).is_empty());
    }

    #[test]
    fn drop_threshold_is_the_bonferroni_normal_quantile() {
        // Phi^-1(0.95) = 1.6449, Phi^-1(1 - 0.05 / 4) = Phi^-1(0.9875) = 2.2414.
        assert!((drop_threshold(0.05, 1) - 1.644_853_6).abs() < 1e-6);
        assert!((drop_threshold(0.05, 4) - 2.241_402_7).abs() < 1e-6);
        // More comparisons, a higher bar.
        assert!(drop_threshold(0.2, 19) > drop_threshold(0.2, 1));
        // Clamped: never below 0, finite for any alpha, infinite with nothing to compare.
        assert!(drop_threshold(1.5, 1).abs() < 1e-12);
        assert!(drop_threshold(0.0, 3).is_finite());
        assert_eq!(drop_threshold(0.05, 0), f64::INFINITY);
    }
}
