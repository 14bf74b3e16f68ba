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
//! this is solved as a fixed point: from a starting distribution compute `mu`, `sigma`, `b`,
//! solve for `x`, update `p`, repeat until `p` no longer moves. This is the scheme of Van
//! den Bergh's "normalized_elo_practical" note as used by fishtest, which starts from the uniform
//! distribution and stops after 10 rounds or a change below 1e-9; here it runs until the change
//! is at the level of rounding errors, and starts from the observations with continuation in
//! `t` (see [`mle_t_value`]), which also solves bounds far from the observed t-value, where
//! fishtest's start fails.
//!
//! The secular equation is solved by Newton's method safeguarded by bisection: every evaluation
//! of `f` shrinks a bracket around the root, a Newton step that leaves the bracket is replaced
//! by its midpoint, and the iteration ends when the step is at the level of rounding errors
//! (about 1e-16 relative), far finer than the 1e-12 absolute tolerance of `scipy`'s `brentq` in
//! fishtest or the coarse root finding of fastchess. Both estimators check their constraint on
//! the result and return an error rather than a wrong distribution.

use crate::error::StatsError;

/// The root `x` of a secular equation together with the denominators `d_i = 1 + x c_i`.
///
/// Near a pole (`x` close to `-1/max c` or `-1/min c`) the smallest `d_i` is tiny and `1 + x c_i`
/// computed from `x` would keep only a few correct digits; here every `d_i` is computed from
/// the distance to the nearest pole and has full relative precision.
#[derive(Clone, Debug)]
pub struct Root {
    pub x: f64,
    pub d: Vec<f64>,
}

/// Solves `sum_i q_i c_i / (1 + x c_i) = 0` for `x` in `(-1/max c, -1/min c)` (all `q_i > 0`).
///
/// A bracketing root finder. `f(x) = sum q_i c_i / (1 + x c_i)` falls strictly from `+inf` at
/// the left pole to `-inf` at the right one. The sign of `f(0)` and of `f` halfway to the pole
/// on that side tells which quarter of the interval holds the root; inside it the unknown is
/// the distance `y` from the nearest pole, or `x` itself for the quarters next to 0, so that
/// every `1 + x c_i` is formed without cancellation. On `y` runs Newton's method kept inside a
/// shrinking bracket (bisection whenever a Newton step leaves it or fails to halve the step
/// before last) until the bracket is at the rounding level of `y`.
pub fn secular(c: &[f64], q: &[f64]) -> Result<Root, StatsError> {
    let cmin = c.iter().copied().fold(f64::INFINITY, f64::min);
    let cmax = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(cmin.is_finite() && cmax.is_finite() && cmin < 0.0 && cmax > 0.0)
        || c.len() != q.len()
        || !q.iter().all(|&v| v > 0.0 && v.is_finite())
    {
        return Err(StatsError::Numerical(format!(
            "secular equation without a root (values from {cmin} to {cmax} do not straddle 0)"
        )));
    }
    let f_at = |d: &dyn Fn(usize) -> f64| -> f64 { (0..c.len()).map(|i| q[i] * c[i] / d(i)).sum() };
    let f0: f64 = (0..c.len()).map(|i| q[i] * c[i]).sum();
    if f0 == 0.0 {
        return Ok(Root { x: 0.0, d: vec![1.0; c.len()] });
    }
    // The pole on the root's side and the point halfway to it.
    let (pole, pole_c) = if f0 < 0.0 { (-1.0 / cmax, cmax) } else { (-1.0 / cmin, cmin) };
    let half = 0.5 * pole;
    let f_half = f_at(&|i| 1.0 + half * c[i]);
    // Parametrization x = x0 + sgn * y, d_i = base_i + sgn * y c_i, y in (0, |half|); the
    // function F = sgn * f falls with y in every case.
    let (x0, sgn, base): (f64, f64, Vec<f64>) = if (f0 < 0.0) == (f_half < 0.0) && f_half != 0.0 {
        // Between the half point and the pole: measured from the pole, where
        // 1 + pole c_i = (pole_c - c_i) / pole_c, exactly 0 for the pole's own bins.
        let base = c.iter().map(|&ci| if ci == pole_c { 0.0 } else { (pole_c - ci) / pole_c });
        (pole, -pole.signum(), base.collect())
    } else {
        (0.0, pole.signum(), vec![1.0; c.len()])
    };
    let d_of = |y: f64| -> Vec<f64> { (0..c.len()).map(|i| base[i] + sgn * y * c[i]).collect() };
    let eval = |y: f64| {
        let (mut f, mut fp) = (0.0, 0.0);
        for i in 0..c.len() {
            let r = 1.0 / (base[i] + sgn * y * c[i]);
            f += q[i] * c[i] * r;
            fp -= q[i] * c[i] * c[i] * r * r;
        }
        (sgn * f, fp)
    };
    let root = |y: f64| Ok(Root { x: x0 + sgn * y, d: d_of(y) });
    let (mut lo, mut hi) = (0.0, half.abs());
    if f_half == 0.0 {
        return root(hi);
    }
    let mut y = 0.5 * hi;
    let mut step_before = hi - lo;
    let mut step = step_before;
    for _ in 0..600 {
        let (f, fp) = eval(y);
        if f == 0.0 || !f.is_finite() {
            return root(y);
        }
        if f > 0.0 {
            lo = y;
        } else {
            hi = y;
        }
        let newton = y - f / fp;
        let fast = (2.0 * f).abs() <= (step_before * fp).abs();
        step_before = step;
        let mut next = if newton > lo && newton < hi && fast { newton } else { 0.5 * (lo + hi) };
        let tol = 2.0 * f64::EPSILON * y.abs().max(next.abs()).max(f64::MIN_POSITIVE);
        if hi - lo <= tol {
            return root(next);
        }
        if (next - y).abs() <= tol {
            // A tiny step means convergence only if the root is really that close: F must
            // change sign within two steps. Next to a pole Newton crawls instead; bisect then.
            let probe = y + 2.0 * (next - y);
            let (fprobe, _) = eval(probe);
            if fprobe == 0.0 || (fprobe > 0.0) != (f > 0.0) {
                return root(next);
            }
            if f > 0.0 {
                lo = lo.max(probe);
            } else {
                hi = hi.min(probe);
            }
            next = 0.5 * (lo + hi);
        }
        step = next - y;
        y = next;
    }
    // The bracket is valid throughout: its midpoint is the best estimate.
    root(0.5 * (lo + hi))
}

/// Mean and variance of a distribution.
pub fn mean_var(values: &[f64], p: &[f64]) -> (f64, f64) {
    let mu: f64 = values.iter().zip(p).map(|(a, p)| a * p).sum();
    let var: f64 = values.iter().zip(p).map(|(a, p)| p * (a - mu) * (a - mu)).sum();
    (mu, var)
}

/// A constrained MLE in the form `p_i = phat_i / (1 + x c_i)`, kept as `x`, `c` and the
/// accurate denominators `d_i = 1 + x c_i` so that log-likelihood ratios can be computed
/// without cancellation (`ln_1p(x c_i)` for small `x c_i`, `ln d_i` otherwise).
#[derive(Clone, Debug)]
pub struct Tilted {
    pub x: f64,
    pub c: Vec<f64>,
    pub d: Vec<f64>,
}

impl Tilted {
    fn new(c: Vec<f64>, root: Root) -> Tilted {
        Tilted { x: root.x, c, d: root.d }
    }

    /// `ln(phat_i / p_i) = ln(1 + x c_i)`.
    pub fn log_ratio(&self, i: usize) -> f64 {
        let w = self.x * self.c[i];
        if w.abs() < 0.5 { w.ln_1p() } else { self.d[i].ln() }
    }

    /// The probabilities `p_i`.
    pub fn probs(&self, phat: &[f64]) -> Vec<f64> {
        phat.iter().zip(&self.d).map(|(q, d)| q / d).collect()
    }
}

/// MLE of the distribution on `values` closest (in likelihood) to `phat` with expectation `s`.
pub fn mle_expected(values: &[f64], phat: &[f64], s: f64) -> Result<Tilted, StatsError> {
    let c: Vec<f64> = values.iter().map(|a| a - s).collect();
    let root = secular(&c, phat)?;
    let tilted = Tilted::new(c, root);
    let (mu, _) = mean_var(values, &tilted.probs(phat));
    if (mu - s).abs().is_nan() || (mu - s).abs() >= 1e-9 {
        return Err(StatsError::Numerical(format!(
            "the expectation constraint {s} was not met (got {mu})"
        )));
    }
    Ok(tilted)
}

/// MLE of the distribution on `values` closest (in likelihood) to `phat` with t-value
/// `(mu - reference) / sigma = t`.
///
/// The fixed point converges from any reasonable start when `t` is near the observed t-value
/// `t^`, but from far away (|nElo| of several hundred) the first `b` may not even straddle 0.
/// So the target is approached by continuation: the MLE at `t^` is `phat` itself; each step
/// moves `t` towards the target starting from the previous solution, halving the step when the
/// fixed point fails and doubling it after a success. For usual bounds the first step already
/// reaches the target.
pub fn mle_t_value(
    values: &[f64],
    phat: &[f64],
    reference: f64,
    t: f64,
) -> Result<Tilted, StatsError> {
    let fail = || StatsError::Numerical(format!("no distribution with t-value {t} was found"));
    if !t.is_finite() {
        return Err(fail());
    }
    let (mu, var) = mean_var(values, phat);
    let mut t_now = (mu - reference) / var.sqrt();
    if !t_now.is_finite() {
        return Err(fail());
    }
    let mut p = phat.to_vec();
    let mut step = t - t_now;
    let continued = loop {
        let t_next = if (t - t_now).abs() <= step.abs() { t } else { t_now + step };
        match fixed_point(values, phat, reference, t_next, &p) {
            Some((tilted, next)) => {
                if t_next == t {
                    break Some(tilted);
                }
                p = next;
                t_now = t_next;
                step *= 2.0;
            }
            None => {
                step /= 2.0;
                if step.abs() < 1e-9 {
                    break None;
                }
            }
        }
    };
    // The constraint set is not convex, so far from the observations the likelihood can have
    // more than one local maximum (e.g. 403,642,0,10,0 at nElo -2000: mass on LL or on LD),
    // and continuation follows only one of them. The fixed point is also started from each
    // two-outcome distribution that meets the constraint (mixed with a little of `phat`), and
    // the most likely of the solutions found is the estimate.
    let k = values.len();
    let others = two_point_starts(values, phat, reference, t)
        .into_iter()
        .filter_map(|start| fixed_point(values, phat, reference, t, &start));
    let loglik = |m: &Tilted| -> f64 { (0..k).map(|i| -phat[i] * m.log_ratio(i)).sum() };
    continued
        .into_iter()
        .chain(others.map(|(m, _)| m))
        .map(|m| (loglik(&m), m))
        .filter(|(l, _)| l.is_finite())
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, m)| m)
        .ok_or_else(fail)
}

/// Distributions on two outcomes `j < l` (weight `e` on `l`) whose t-value is `t`, each mixed
/// with 0.1 % of `phat` so that no probability is zero: starts for the fixed point. The roots
/// in `e` are found by bisection between sign changes on a grid.
fn two_point_starts(values: &[f64], phat: &[f64], reference: f64, t: f64) -> Vec<Vec<f64>> {
    const GRID: usize = 64;
    let mut starts = Vec::new();
    for j in 0..values.len() {
        for l in j + 1..values.len() {
            let (a, b) = (values[j], values[l]);
            let g = |e: f64| (a + (b - a) * e - reference) / ((b - a) * (e * (1.0 - e)).sqrt()) - t;
            let grid: Vec<f64> = (1..GRID).map(|i| i as f64 / GRID as f64).collect();
            for w in grid.windows(2) {
                let (mut lo, mut hi) = (w[0], w[1]);
                if g(lo).signum() == g(hi).signum() {
                    continue;
                }
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    if g(mid).signum() == g(lo).signum() { lo = mid } else { hi = mid }
                }
                let e = 0.5 * (lo + hi);
                let mut p: Vec<f64> = phat.iter().map(|q| 1e-3 * q).collect();
                p[j] += 0.999 * (1.0 - e);
                p[l] += 0.999 * e;
                starts.push(p);
            }
        }
    }
    starts
}

/// The fixed-point iteration for the t-value MLE from `start`; `None` if it fails.
fn fixed_point(
    values: &[f64],
    phat: &[f64],
    reference: f64,
    t: f64,
    start: &[f64],
) -> Option<(Tilted, Vec<f64>)> {
    let residual = |p: &[f64]| {
        let (mu, var) = mean_var(values, p);
        ((mu - reference) / var.sqrt() - t).abs()
    };
    let mut p = start.to_vec();
    let mut last: Option<Tilted> = None;
    for _ in 0..500 {
        let (mu, var) = mean_var(values, &p);
        let sigma = var.sqrt();
        if !sigma.is_finite() || sigma <= 0.0 {
            return None;
        }
        let c: Vec<f64> = values
            .iter()
            .map(|a| {
                let z = (mu - a) / sigma;
                a - reference - t * sigma * (1.0 + z * z) / 2.0
            })
            .collect();
        let root = secular(&c, phat).ok()?;
        let tilted = Tilted::new(c, root);
        let next = tilted.probs(phat);
        let change = p.iter().zip(&next).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        p = next;
        last = Some(tilted);
        if change <= 1e-15 {
            break;
        }
    }
    // Converged (or stuck at rounding level): accept only if the constraint holds.
    let r = residual(&p);
    if r.is_nan() || r >= 1e-10 {
        return None;
    }
    last.map(|tilted| (tilted, p))
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

    /// Regression: a Newton step that lands next to the pole at x = -1/max c used to crawl
    /// there in tiny steps and stop, far from the root.
    #[test]
    fn secular_does_not_stall_near_a_pole() {
        let phat = normalize(&[2.0, 29.0, 41.0, 7.0, 1.0]);
        let m = mle_expected(&V5, &phat, 0.5).unwrap();
        let (mu, _) = mean_var(&V5, &m.probs(&phat));
        assert!((mu - 0.5).abs() < 1e-15, "{mu}");
        assert!(m.x > -2.0 && m.x < 0.0);
        let t = mle_t_value(&V5, &phat, 0.5, 0.0).unwrap();
        assert!((t.x - m.x).abs() < 1e-14);
    }

    /// Far bounds (|nElo| up to 2000) need the continuation in t.
    #[test]
    fn t_value_far_from_the_observations() {
        let phat = normalize(&[10.0, 20.0, 30.0, 20.0, 10.0]);
        for nelo in [-2000.0, -1000.0, 300.0, 500.0, 2000.0] {
            let t = nelo / crate::elo::NELO_PER_T * 2f64.sqrt();
            let m = mle_t_value(&V5, &phat, 0.5, t).unwrap();
            let (mu, var) = mean_var(&V5, &m.probs(&phat));
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-10, "{nelo}");
        }
    }

    #[test]
    fn secular_without_root_is_an_error() {
        assert!(secular(&[0.1, 0.2], &[0.5, 0.5]).is_err());
        assert!(mle_expected(&V5, &normalize(&[1.0; 5]), 1.0).is_err());
    }
}
