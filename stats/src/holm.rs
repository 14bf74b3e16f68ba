//! Holm-Bonferroni step-down correction for testing many sweep points at once.
//!
//! Sort the `m` p-values ascending, `p_(1) <= ... <= p_(m)`. Walk up the list and reject (call
//! significant) `H_(k)` while `p_(k) < alpha / (m + 1 - k)`; stop at the first that fails and
//! keep it and all later ones. The family-wise error rate (the chance of any false
//! "significant") stays at most `alpha`, with more power than plain Bonferroni (`alpha / m` for
//! all). The comparison is strict, like the `p < alpha` of the single test.

/// Which hypotheses are rejected (significant) at family-wise level `alpha`, in input order.
/// A NaN p-value is treated as 1 (never significant).
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let m = p_values.len();
    let p = |i: usize| if p_values[i].is_nan() { 1.0 } else { p_values[i] };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p(a).total_cmp(&p(b)));
    let mut rejected = vec![false; m];
    for (k, &i) in order.iter().enumerate() {
        if p(i) < alpha / (m - k) as f64 {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_down_by_hand() {
        // m = 4, alpha = 0.05: thresholds 0.0125, 0.01667, 0.025, 0.05 in sorted order.
        let p = [0.04, 0.01, 0.03, 0.005];
        assert_eq!(holm(&p, 0.05), [false, true, false, true]);
        // 0.02 < 0.025 passes the third step, then 0.04 < 0.05 the fourth.
        let p = [0.04, 0.01, 0.02, 0.005];
        assert_eq!(holm(&p, 0.05), [true, true, true, true]);
        // Stops at the first failure even if a later p would pass its own threshold.
        let p = [0.03, 0.001, 0.049, 0.04];
        assert_eq!(holm(&p, 0.05), [false, true, false, false]);
    }

    #[test]
    fn single_and_empty_and_nan() {
        assert_eq!(holm(&[], 0.05), Vec::<bool>::new());
        assert_eq!(holm(&[0.049], 0.05), [true]);
        assert_eq!(holm(&[0.05], 0.05), [false]);
        assert_eq!(holm(&[f64::NAN, 0.001], 0.05), [false, true]);
    }

    #[test]
    fn rejects_at_least_what_bonferroni_rejects() {
        let p = [0.001, 0.011, 0.02, 0.3, 0.012];
        let h = holm(&p, 0.05);
        for (i, &pi) in p.iter().enumerate() {
            if pi < 0.05 / p.len() as f64 {
                assert!(h[i]);
            }
        }
    }
}
