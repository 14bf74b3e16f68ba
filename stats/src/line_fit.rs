//! Ordinary least-squares line `y = a x + b` with its residual standard deviation and correlation:
//! the fit of the ProbCut opinion-change model `v = a * v' + b + e`, where `v'` is a shallow
//! search's score, `v` the deep one's and `e` a normal error whose standard deviation is `sigma`.

use serde::{Deserialize, Serialize};

/// The fitted model for one depth pair and stage.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Slope.
    pub a: f64,
    /// Intercept (centipawns).
    pub b: f64,
    /// Residual standard deviation (centipawns), `sqrt(SSE / (n - 2))`.
    pub sigma: f64,
    /// Pearson correlation coefficient of `v'` and `v`.
    pub r: f64,
    /// Number of points used.
    pub n: usize,
}

/// Why a set of points gives no fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("too few points to fit a line ({0}, need at least 3)")]
    TooFewPoints(usize),
    #[error("all shallow scores are equal: the slope is undefined")]
    NoSpread,
    #[error("fitted slope {0:.3} is not positive: no usable ProbCut model")]
    NonPositiveSlope(f64),
}

/// Fits `y = a * x + b` by ordinary least squares over `(x, y)` points.
///
/// `sigma` is the residual standard deviation with `n - 2` degrees of freedom (two parameters
/// estimated); `r` is 0 when all `y` are equal (no variation to explain).
pub fn fit_line(points: &[(f64, f64)]) -> Result<LinearFit, FitError> {
    let n = points.len();
    if n < 3 {
        return Err(FitError::TooFewPoints(n));
    }
    let nf = n as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for &(x, y) in points {
        let (dx, dy) = (x - mean_x, y - mean_y);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    if sxx <= f64::EPSILON * nf {
        return Err(FitError::NoSpread);
    }
    let a = sxy / sxx;
    let b = mean_y - a * mean_x;
    let sse: f64 = points.iter().map(|&(x, y)| (y - (a * x + b)).powi(2)).sum();
    let sigma = (sse / (nf - 2.0)).sqrt();
    let r = if syy > 0.0 { sxy / (sxx * syy).sqrt() } else { 0.0 };
    Ok(LinearFit { a, b, sigma, r, n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    use rand_distr::{Distribution, Normal};

    #[test]
    fn exact_line_is_recovered() {
        let pts: Vec<(f64, f64)> = (-5..=5).map(|x| (x as f64, 2.0 * x as f64 - 3.0)).collect();
        let f = fit_line(&pts).unwrap();
        assert!((f.a - 2.0).abs() < 1e-12 && (f.b + 3.0).abs() < 1e-12, "{f:?}");
        assert!(f.sigma < 1e-9 && (f.r - 1.0).abs() < 1e-12 && f.n == 11, "{f:?}");
    }

    #[test]
    fn noisy_synthetic_data_recovers_a_b_sigma() {
        // Crafty's (4,8) middlegame row: a = 1.02, b = -2.36, sigma = 82.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let noise = Normal::new(0.0, 82.0).unwrap();
        let pts: Vec<(f64, f64)> = (0..20_000)
            .map(|_| {
                let x = rng.random_range(-300.0..300.0);
                (x, 1.02 * x - 2.36 + noise.sample(&mut rng))
            })
            .collect();
        let f = fit_line(&pts).unwrap();
        assert!((f.a - 1.02).abs() < 0.02, "{f:?}");
        assert!((f.b + 2.36).abs() < 2.0, "{f:?}");
        assert!((f.sigma - 82.0).abs() < 1.5, "{f:?}");
        // r = a*sd(x) / sqrt(a^2 var(x) + sigma^2), var(x) = 600^2/12.
        let sdx = 600.0 / 12f64.sqrt();
        let expect_r = 1.02 * sdx / ((1.02 * sdx).powi(2) + 82.0f64.powi(2)).sqrt();
        assert!((f.r - expect_r).abs() < 0.01, "{f:?} vs r {expect_r}");
    }

    #[test]
    fn negative_slope_gives_negative_r() {
        let pts = [(0.0, 1.0), (1.0, 0.0), (2.0, -1.2), (3.0, -2.9)];
        let f = fit_line(&pts).unwrap();
        assert!(f.a < 0.0 && f.r < -0.9, "{f:?}");
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        assert_eq!(fit_line(&[(1.0, 1.0), (2.0, 2.0)]), Err(FitError::TooFewPoints(2)));
        assert_eq!(fit_line(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]), Err(FitError::NoSpread));
        let flat = fit_line(&[(1.0, 5.0), (2.0, 5.0), (3.0, 5.0)]).unwrap();
        assert_eq!((flat.a, flat.b, flat.r, flat.sigma), (0.0, 5.0, 0.0, 0.0));
    }
}
