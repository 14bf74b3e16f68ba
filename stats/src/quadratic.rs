//! Weighted least-squares quadratics in one or two variables, their stationary maximum, and a
//! parametric-bootstrap interval for it.
//!
//! **Model.** Observations `(x, y, se)` over a box of `[min, max]` ranges, one per variable.
//! Each variable is scaled to `u = (x - centre) / half_width`, so the box maps to `[-1, 1]`, and
//! `y` is fitted with weights `1 / se^2`: `y = b0 + b1 u + b2 u^2` (one variable) or
//! `y = b0 + b1 u + b2 v + b3 u^2 + b4 u v + b5 v^2` (two). The fit is the least-squares solution
//! of the weighted design `diag(1/se) X` by singular value decomposition (nalgebra), which also
//! tells when the points do not determine a quadratic (too few distinct values). Goodness of fit:
//! `chi^2 = sum w r^2` on `n - p` degrees of freedom, with its upper-tail p-value.
//!
//! **Maximum.** The stationary point `u* = -H^-1 g` when the Hessian `H` is negative definite
//! (a Cholesky factorisation of `-H` exists); otherwise [`NoMaximum`] says why.
//!
//! **Bootstrap.** Each draw is `y*_i = yhat_i + se_i z` with `z` standard normal (rand_distr),
//! from a generator the caller seeds, and is refitted; the interval is the nearest-rank 2.5 % and
//! 97.5 % quantiles of the draws' maxima per variable. A one-variable draw without a maximum
//! counts as `+inf` or `-inf` on the side where its curve is higher at the box's ends; a
//! two-variable draw without a maximum counts against both ends (conservative).

use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use statrs::distribution::{ChiSquared, ContinuousCDF};
use thiserror::Error;

/// Singular values below this fraction of the largest make the design rank-deficient.
const RANK_TOLERANCE: f64 = 1e-9;

/// One observation: its coordinates (one or two), the response and the response's standard
/// error.
#[derive(Clone, Debug, PartialEq)]
pub struct Obs {
    pub x: Vec<f64>,
    pub y: f64,
    pub se: f64,
}

/// Why a quadratic cannot be fitted.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum QuadraticError {
    #[error("a quadratic fit needs one or two variables, not {0}")]
    Dimension(usize),
    #[error("an observation has {got} coordinates, the fit {want}")]
    MixedDimensions { got: usize, want: usize },
    #[error("a quadratic needs at least {need} points, {have} available")]
    TooFewPoints { need: usize, have: usize },
    #[error("an observation has no finite value or positive finite error")]
    NonFinite,
    #[error("the points do not determine a quadratic (too few distinct values)")]
    Singular,
}

/// Why a quadratic has no maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoMaximum {
    /// One variable, not concave: the curve is higher at the top (`true`) or the bottom end of
    /// the range.
    HigherAt { top: bool },
    /// Two variables: the Hessian is not negative definite (a saddle, a minimum or flat).
    NotNegativeDefinite,
}

/// A fitted quadratic.
#[derive(Clone, Debug)]
pub struct Quadratic {
    /// `[centre, half_width]` per variable.
    pub scaling: Vec<[f64; 2]>,
    /// `b0, b1, ...` in the scaled variables.
    pub coefficients: Vec<f64>,
    pub points: usize,
    pub chi2: f64,
    pub dof: usize,
    /// `None` with zero degrees of freedom.
    pub p_value: Option<f64>,
    /// The linear map from responses to coefficients, `p x n`.
    map: DMatrix<f64>,
    yhat: DVector<f64>,
    se: Vec<f64>,
}

/// The bootstrap's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Bootstrap {
    /// `[2.5 %, 97.5 %]` quantiles per variable, in original units; infinite where the draws
    /// without a maximum reach that end.
    pub ends: Vec<[f64; 2]>,
    pub draws: usize,
    /// Draws whose curve had no maximum.
    pub without_maximum: usize,
}

/// Number of coefficients of a quadratic in `dim` variables.
pub fn coefficient_count(dim: usize) -> usize {
    if dim == 2 { 6 } else { 3 }
}

/// The design row of a scaled point.
fn design(u: &[f64]) -> Vec<f64> {
    match *u {
        [a] => vec![1.0, a, a * a],
        [a, b] => vec![1.0, a, b, a * a, a * b, b * b],
        _ => Vec::new(),
    }
}

/// The stationary maximum of a quadratic with coefficients `b` (scaled variables).
fn maximum_scaled(b: &[f64]) -> Result<Vec<f64>, NoMaximum> {
    let (g, h) = match *b {
        [_, b1, b2] => (DVector::from_vec(vec![b1]), DMatrix::from_vec(1, 1, vec![2.0 * b2])),
        [_, b1, b2, b3, b4, b5] => (
            DVector::from_vec(vec![b1, b2]),
            DMatrix::from_row_slice(2, 2, &[2.0 * b3, b4, b4, 2.0 * b5]),
        ),
        _ => return Err(NoMaximum::NotNegativeDefinite),
    };
    let not_max = || {
        if g.len() == 1 {
            NoMaximum::HigherAt { top: g[0] >= 0.0 }
        } else {
            NoMaximum::NotNegativeDefinite
        }
    };
    // -H positive definite <=> H negative definite; then H u + g = 0 <=> (-H) u = g.
    let chol = (-h).cholesky().ok_or_else(not_max)?;
    let u = chol.solve(&g);
    if u.iter().all(|v| v.is_finite()) { Ok(u.iter().copied().collect()) } else { Err(not_max()) }
}

/// The value at quantile `q` of `sorted` by nearest rank (`round(q (n - 1))`); NaN when empty.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let k = (q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

impl Quadratic {
    /// Fits the quadratic to `obs` over the box `ranges` (`[min, max]` per variable).
    pub fn fit(obs: &[Obs], ranges: &[[f64; 2]]) -> Result<Quadratic, QuadraticError> {
        let dim = ranges.len();
        if !(1..=2).contains(&dim) {
            return Err(QuadraticError::Dimension(dim));
        }
        if let Some(o) = obs.iter().find(|o| o.x.len() != dim) {
            return Err(QuadraticError::MixedDimensions { got: o.x.len(), want: dim });
        }
        let p = coefficient_count(dim);
        if obs.len() < p {
            return Err(QuadraticError::TooFewPoints { need: p, have: obs.len() });
        }
        let finite = |o: &Obs| {
            o.y.is_finite() && o.x.iter().all(|x| x.is_finite()) && o.se.is_finite() && o.se > 0.0
        };
        if !obs.iter().all(finite) || ranges.iter().flatten().any(|v| !v.is_finite()) {
            return Err(QuadraticError::NonFinite);
        }
        let scaling: Vec<[f64; 2]> = ranges
            .iter()
            .map(|[lo, hi]| [(lo + hi) / 2.0, ((hi - lo) / 2.0).max(f64::MIN_POSITIVE)])
            .collect();
        let n = obs.len();
        let rows: Vec<Vec<f64>> = obs.iter().map(|o| design(&scale(&scaling, &o.x))).collect();
        // Weighted design: row i of X divided by se_i.
        let xw = DMatrix::from_fn(n, p, |i, j| rows[i][j] / obs[i].se);
        let svd = xw.svd(true, true);
        let largest = svd.singular_values.max();
        if largest.is_nan() || largest <= 0.0 || svd.rank(RANK_TOLERANCE * largest) < p {
            return Err(QuadraticError::Singular);
        }
        // Coefficients of any y: pinv(Xw) diag(1/se) y.
        let pinv =
            svd.pseudo_inverse(RANK_TOLERANCE * largest).map_err(|_| QuadraticError::Singular)?;
        let map = pinv * DMatrix::from_diagonal(&DVector::from_fn(n, |i, _| 1.0 / obs[i].se));
        let y = DVector::from_fn(n, |i, _| obs[i].y);
        let b = &map * &y;
        let x = DMatrix::from_fn(n, p, |i, j| rows[i][j]);
        let yhat = &x * &b;
        let chi2: f64 = (0..n).map(|i| ((y[i] - yhat[i]) / obs[i].se).powi(2)).sum();
        let dof = n - p;
        let p_value =
            (dof > 0).then(|| ChiSquared::new(dof as f64).map(|c| c.sf(chi2)).unwrap_or(f64::NAN));
        Ok(Quadratic {
            scaling,
            coefficients: b.iter().copied().collect(),
            points: n,
            chi2,
            dof,
            p_value,
            map,
            yhat,
            se: obs.iter().map(|o| o.se).collect(),
        })
    }

    /// Number of variables.
    pub fn dim(&self) -> usize {
        self.scaling.len()
    }

    /// The fitted value at `x` (original units).
    pub fn predict(&self, x: &[f64]) -> f64 {
        predict(&self.scaling, &self.coefficients, x)
    }

    /// The stationary maximum in original units, or why there is none.
    pub fn maximum(&self) -> Result<Vec<f64>, NoMaximum> {
        maximum_scaled(&self.coefficients).map(|u| unscale(&self.scaling, &u))
    }

    /// The parametric bootstrap of the maximum with `draws` draws from `rng` (see the module
    /// documentation).
    pub fn bootstrap<R: Rng + ?Sized>(&self, draws: usize, rng: &mut R) -> Bootstrap {
        let dim = self.dim();
        let mut finite: Vec<Vec<f64>> = vec![Vec::with_capacity(draws); dim];
        let (mut low, mut high, mut both) = (0usize, 0usize, 0usize);
        let mut ystar = DVector::zeros(self.yhat.len());
        for _ in 0..draws {
            for (i, se) in self.se.iter().enumerate() {
                let z: f64 = StandardNormal.sample(rng);
                ystar[i] = self.yhat[i] + se * z;
            }
            let b: Vec<f64> = (&self.map * &ystar).iter().copied().collect();
            match maximum_scaled(&b) {
                Ok(u) => {
                    for (k, x) in unscale(&self.scaling, &u).into_iter().enumerate() {
                        finite[k].push(x);
                    }
                }
                Err(NoMaximum::HigherAt { top: true }) => high += 1,
                Err(NoMaximum::HigherAt { top: false }) => low += 1,
                Err(NoMaximum::NotNegativeDefinite) => both += 1,
            }
        }
        let ends = finite
            .into_iter()
            .map(|mut f| {
                f.sort_by(f64::total_cmp);
                let padded = |below: usize, above: usize| -> Vec<f64> {
                    let mut v = vec![f64::NEG_INFINITY; below];
                    v.extend_from_slice(&f);
                    v.extend(std::iter::repeat_n(f64::INFINITY, above));
                    v
                };
                [
                    nearest_rank(&padded(low + both, high), 0.025),
                    nearest_rank(&padded(low, high + both), 0.975),
                ]
            })
            .collect();
        Bootstrap { ends, draws, without_maximum: low + high + both }
    }
}

/// The fitted value of coefficients `b` (scaled variables with `scaling`) at `x` (original
/// units).
pub fn predict(scaling: &[[f64; 2]], b: &[f64], x: &[f64]) -> f64 {
    design(&scale(scaling, x)).iter().zip(b).map(|(d, b)| d * b).sum()
}

fn scale(scaling: &[[f64; 2]], x: &[f64]) -> Vec<f64> {
    x.iter().zip(scaling).map(|(x, [c, h])| (x - c) / h).collect()
}

fn unscale(scaling: &[[f64; 2]], u: &[f64]) -> Vec<f64> {
    u.iter().zip(scaling).map(|(u, [c, h])| c + h * u).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    fn one(xs: &[f64], f: impl Fn(f64) -> f64, se: f64) -> Vec<Obs> {
        xs.iter().map(|&x| Obs { x: vec![x], y: f(x), se }).collect()
    }

    const XS: [f64; 6] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];

    #[test]
    fn exact_quadratic_gives_its_maximum_and_a_seeded_interval() {
        let obs = one(&XS, |x| 40.0 - 300.0 * (x - 0.37).powi(2), 5.0);
        let q = Quadratic::fit(&obs, &[[0.0, 1.0]]).unwrap();
        let x = q.maximum().unwrap()[0];
        assert!((x - 0.37).abs() < 1e-9, "{x}");
        assert!((q.predict(&[x]) - 40.0).abs() < 1e-6);
        assert!(q.chi2 < 1e-12 && q.dof == 3 && q.points == 6, "{q:?}");
        let b = q.bootstrap(500, &mut ChaCha8Rng::seed_from_u64(1));
        let [lo, hi] = b.ends[0];
        assert!(lo < 0.37 && hi > 0.37 && hi - lo < 0.2, "{lo} {hi}");
        assert_eq!(b, q.bootstrap(500, &mut ChaCha8Rng::seed_from_u64(1)));
    }

    #[test]
    fn curves_without_a_maximum_say_where_they_are_higher() {
        let q = Quadratic::fit(&one(&XS, |x| 100.0 * (x - 0.7).powi(2), 5.0), &[[0.0, 1.0]]);
        assert_eq!(q.unwrap().maximum(), Err(NoMaximum::HigherAt { top: false }));
        // A straight line: no maximum, or (rounding) one far beyond the top end.
        let q = Quadratic::fit(&one(&XS, |x| 50.0 * x, 5.0), &[[0.0, 1.0]]).unwrap();
        match q.maximum() {
            Ok(x) => assert!(x[0] > 1e6, "{x:?}"),
            Err(e) => assert_eq!(e, NoMaximum::HigherAt { top: true }),
        }
        // A rising concave curve: its maximum lies beyond the range.
        let q = Quadratic::fit(&one(&XS, |x| 100.0 * x - 20.0 * x * x, 5.0), &[[0.0, 1.0]]);
        assert!((q.unwrap().maximum().unwrap()[0] - 2.5).abs() < 1e-9);
    }

    #[test]
    fn poor_fits_have_a_small_p_value() {
        let obs = one(&XS, |x| if x < 0.5 { 0.0 } else { 100.0 }, 2.0);
        let q = Quadratic::fit(&obs, &[[0.0, 1.0]]).unwrap();
        assert!(q.p_value.unwrap() < 0.01, "{q:?}");
        let q = Quadratic::fit(&obs[..3], &[[0.0, 0.4]]).unwrap();
        assert_eq!((q.dof, q.p_value), (0, None));
    }

    #[test]
    fn degenerate_inputs_are_errors_not_panics() {
        let obs = one(&XS, |x| x, 1.0);
        let fit = |o: &[Obs], r: &[[f64; 2]]| Quadratic::fit(o, r).unwrap_err();
        assert_eq!(
            fit(&obs[..2], &[[0.0, 0.2]]),
            QuadraticError::TooFewPoints { need: 3, have: 2 }
        );
        // Three points, two distinct values.
        let o = vec![obs[0].clone(), obs[1].clone(), obs[1].clone()];
        assert_eq!(fit(&o, &[[0.0, 0.2]]), QuadraticError::Singular);
        // All at one value, and a grid on a line.
        assert_eq!(fit(&one(&[0.5; 6], |x| x, 1.0), &[[0.5, 0.5]]), QuadraticError::Singular);
        let line: Vec<Obs> =
            (0..6).map(|i| Obs { x: vec![i as f64, 2.0 * i as f64], y: 1.0, se: 1.0 }).collect();
        assert_eq!(fit(&line, &[[0.0, 5.0], [0.0, 10.0]]), QuadraticError::Singular);
        let mut bad = obs.clone();
        bad[2].se = 0.0;
        assert_eq!(fit(&bad, &[[0.0, 1.0]]), QuadraticError::NonFinite);
        bad[2].se = 1.0;
        bad[2].y = f64::NAN;
        assert_eq!(fit(&bad, &[[0.0, 1.0]]), QuadraticError::NonFinite);
        assert_eq!(fit(&obs, &[]), QuadraticError::Dimension(0));
        assert_eq!(
            fit(&obs, &[[0.0, 1.0], [0.0, 1.0]]),
            QuadraticError::MixedDimensions { got: 1, want: 2 }
        );
    }

    fn grid(f: impl Fn(f64, f64) -> f64) -> Vec<Obs> {
        let mut obs = Vec::new();
        for x in [0.8, 0.9, 1.0, 1.1, 1.2] {
            for y in [0.5, 0.9, 1.3] {
                obs.push(Obs { x: vec![x, y], y: f(x, y), se: 3.0 });
            }
        }
        obs
    }

    #[test]
    fn grid_surface_maximum_and_saddle() {
        let obs = grid(|x, y| {
            30.0 - 2000.0 * (x - 0.97f64).powi(2) - 150.0 * (y - 0.8f64).powi(2)
                + 100.0 * (x - 0.97) * (y - 0.8)
        });
        let ranges = [[0.8, 1.2], [0.5, 1.3]];
        let q = Quadratic::fit(&obs, &ranges).unwrap();
        let m = q.maximum().unwrap();
        assert!((m[0] - 0.97).abs() < 1e-9 && (m[1] - 0.8).abs() < 1e-9, "{m:?}");
        let b = q.bootstrap(500, &mut ChaCha8Rng::seed_from_u64(3));
        let [cx, cy] = [b.ends[0], b.ends[1]];
        assert!(cx[0] < m[0] && m[0] < cx[1] && cy[0] < m[1] && m[1] < cy[1], "{cx:?} {cy:?}");
        let saddle = grid(|x, y| 100.0 * (x - 1.0).powi(2) - 100.0 * (y - 0.9).powi(2));
        let q = Quadratic::fit(&saddle, &ranges).unwrap();
        assert_eq!(q.maximum(), Err(NoMaximum::NotNegativeDefinite));
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(nearest_rank(&v, 0.0), 1.0);
        assert_eq!(nearest_rank(&v, 0.5), 3.0);
        assert_eq!(nearest_rank(&v, 1.0), 5.0);
        assert!(nearest_rank(&[], 0.5).is_nan());
    }
}
