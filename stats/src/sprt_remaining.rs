//! How many more game pairs a running SPRT will take: a predictive range, not only the expected
//! figure of [`crate::sprt_length`]. Two things make the true length differ from the expected
//! one, and the range covers both: the walk of the log-likelihood ratio is random even when the
//! drift is known (the time it first leaves the bounds is spread about its mean about as much
//! as the mean itself when the drift is small), and the drift is known only from the pairs so
//! far (the pair mean's standard error).
//!
//! The range is read off walks simulated from the current LLR (a seeded generator, so one set of
//! counts always gives one answer): each walk takes a pair mean of the observed mean's interval
//! and follows the LLR as a Brownian motion with that
//! mean's drift and variance per pair (the increments of `sprt_length`), in steps of 1/100 of
//! its expected length (at least one pair), until it leaves the bounds or the schedule's pairs
//! run out. The range is from the [`LOW_Q`] to the [`HIGH_Q`] quantile of the walks' lengths,
//! joined over the pair means of the observed mean's 95 % interval ([`remaining_pairs`]).
//!
//! How often the range holds the true length was measured on simulated SPRTs (the test
//! `coverage_on_simulated_sprts` below; its figures are in
//! docs/measurements/time-left-coverage.md).

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use statrs::distribution::{ContinuousCDF, Gamma};

use crate::counts::Penta;
use crate::estimate::ScoreMoments;
use crate::sprt::SprtSpec;
use crate::sprt_length::{expected_pairs_from, walk_steps};

/// Walks simulated per pair mean tried.
pub const WALKS: usize = 200;
/// Each walk's length quantiles kept: a 90 % predictive interval for one pair mean.
pub const LOW_Q: f64 = 0.05;
pub const HIGH_Q: f64 = 0.95;
/// Pairs before which no range is given: with fewer, the pairs' spread and the rate a time is
/// reckoned from rest on a handful of values (a choice, not a measured threshold; the
/// coverage test checks from here on).
pub const MIN_RANGE_PAIRS: u64 = 30;
/// Pair means tried across the mean's 95 % interval (both ends included).
const GRID: usize = 8;

/// Pairs left: the expected figure (Wald's, at the observed mean) and the predictive range,
/// each at most the pairs the schedule has left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Remaining {
    pub expected: f64,
    pub low: f64,
    pub high: f64,
}

/// The [`LOW_Q`] and [`HIGH_Q`] quantiles of the lengths of [`WALKS`] walks with the increments
/// of pair mean `mu`, from 0 to the bounds `a > 0 > b`, cut at `cap` pairs.
fn walk_quantiles(
    rng: &mut ChaCha8Rng,
    mu: f64,
    sd: f64,
    spec: &SprtSpec,
    (a, b): (f64, f64),
    cap: f64,
) -> Option<(f64, f64)> {
    let (d, v) = walk_steps(mu, sd, spec)?;
    let z = Normal::new(0.0, 1.0).ok()?;
    let mean_len = expected_pairs_from(mu, sd, spec, spec.upper_bound() - a)?.min(cap);
    let dt = (mean_len / 100.0).max(1.0);
    let mut lengths: Vec<f64> = Vec::with_capacity(WALKS);
    for _ in 0..WALKS {
        let (mut t, mut x, mut steps) = (0.0, 0.0, 0u32);
        // A walk far past its 100 expected steps is cut at 50 times its mean length.
        while t < cap && steps < 5_000 {
            steps += 1;
            let step = dt.min(cap - t);
            x += d * step + (v * step).sqrt() * z.sample(rng);
            t += step;
            if x >= a || x <= b {
                break;
            }
        }
        lengths.push(t.min(cap));
    }
    lengths.sort_by(f64::total_cmp);
    let q = |p: f64| lengths[((lengths.len() - 1) as f64 * p).round() as usize];
    Some((q(LOW_Q), q(HIGH_Q)))
}

/// The pairs an SPRT on `penta` (its pairs so far; LLR `llr` now) has left under `spec`, at
/// most `cap`; `None` with fewer than [`MIN_RANGE_PAIRS`] pairs, without a spread, or with a
/// figure not finite.
///
/// The range joins the predictive ranges of the pair means across the observed mean's 95 %
/// interval (and of the mean between the hypotheses, where the walk is longest, when the
/// interval holds it): early in a test the drift is barely known, and the range says so by
/// being wide; it narrows as the pairs pin the drift down.
pub fn remaining_pairs(penta: &Penta, spec: &SprtSpec, llr: f64, cap: f64) -> Option<Remaining> {
    let n = penta.pairs();
    if n < MIN_RANGE_PAIRS || cap.is_nan() || cap < 0.0 {
        return None;
    }
    let m = ScoreMoments::from_penta(penta)?;
    // The pair score's deviation (sample) and its mean's standard error.
    let sd = m.std_error * n as f64 / ((n - 1) as f64).sqrt();
    let se = sd / (n as f64).sqrt();
    let expected = expected_pairs_from(m.score, sd, spec, llr)?.min(cap);
    if llr >= spec.upper_bound() || llr <= spec.lower_bound() {
        return Some(Remaining { expected: 0.0, low: 0.0, high: 0.0 });
    }
    let bounds = (spec.upper_bound() - llr, spec.lower_bound() - llr);
    let (lo_mu, hi_mu) = ((m.score - 1.96 * se).max(0.0), (m.score + 1.96 * se).min(1.0));
    let mut mus: Vec<f64> =
        (0..GRID).map(|i| lo_mu + (hi_mu - lo_mu) * i as f64 / (GRID - 1) as f64).collect();
    // The mean with no drift: the longest walks.
    let (d_lo, _) = walk_steps(lo_mu, sd, spec)?;
    let (d_hi, _) = walk_steps(hi_mu, sd, spec)?;
    if d_lo <= 0.0 && d_hi >= 0.0 && d_hi > d_lo {
        mus.push(lo_mu + (hi_mu - lo_mu) * (-d_lo) / (d_hi - d_lo));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_5b27);
    let (mut low, mut high) = (f64::INFINITY, 0.0f64);
    for mu in mus {
        if let Some((l, h)) = walk_quantiles(&mut rng, mu, sd, spec, bounds, cap) {
            low = low.min(l);
            high = high.max(h);
        }
    }
    if !low.is_finite() {
        return None;
    }
    Some(Remaining { expected: expected.clamp(low, high), low, high })
}

/// Seconds for `low..high` pairs at a rate of `per_hour` pairs per hour measured over `gaps`
/// intervals between reported pairs: the range widened by the rate's own 90 % interval (the
/// gaps taken as exponential, so the time `gaps` of them take is Gamma(`gaps`)), so that a rate
/// measured from few pairs does not narrow the time it claims. `None` without a rate.
pub fn seconds_range(low: f64, high: f64, per_hour: f64, gaps: u64) -> Option<(f64, f64)> {
    if !(per_hour > 0.0 && per_hour.is_finite()) || gaps == 0 {
        return None;
    }
    let g = Gamma::new(gaps as f64, 1.0).ok()?;
    let k = gaps as f64;
    let (slow, fast) = (per_hour * g.inverse_cdf(0.05) / k, per_hour * g.inverse_cdf(0.95) / k);
    Some((low / fast * 3600.0, high / slow * 3600.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elo::logistic_score;
    use crate::sprt::{EloModel, llr};
    use rand::RngExt;

    /// The pentanomial probabilities (LL, LD, DD, WD, WW) of pairs between engines `elo` apart
    /// with a draw-heavy spread (as two engines close in strength at a fast control): a
    /// symmetric base shifted until the pair mean is the logistic score of `elo`.
    fn pair_probs(elo: f64) -> [f64; 5] {
        let base = [0.03, 0.2, 0.54, 0.2, 0.03];
        let target = logistic_score(elo);
        // Move mass from the losing side to the winning side (LD to WD, LL to WW in proportion;
        // DD stays 0.54): the pair mean is 0.5 + 0.13 s.
        let s = (target - 0.5) / 0.13;
        let mut p = base;
        p[0] = base[0] * (1.0 - s);
        p[4] = base[4] * (1.0 + s);
        p[1] = base[1] * (1.0 - s);
        p[3] = base[3] * (1.0 + s);
        p[2] = 1.0 - p[0] - p[1] - p[3] - p[4];
        p
    }

    fn draw(p: &[f64; 5], u: f64) -> usize {
        let mut acc = 0.0;
        for (i, x) in p.iter().enumerate() {
            acc += x;
            if u < acc {
                return i;
            }
        }
        4
    }

    /// One simulated SPRT: the pentanomial after each pair, until the LLR leaves the bounds or
    /// `cap` pairs; returns the counts after each pair and the length.
    fn play(rng: &mut ChaCha8Rng, p: &[f64; 5], spec: &SprtSpec, cap: usize) -> Vec<[u64; 5]> {
        let mut c = [0u64; 5];
        let mut out = Vec::new();
        for _ in 0..cap {
            c[draw(p, rng.random::<f64>())] += 1;
            out.push(c);
            if let Ok(l) = llr(&c, spec.elo0, spec.elo1, spec.model)
                && (l >= spec.upper_bound() || l <= spec.lower_bound())
            {
                break;
            }
        }
        out
    }

    /// Coverage of the range on simulated SPRTs ([0, 5] normalized and logistic, true Elo
    /// -5 to 10, `runs` SPRTs each), checked at 10, 30, 100 and 300 pairs into each (when still
    /// going), in pairs and in time: pairs arrive at random (exponential gaps, a Poisson
    /// stream) at 60, 600 or 6000 per hour, and the time range is the pairs' range at the rate
    /// measured so far ((k - 1) pairs over the time since the first, as `runner status`
    /// measures it), widened by that rate's uncertainty ([`seconds_range`]). Returns (checks, pairs covered, time covered, no range) per case, printed.
    fn coverage(runs: usize, seed: u64) -> Vec<(String, u64, u64, u64, u64)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let checks = [10usize, 30, 100, 300];
        let cap = 20_000usize;
        let mut out = Vec::new();
        for model in [EloModel::Normalized, EloModel::Logistic] {
            let spec = SprtSpec { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05, model };
            for elo in [-5.0, 0.0, 2.5, 5.0, 10.0] {
                let p = pair_probs(elo);
                let (mut hp, mut ht, mut n, mut none) = (0u64, 0u64, 0u64, 0u64);
                for run in 0..runs {
                    let rate = [60.0, 600.0, 6000.0][run % 3];
                    let path = play(&mut rng, &p, &spec, cap);
                    let len = path.len();
                    let gap = rand_distr::Exp::new(rate / 3600.0).unwrap();
                    let mut at = vec![0.0f64; len];
                    let mut t = 0.0;
                    for a in at.iter_mut() {
                        t += gap.sample(&mut rng);
                        *a = t;
                    }
                    for &k in &checks {
                        if k >= len {
                            continue;
                        }
                        let [ll, ld, dd, wd, ww] = path[k - 1];
                        let penta = Penta { ll, ld, dd, wd, ww };
                        let now = llr(&path[k - 1], 0.0, 5.0, model).unwrap();
                        let left = (len - k) as f64;
                        let Some(r) = remaining_pairs(&penta, &spec, now, (cap - k) as f64) else {
                            none += 1;
                            continue;
                        };
                        let per_hour = (k - 1) as f64 / (at[k - 1] - at[0]) * 3600.0;
                        let (lo_s, hi_s) =
                            seconds_range(r.low, r.high, per_hour, k as u64 - 1).unwrap();
                        let true_time = at[len - 1] - at[k - 1];
                        n += 1;
                        hp += u64::from(r.low <= left && left <= r.high);
                        ht += u64::from(lo_s <= true_time && true_time <= hi_s);
                    }
                }
                let case = format!("{model:?} elo {elo:+}");
                println!(
                    "{case}: {n} ranges, pairs covered {:.1} %, time covered {:.1} %, {none} without a range",
                    100.0 * hp as f64 / n as f64,
                    100.0 * ht as f64 / n as f64
                );
                out.push((case, n, hp, ht, none));
            }
        }
        let (n, hp, ht): (u64, u64, u64) =
            out.iter().fold((0, 0, 0), |s, c| (s.0 + c.1, s.1 + c.2, s.2 + c.3));
        println!(
            "all: {n} ranges, pairs covered {:.1} %, time covered {:.1} %",
            100.0 * hp as f64 / n as f64,
            100.0 * ht as f64 / n as f64
        );
        out
    }

    /// The range holds the true pairs and time left at least 80 % of the time in every case
    /// (`cargo test -p stats --lib coverage -- --nocapture` prints the figures); at 10 pairs
    /// there is none.
    #[test]
    fn coverage_on_simulated_sprts() {
        for (case, n, hp, ht, none) in coverage(12, 44) {
            assert!(n >= 20 && none >= 12, "{case}: {n} ranges, {none} without");
            assert!(hp as f64 >= 0.8 * n as f64 && ht as f64 >= 0.8 * n as f64, "{case}");
        }
    }

    /// A longer run of docs/measurements/time-left-coverage.md's simulation: 60 SPRTs per case
    /// (`cargo test -p stats --lib coverage_long -- --ignored --nocapture`, a few minutes).
    #[test]
    #[ignore]
    fn coverage_long() {
        for (case, n, hp, ht, _) in coverage(60, 2026) {
            assert!(hp as f64 >= 0.8 * n as f64 && ht as f64 >= 0.8 * n as f64, "{case}");
        }
    }

    #[test]
    fn a_finished_walk_has_nothing_left_and_the_cap_bounds_the_range() {
        let spec =
            SprtSpec { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05, model: EloModel::Normalized };
        let p = Penta { ll: 20, ld: 90, dd: 180, wd: 90, ww: 20 };
        let few = Penta { dd: 28, ld: 1, ..Penta::default() };
        assert_eq!(remaining_pairs(&few, &spec, 0.0, 9.0), None, "under 30 pairs");
        let r = remaining_pairs(&p, &spec, 0.0, 100_000.0).unwrap();
        assert!(r.low < r.expected && r.expected < r.high, "{r:?}");
        assert_eq!(remaining_pairs(&p, &spec, 3.0, 1e5).unwrap().high, 0.0);
        let r = remaining_pairs(&p, &spec, 0.0, 50.0).unwrap();
        assert!(r.high <= 50.0 && r.low <= 50.0, "{r:?}");
        assert_eq!(remaining_pairs(&Penta { dd: 1, ..Penta::default() }, &spec, 0.0, 9.0), None);
        // One set of counts, one answer.
        assert_eq!(remaining_pairs(&p, &spec, 0.0, 1e5), remaining_pairs(&p, &spec, 0.0, 1e5));
    }
}
