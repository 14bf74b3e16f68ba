//! Plain sample statistics for per-position measurements (the search test's oracle losses):
//! a mean with its Student-t 95 % interval, a paired comparison of two such samples (paired t
//! test: the mean difference, its interval and a two-sided p-value), and a proportion with its
//! Wilson 95 % interval.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The two-sided 95 % level used throughout.
const LEVEL: f64 = 0.95;

/// A sample mean with a 95 % interval from Student's t (n - 1 degrees of freedom).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanInterval {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
    /// The interval; absent below 2 values (no spread to estimate), equal to the mean when all
    /// values are equal.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// The mean of `xs` with its 95 % t interval; `None` for an empty sample or a non-finite value.
pub fn mean_interval(xs: &[f64]) -> Option<MeanInterval> {
    let n = xs.len();
    if n == 0 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(MeanInterval { n, mean, sd: 0.0, lo: None, hi: None });
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let half = t_quantile(n - 1)? * sd / (n as f64).sqrt();
    Some(MeanInterval { n, mean, sd, lo: Some(mean - half), hi: Some(mean + half) })
}

/// The two-sided 97.5 % quantile of Student's t with `df` degrees of freedom.
fn t_quantile(df: usize) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df as f64).ok()?;
    Some(t.inverse_cdf(0.5 + LEVEL / 2.0))
}

/// A paired t test of `a[i] - b[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedTest {
    /// The mean difference (a - b) with its 95 % interval.
    pub diff: MeanInterval,
    /// t statistic; absent when the differences have no spread (or fewer than 2 pairs).
    pub t: Option<f64>,
    /// Two-sided p-value of "mean difference = 0": 1 when every difference is 0, absent when
    /// the differences are all equal but not 0 or there are fewer than 2 pairs.
    pub p: Option<f64>,
}

/// Paired t test over equally long samples `a` and `b`; `None` when their lengths differ, they
/// are empty, or a value is not finite.
pub fn paired_t(a: &[f64], b: &[f64]) -> Option<PairedTest> {
    if a.len() != b.len() {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let diff = mean_interval(&d)?;
    let n = diff.n;
    if n < 2 {
        return Some(PairedTest { diff, t: None, p: None });
    }
    if diff.sd == 0.0 {
        let p = (diff.mean == 0.0).then_some(1.0);
        return Some(PairedTest { diff, t: None, p });
    }
    let t = diff.mean / (diff.sd / (n as f64).sqrt());
    let dist = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    Some(PairedTest { diff, t: Some(t), p: Some(p) })
}

/// A proportion `k / n` with its Wilson score 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proportion {
    pub k: usize,
    pub n: usize,
    pub rate: f64,
    pub lo: f64,
    pub hi: f64,
}

/// `k` successes of `n`; `None` when `n` is 0 or `k > n`.
pub fn wilson(k: usize, n: usize) -> Option<Proportion> {
    if n == 0 || k > n {
        return None;
    }
    let z = Normal::new(0.0, 1.0).ok()?.inverse_cdf(0.5 + LEVEL / 2.0);
    let nf = n as f64;
    let p = k as f64 / nf;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = z / (1.0 + z2 / nf) * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    Some(Proportion {
        k,
        n,
        rate: p,
        lo: if k == 0 { 0.0 } else { (centre - half).max(0.0) },
        hi: if k == n { 1.0 } else { (centre + half).min(1.0) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn mean_interval_matches_a_hand_computation() {
        // 1..=5: mean 3, sd sqrt(2.5); t(4, 0.975) = 2.776445.
        let m = mean_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((m.n, m.mean), (5, 3.0));
        assert!(close(m.sd, 2.5f64.sqrt(), 1e-12));
        let half = 2.776445 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!(close(m.lo.unwrap(), 3.0 - half, 1e-5), "{m:?}");
        assert!(close(m.hi.unwrap(), 3.0 + half, 1e-5), "{m:?}");
        let one = mean_interval(&[7.0]).unwrap();
        assert_eq!((one.mean, one.lo, one.hi), (7.0, None, None));
        assert!(mean_interval(&[]).is_none());
        assert!(mean_interval(&[1.0, f64::NAN]).is_none());
        let flat = mean_interval(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((flat.lo, flat.hi), (Some(2.0), Some(2.0)));
    }

    #[test]
    fn paired_t_matches_a_textbook_value() {
        // Differences 1, 2, 3, 4, 5, 6 (sd 1.8708): t = 3.5 / (1.8708 / sqrt 6) = 4.5826,
        // two-sided p with 5 df = 0.005934 (R: 2*pt(-4.5826, 5)).
        let a = [11.0, 12.0, 13.0, 14.0, 15.0, 16.0];
        let b = [10.0; 6];
        let t = paired_t(&a, &b).unwrap();
        assert!(close(t.diff.mean, 3.5, 1e-12));
        assert!(close(t.t.unwrap(), 4.582576, 1e-5), "{t:?}");
        assert!(close(t.p.unwrap(), 0.005934, 2e-5), "{t:?}");
        assert!(t.diff.lo.unwrap() > 0.0);
        // The same samples the other way round: the sign flips, p does not.
        let r = paired_t(&b, &a).unwrap();
        assert!(close(r.t.unwrap(), -4.582576, 1e-5) && close(r.p.unwrap(), t.p.unwrap(), 1e-12));
        // Noise around zero is not significant.
        let n = paired_t(&[1.0, -1.0, 2.0, -2.0], &[0.0; 4]).unwrap();
        assert!(n.p.unwrap() > 0.9, "{n:?}");
        // No spread: identical samples give p = 1, a constant shift has no p.
        assert_eq!(paired_t(&a, &a).unwrap().p, Some(1.0));
        assert_eq!(paired_t(&a, &a.map(|x| x - 1.0)).unwrap().p, None);
        assert!(paired_t(&a, &b[..3]).is_none());
    }

    #[test]
    fn wilson_interval_matches_known_values() {
        // 8 of 10: Wilson 95 % = [0.4902, 0.9433].
        let p = wilson(8, 10).unwrap();
        assert!(close(p.rate, 0.8, 1e-12));
        assert!(close(p.lo, 0.4902, 1e-4) && close(p.hi, 0.9433, 1e-4), "{p:?}");
        // 0 of 20 and 20 of 20 stay inside [0, 1] and are not degenerate.
        let z = wilson(0, 20).unwrap();
        assert!(z.lo == 0.0 && close(z.hi, 0.1611, 1e-4), "{z:?}");
        let a = wilson(20, 20).unwrap();
        assert!(a.hi == 1.0 && close(a.lo, 0.8389, 1e-4), "{a:?}");
        assert!(wilson(1, 0).is_none() && wilson(3, 2).is_none());
    }
}
