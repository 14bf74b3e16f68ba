//! Constrained maximum-likelihood estimates of a discrete distribution, the engine of the
//! generalized SPRT.
//!
//! The observations are an empirical distribution: outcomes `a_i` (scores in [0, 1]) with
//! observed frequencies `phat_i > 0` (zero bins are regularized before they get here). The
//! multinomial log-likelihood of a candidate distribution `p` is `N sum_i phat_i ln p_i`.
//!
//! **Fixed expectation** (`mle_expected`). Maximize `sum phat_i ln p_i` subject to
//! `sum p_i = 1` and `sum p_i a_i = s`. The Lagrange conditions give
//!
//! ```text
//! p_i = phat_i / (1 + x (a_i - s)),
//! ```
//!
//! where the multiplier `x` solves the *secular equation*
//!
//! ```text
//! f(x) = sum_i phat_i c_i / (1 + x c_i) = 0,     c_i = a_i - s,
//! ```
//!
//! (then `sum p_i = sum phat_i - x sum p_i c_i = 1` holds too). All `p_i` must stay positive,
//! so `x` lies in the open interval `(-1/max c, -1/min c)`, which is non-empty exactly when
//! `min a < s < max a`. There `f` falls strictly from `+inf` to `-inf`
//! (`f'(x) = -sum phat_i c_i^2 / (1 + x c_i)^2 < 0`), so the root is unique.
//!
//! **Fixed t-value** (`mle_t_value`). Maximize the same likelihood subject to
//! `(mu - ref) / sigma = t`, where `mu` and `sigma^2` are the mean and variance of `p`. The
//! gradient of the constraint `g(p) = mu - ref - t sigma` is `a_i - t (a_i - mu)^2 / (2 sigma)`
//! up to a constant, so with the same algebra
//!
//! ```text
//! p_i = phat_i / (1 + x b_i),   b_i = a_i - ref - t sigma (1 + ((a_i - mu)/sigma)^2) / 2,
//! ```
//!
//! with `x` again the root of the secular equation for the `b_i` (the constant in `b_i` makes
//! `sum p_i b_i = g(p) = 0` at the solution). `b` depends on the unknown `mu`, `sigma` of `p`, so
//! this is solved as a fixed point: start from the uniform distribution, compute `mu`, `sigma`,
//! `b`, solve for `x`, update `p`, repeat until `p` no longer moves. This is the scheme of Van
//! den Bergh's "normalized_elo_practical" note as used by fishtest, which stops after 10 rounds or
//! a change below 1e-9; here it runs until the change is at the level of rounding errors.
//!
//! The secular equation is solved by Newton's method safeguarded by bisection: every evaluation
//! of `f` shrinks a bracket around the root, a Newton step that leaves the bracket is replaced
//! by its midpoint, and the iteration ends when the step is at the level of rounding errors
//! (about 1e-16 relative), far finer than the 1e-12 absolute tolerance of `scipy`'s `brentq` in
//! fishtest or the coarse root finding of fastchess.

use crate::error::StatsError;

/// Solves `sum_i q_i c_i / (1 + x c_i) = 0` for `x` in `(-1/max c, -1/min c)`.
pub fn secular(c: &[f64], q: &[f64]) -> Result<f64, StatsError> {
    let cmin = c.iter().copied().fold(f64::INFINITY, f64::min);
    let cmax = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(cmin.is_finite() && cmax.is_finite() && cmin < 0.0 && cmax > 0.0) {
        return Err(StatsError::Numerical(format!(
            "secular equation without a root (values from {cmin} to {cmax} do not straddle 0)"
        )));
    }
    let (mut lo, mut hi) = (-1.0 / cmax, -1.0 / cmin);
    let mut x = 0.0f64;
    for _ in 0..300 {
        let (mut f, mut fp) = (0.0, 0.0);
        for (&ci, &qi) in c.iter().zip(q) {
            let d = 1.0 / (1.0 + x * ci);
            f += qi * ci * d;
            fp -= qi * ci * ci * d * d;
        }
        if f == 0.0 {
            return Ok(x);
        }
        if f > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - f / fp;
        let next = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        let tol = 2.0 * f64::EPSILON * x.abs().max(next.abs()).max(1e-300);
        if (next - x).abs() <= tol || hi - lo <= tol {
            return Ok(next);
        }
        x = next;
    }
    Ok(x)
}

/// Mean and variance of a distribution.
pub fn mean_var(values: &[f64], p: &[f64]) -> (f64, f64) {
    let mu: f64 = values.iter().zip(p).map(|(a, p)| a * p).sum();
    let var: f64 = values.iter().zip(p).map(|(a, p)| p * (a - mu) * (a - mu)).sum();
    (mu, var)
}

/// A constrained MLE in the form `p_i = phat_i / (1 + x c_i)`, kept as `x` and `c` so that
/// log-likelihood ratios can be computed with `ln_1p` without cancellation.
#[derive(Clone, Debug)]
pub struct Tilted {
    pub x: f64,
    pub c: Vec<f64>,
}

impl Tilted {
    /// `ln(phat_i / p_i) = ln(1 + x c_i)`.
    pub fn log_ratio(&self, i: usize) -> f64 {
        (self.x * self.c[i]).ln_1p()
    }

    /// The probabilities `p_i`.
    pub fn probs(&self, phat: &[f64]) -> Vec<f64> {
        phat.iter().zip(&self.c).map(|(q, c)| q / (1.0 + self.x * c)).collect()
    }
}

/// MLE of the distribution on `values` closest (in likelihood) to `phat` with expectation `s`.
pub fn mle_expected(values: &[f64], phat: &[f64], s: f64) -> Result<Tilted, StatsError> {
    let c: Vec<f64> = values.iter().map(|a| a - s).collect();
    let x = secular(&c, phat)?;
    Ok(Tilted { x, c })
}

/// MLE of the distribution on `values` closest (in likelihood) to `phat` with t-value
/// `(mu - reference) / sigma = t`.
pub fn mle_t_value(
    values: &[f64],
    phat: &[f64],
    reference: f64,
    t: f64,
) -> Result<Tilted, StatsError> {
    let k = values.len();
    let mut p = vec![1.0 / k as f64; k];
    let mut best: Option<Tilted> = None;
    for _ in 0..2000 {
        let (mu, var) = mean_var(values, &p);
        let sigma = var.sqrt();
        if !sigma.is_finite() || sigma <= 0.0 {
            break;
        }
        let c: Vec<f64> = values
            .iter()
            .map(|a| {
                let z = (mu - a) / sigma;
                a - reference - t * sigma * (1.0 + z * z) / 2.0
            })
            .collect();
        let x = secular(&c, phat)?;
        let tilted = Tilted { x, c };
        let next = tilted.probs(phat);
        let change = p.iter().zip(&next).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        p = next;
        best = Some(tilted);
        if change <= 1e-15 {
            break;
        }
    }
    let tilted = best.ok_or_else(|| {
        StatsError::Numerical(format!("no distribution with t-value {t} near the observations"))
    })?;
    let (mu, var) = mean_var(values, &p);
    let residual = ((mu - reference) / var.sqrt() - t).abs();
    if residual.is_nan() || residual >= 1e-8 {
        return Err(StatsError::Numerical(format!(
            "the t-value constraint {t} was not met (residual {residual:e})"
        )));
    }
    Ok(tilted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V5: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

    fn normalize(counts: &[f64]) -> Vec<f64> {
        let n: f64 = counts.iter().sum();
        counts.iter().map(|c| c / n).collect()
    }

    #[test]
    fn expectation_constraint_is_met_to_rounding() {
        let phat = normalize(&[1187.0, 7410.0, 13475.0, 7378.0, 1164.0]);
        for s in [0.3, 0.4995, 0.5, 0.51, 0.9] {
            let m = mle_expected(&V5, &phat, s).unwrap();
            let p = m.probs(&phat);
            let (mu, _) = mean_var(&V5, &p);
            assert!((mu - s).abs() < 1e-15, "{s}: {mu}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn mle_at_the_observed_mean_is_the_observation() {
        let phat = normalize(&[3.0, 5.0, 2.0]);
        let (mu, _) = mean_var(&[0.0, 0.5, 1.0], &phat);
        let m = mle_expected(&[0.0, 0.5, 1.0], &phat, mu).unwrap();
        assert!(m.x.abs() < 1e-14, "{}", m.x);
    }

    #[test]
    fn t_value_constraint_is_met() {
        let phat = normalize(&[39.0, 2226.0, 31451.0, 2412.0, 40.0]);
        for t in [-0.05, 0.0, 0.002, 0.01, 0.2] {
            let m = mle_t_value(&V5, &phat, 0.5, t).unwrap();
            let p = m.probs(&phat);
            let (mu, var) = mean_var(&V5, &p);
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-12, "{t}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        }
    }

    #[test]
    fn secular_without_root_is_an_error() {
        assert!(secular(&[0.1, 0.2], &[0.5, 0.5]).is_err());
        assert!(mle_expected(&V5, &normalize(&[1.0; 5]), 1.0).is_err());
    }
}
