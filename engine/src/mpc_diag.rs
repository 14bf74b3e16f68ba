//! The arithmetic of the Multi-ProbCut diagnostics: which cuts are
//! verified, the model's wrong-cut probability, and the rate with its interval for `bench`.
//!
//! The model (`mpc`): deep value `v = a*v' + b + e`, `e ~ N(0, sigma)`. A fail-high cut is
//! wrong when the full-depth value is below beta. Given the shallow value `v'`, that has
//! probability `Phi((beta - a*v' - b) / sigma)`; at the bound (`a*v' + b = beta + t*sigma`) it is
//! `Phi(-t)`, and every cut has `v'` at or beyond its bound, so `Phi(-t)` is the most the model
//! allows per cut. The shallow search is a null-window search whose fail-soft value is itself
//! only a bound on `v'`, so the probability computed from it is again an upper bound.

use crate::mpc::MpcParam;
use crate::search::MpcStats;

/// Whether cut number `k` (at a node with Zobrist key `key`) is among the `pct` percent that
/// are verified: a fixed hash of both, so the same search verifies the same cuts every time.
pub fn sampled(key: u64, k: u64, pct: u32) -> bool {
    let h = (key ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    ((h >> 32) % 100) < pct as u64
}

/// Standard normal distribution function (Zelen and Severo's polynomial, Abramowitz and
/// Stegun 26.2.17; absolute error below 1e-7).
pub fn phi(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let z = x.abs();
    let k = 1.0 / (1.0 + 0.231_641_9 * z);
    let poly = k
        * (0.319_381_530
            + k * (-0.356_563_782
                + k * (1.781_477_937 + k * (-1.821_255_978 + k * 1.330_274_429))));
    let tail = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt() * poly;
    if x >= 0.0 { 1.0 - tail } else { tail }
}

/// The model's probability that a cut is wrong, given the shallow value `shallow` and the
/// window edge the node returned (beta for a fail-high cut, alpha for a fail-low one).
pub fn model_wrong_prob(p: &MpcParam, shallow: i32, edge: i32, beta_side: bool) -> f64 {
    let predicted = p.a * shallow as f64 + p.b;
    let sigma = p.sigma.max(1e-9);
    let z = if beta_side {
        (edge as f64 - predicted) / sigma
    } else {
        (predicted - edge as f64) / sigma
    };
    phi(z)
}

/// A probability in millionths, for the integer counters.
pub fn ppm(p: f64) -> u64 {
    (p.clamp(0.0, 1.0) * 1e6).round() as u64
}

/// Wilson's 95 % interval for `k` successes in `n` trials; `None` for `n = 0`.
pub fn wilson(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let (k, n, z) = (k as f64, n as f64, 1.959_963_985);
    let p = k / n;
    let den = 1.0 + z * z / n;
    let mid = (p + z * z / (2.0 * n)) / den;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / den;
    Some(((mid - half).max(0.0), (mid + half).min(1.0)))
}

fn pct(k: u64, n: u64) -> String {
    if n == 0 { "n/a".into() } else { format!("{:.1}%", 100.0 * k as f64 / n as f64) }
}

fn rate_with_interval(k: u64, n: u64) -> String {
    match wilson(k, n) {
        None => "n/a (none verified)".into(),
        Some((lo, hi)) => format!(
            "{k}/{n} = {:.1}% [{:.1}%, {:.1}%]",
            100.0 * k as f64 / n as f64,
            100.0 * lo,
            100.0 * hi
        ),
    }
}

/// The human-readable summary `bench` prints (stdout, before its last line).
pub fn summary_lines(s: &MpcStats) -> Vec<String> {
    let mut out = vec![format!(
        "mpc tries {} cuts {} (beta {} alpha {}) at PV nodes {} ({})",
        s.tries,
        s.cuts(),
        s.beta_cuts,
        s.alpha_cuts,
        s.pv_cuts,
        pct(s.pv_cuts, s.cuts())
    )];
    out.push(format!(
        "mpc overlap: beta cuts where null move would have been tried {} ({}), where reverse \
         futility holds {} ({}); alpha cuts with eval below alpha by the RFP margin {} ({})",
        s.null_cond,
        pct(s.null_cond, s.beta_cuts),
        s.rfp_cond,
        pct(s.rfp_cond, s.beta_cuts),
        s.razor_cond,
        pct(s.razor_cond, s.alpha_cuts)
    ));
    if s.null_checks > 0 {
        out.push(format!(
            "mpc null-move check (MPCDiag): {} of {} searched would have cut ({}; {} of all beta \
             cuts), {} nodes (MPC's shallow searches: {} nodes in all)",
            s.null_would_cut,
            s.null_checks,
            pct(s.null_would_cut, s.null_checks),
            pct(s.null_would_cut, s.beta_cuts),
            s.null_check_nodes,
            s.shallow_nodes
        ));
    }
    let verified = s.verified_beta + s.verified_alpha;
    if verified > 0 {
        let wrong = s.wrong_beta + s.wrong_alpha;
        out.push(format!(
            "mpc verified (MPCVerifySample): wrong {}; beta {}; alpha {}; model at the shallow \
             value <= {:.1}%, at the bound Phi(-t) {:.1}%; {} nodes",
            rate_with_interval(wrong, verified),
            rate_with_interval(s.wrong_beta, s.verified_beta),
            rate_with_interval(s.wrong_alpha, s.verified_alpha),
            s.model_wrong_ppm as f64 / verified as f64 / 1e4,
            s.bound_wrong_ppm as f64 / verified as f64 / 1e4,
            s.verify_nodes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_matches_known_values() {
        for (x, want) in
            [(0.0, 0.5), (-1.0, 0.158_655_25), (1.0, 0.841_344_75), (-1.96, 0.024_997_9)]
        {
            assert!((phi(x) - want).abs() < 1e-6, "phi({x}) = {}", phi(x));
        }
        assert!(phi(-40.0) < 1e-12 && phi(40.0) == 1.0);
    }

    #[test]
    fn model_probability_is_phi_minus_t_at_the_bound() {
        let p = MpcParam { shallow: 4, a: 1.0, b: 0.0, sigma: 100.0 };
        // Beta 50, t = 1: the bound is 150; a shallow value there is wrong with Phi(-1).
        assert!((model_wrong_prob(&p, 150, 50, true) - phi(-1.0)).abs() < 1e-12);
        assert!(model_wrong_prob(&p, 250, 50, true) < model_wrong_prob(&p, 150, 50, true));
        // Alpha -50, t = 1: the bound is -150.
        assert!((model_wrong_prob(&p, -150, -50, false) - phi(-1.0)).abs() < 1e-12);
        assert!(model_wrong_prob(&p, -350, -50, false) < 0.01);
        assert_eq!(ppm(phi(-1.0)), 158_655);
    }

    #[test]
    fn sampling_is_deterministic_and_near_the_percentage() {
        let hits = |pct| (0..10_000u64).filter(|&k| sampled(0x1234_5678_9abc, k, pct)).count();
        assert_eq!(hits(0), 0);
        assert_eq!(hits(100), 10_000);
        let h = hits(10);
        assert!((850..1150).contains(&h), "{h}");
        assert_eq!(h, hits(10));
    }

    #[test]
    fn wilson_interval() {
        assert_eq!(wilson(0, 0), None);
        let (lo, hi) = wilson(16, 100).unwrap();
        assert!((lo - 0.1007).abs() < 1e-3 && (hi - 0.2448).abs() < 1e-3, "{lo} {hi}");
        let (lo, hi) = wilson(0, 50).unwrap();
        assert!(lo == 0.0 && hi > 0.05 && hi < 0.08);
    }
}
