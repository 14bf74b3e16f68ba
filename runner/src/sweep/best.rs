//! Which point is best, and how sure we are.
//!
//! Method (normal approximation): each point's score `S_i` (points per game against the
//! baseline) is estimated by its mean `m_i` with standard error `s_i`, both from the pentanomial
//! counts (pair-score variance, `stats::ScoreMoments`). Treating the estimates as independent
//! normals `S_i ~ N(m_i, s_i^2)`, the probability that point `i` is the best is
//!
//! ```text
//! P(i best) = P(S_i > S_j for all j != i)
//!           = integral phi(z) * prod_{j != i} Phi((m_i + s_i z - m_j) / s_j) dz
//! ```
//!
//! computed by Simpson's rule over z in [-8, 8]. The point reported as best is the one with the
//! highest estimated score, and the line under the table gives its `P(best)`. Elo is a monotone
//! function of the score, so the ranking is the same on the Elo scale.
//!
//! Caveats, said plainly: every point meets the same baseline with the same openings, so the
//! estimates are positively correlated in reality; treating them as independent overstates the
//! spread of their differences, which makes `P(best)` conservative (closer to uniform) rather
//! than overconfident. A point with a standard error of zero (e.g. all games drawn) is given a
//! tiny one (1e-9) so the formula stays defined.

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// Smallest standard error used (see the module documentation).
const MIN_SE: f64 = 1e-9;
/// Simpson intervals over [-8, 8] (even).
const STEPS: usize = 4000;

/// `P(i best)` for estimates `(mean, std_error)`; sums to 1 (up to rounding). Empty input gives
/// an empty vector; a single point is best with probability 1.
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

/// Index of the highest mean (the first one on ties).
pub fn argmax(means: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &m) in means.iter().enumerate() {
        if best.is_none_or(|b| m > means[b]) {
            best = Some(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_points_match_the_closed_form() {
        // P(X1 > X2) = Phi((m1 - m2) / sqrt(s1^2 + s2^2)).
        let p = prob_best(&[(0.55, 0.02), (0.50, 0.03)]);
        let want = Normal::standard().cdf(0.05 / (0.02f64.powi(2) + 0.03f64.powi(2)).sqrt());
        assert!((p[0] - want).abs() < 1e-6, "{} vs {want}", p[0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-9);
    }

    #[test]
    fn equal_points_are_equally_likely() {
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
    fn argmax_takes_the_first_of_ties() {
        assert_eq!(argmax(&[0.1, 0.3, 0.3]), Some(1));
        assert_eq!(argmax(&[]), None);
    }
}
