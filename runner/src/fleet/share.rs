//! A run's share of the fleet and its time left, as `runner status` words them: owner, priority,
//! throughput, its share of the pairs in flight now against its target, its current rate in
//! pairs per hour, and the time left with a range.
//!
//! Time left is remaining pairs over the current rate. For a fixed-length run the remaining
//! pairs are those neither played nor skipped. For an SPRT, each active pairing's expected
//! remaining pairs come from its current LLR and the drift of its pairs so far (Wald's walk
//! started at the current LLR, `stats::expected_pairs_from`), with a predictive range from
//! simulated walks (`stats::remaining_pairs`, from 30 pairs on; its coverage on simulated SPRTs
//! is in docs/measurements/time-left-coverage.md), and the time range is widened by the rate's own
//! uncertainty; each figure is capped by the pairs left in the schedule (the run never plays more).
//! Nothing is claimed beyond the data: n/a without a rate, and an SPRT pairing with fewer than
//! `MIN_RANGE_PAIRS` (30) pairs gives only the schedule's bound ("at most").

use std::time::Duration;

use stats::{Counts, SprtSpec};

use super::decide::stats_counts;
use super::queue::share::{Share, ShareRow};
use super::queue::{PairingCounts, Progress};
use crate::store::formats::{FleetShare, TimeLeft};
use stats::sprt_remaining::MIN_RANGE_PAIRS as MIN_PAIRS;

/// Pairs per hour now: over the last hour once the run has reported for an hour, else since its
/// first report (at least two pairs). None when there is no rate to speak of.
pub fn pairs_per_hour(p: &Progress) -> Option<f64> {
    if p.reporting_secs >= 3600.0 {
        return (p.pairs_last_hour > 0).then_some(p.pairs_last_hour as f64);
    }
    (p.reporting_secs > 0.0 && p.pairs_done > 1)
        .then(|| (p.pairs_done - 1) as f64 * 3600.0 / p.reporting_secs)
}

/// Pairs left to play: an expected figure with its range, or only the schedule's bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Left {
    /// A fixed length: exactly this many pairs are left.
    Fixed(f64),
    /// An SPRT: expected pairs left, and their predictive range (`stats::remaining_pairs`);
    /// `gaps`, the intervals between reports the rate is measured over (the time range is
    /// widened by the rate's uncertainty: `stats::sprt_remaining::seconds_range`).
    Sprt { expected: f64, lo: f64, hi: f64, gaps: u64 },
    /// An SPRT without enough pairs for an estimate: at most this many (the schedule).
    AtMost(f64),
}

/// The pairs run `counts` has left (`sprt`: the run's SPRT, if any; `p`: its progress).
pub fn pairs_left(counts: &[PairingCounts], sprt: Option<&SprtSpec>, p: &Progress) -> Left {
    let cap = (p.pairs_total - p.pairs_done - p.pairs_skipped).max(0) as f64;
    let Some(spec) = sprt else { return Left::Fixed(cap) };
    let (mut expected, mut lo, mut hi) = (0.0, 0.0, 0.0);
    for c in counts.iter().filter(|c| c.active) {
        match sprt_left(&stats_counts(c), spec) {
            Some((e, l, h)) => {
                expected += e;
                lo += l;
                hi += h;
            }
            None => return Left::AtMost(cap),
        }
    }
    let gaps = if p.reporting_secs >= 3600.0 { p.pairs_last_hour } else { p.pairs_done - 1 };
    Left::Sprt {
        expected: expected.min(cap),
        lo: lo.min(cap),
        hi: hi.min(cap),
        gaps: gaps.max(0) as u64,
    }
}

/// Seconds for `lo..hi` pairs at `rate`, widened by the rate's uncertainty over `gaps`.
fn range_secs(lo: f64, hi: f64, rate: f64, gaps: u64) -> (Duration, Duration) {
    let (a, b) = stats::sprt_remaining::seconds_range(lo, hi, rate, gaps)
        .unwrap_or((lo / rate * 3600.0, hi / rate * 3600.0));
    (Duration::from_secs_f64(a.clamp(0.0, 1e9)), Duration::from_secs_f64(b.clamp(0.0, 1e9)))
}

/// One pairing's expected SPRT pairs left and their predictive range
/// (`stats::remaining_pairs`); None below `MIN_PAIRS` pairs or without a spread.
fn sprt_left(counts: &Counts, spec: &SprtSpec) -> Option<(f64, f64, f64)> {
    let penta = counts.penta().filter(|p| p.pairs() >= MIN_PAIRS)?;
    let llr = stats::sprt(counts, spec).ok()?.llr;
    stats::remaining_pairs(&penta, spec, llr, f64::INFINITY).map(|r| (r.expected, r.low, r.high))
}

/// Time for `pairs` at `rate` pairs per hour.
fn time_for(pairs: f64, rate: f64) -> Duration {
    Duration::from_secs_f64((pairs / rate * 3600.0).clamp(0.0, 1e9))
}

/// "time left ..." words: n/a without a rate; else the time with its range.
pub fn time_left(left: Left, rate: Option<f64>) -> String {
    let Some(rate) = rate.filter(|r| *r > 0.0 && r.is_finite()) else {
        return "time left n/a (no pairs per hour yet)".into();
    };
    match left {
        Left::Fixed(n) => format!("time left {} ({n:.0} pairs)", hm(time_for(n, rate))),
        Left::Sprt { expected, lo, hi, gaps } => {
            let (a, b) = range_secs(lo, hi, rate, gaps);
            format!(
                "time left {} [{}, {}] (SPRT: {expected:.0} pairs expected [{lo:.0}, {hi:.0}])",
                hm(time_for(expected, rate)),
                hm(a),
                hm(b)
            )
        }
        Left::AtMost(n) => format!(
            "time left at most {} ({n:.0} pairs of the schedule; the SPRT's estimate needs {MIN_PAIRS} pairs)",
            hm(time_for(n, rate))
        ),
    }
}

/// `1h05m`, `12m`, `40s`, `3d04h`.
pub fn hm(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", (s + 30) / 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// The status line of a run's share: `share`, what is stored; `now`, its row among the active
/// runs (None when the run is not active).
pub fn share_line(
    share: Share,
    now: Option<&ShareRow>,
    counts: &[PairingCounts],
    sprt: Option<&SprtSpec>,
    p: &Progress,
    active: bool,
) -> String {
    line_of(share, now, pairs_per_hour(p), active.then(|| pairs_left(counts, sprt, p)))
}

/// [`share_line`] from its figures: the rate, and the pairs left of an active run.
fn line_of(share: Share, now: Option<&ShareRow>, rate: Option<f64>, left: Option<Left>) -> String {
    let mut s = format!("  share: priority {}, throughput {}", share.priority, share.throughput);
    if let Some(r) = now {
        let pct = |x: f64| format!("{:.0} %", 100.0 * x);
        s.push_str(&format!(
            ", weight {:.0}, {} of the pairs in flight now ({} leased; target {})",
            r.weight,
            r.now.map_or_else(|| "n/a".to_string(), pct),
            r.leased,
            pct(r.target)
        ));
    }
    s.push_str(&match rate {
        Some(r) => format!(", {r:.0} pairs/h"),
        None => ", pairs/h n/a".into(),
    });
    if let Some(left) = left {
        s.push_str("; ");
        s.push_str(&time_left(left, rate));
    }
    s.push('\n');
    s
}

/// The run's share as a pulled folder records it (summary.json's `fleet.share`): the same
/// figures as [`share_line`], which it carries as its words.
pub fn share_record(
    owner: &str,
    share: Share,
    now: Option<&ShareRow>,
    counts: &[PairingCounts],
    sprt: Option<&SprtSpec>,
    p: &Progress,
    active: bool,
) -> FleetShare {
    let rate = pairs_per_hour(p);
    let left = active.then(|| pairs_left(counts, sprt, p));
    let secs = |pairs: f64| {
        rate.filter(|r| *r > 0.0 && r.is_finite()).map(|r| time_for(pairs, r).as_secs_f64())
    };
    let time_left = left.map(|left| {
        let (kind, pairs, low, high) = match left {
            Left::Fixed(n) => ("fixed", n, None, None),
            Left::Sprt { expected, lo, hi, .. } => ("sprt", expected, Some(lo), Some(hi)),
            Left::AtMost(n) => ("at_most", n, None, None),
        };
        let range = match (left, rate.filter(|r| *r > 0.0 && r.is_finite())) {
            (Left::Sprt { lo, hi, gaps, .. }, Some(r)) => Some(range_secs(lo, hi, r, gaps)),
            _ => None,
        };
        TimeLeft {
            kind: kind.into(),
            pairs,
            pairs_low: low,
            pairs_high: high,
            seconds: secs(pairs),
            seconds_low: range.map(|r| r.0.as_secs_f64()),
            seconds_high: range.map(|r| r.1.as_secs_f64()),
        }
    });
    let words = line_of(share, now, rate, left).trim().to_string();
    FleetShare {
        owner: owner.to_string(),
        priority: share.priority,
        throughput: share.throughput,
        weight: now.map(|r| r.weight),
        share_now: now.and_then(|r| r.now),
        share_target: now.map(|r| r.target),
        pairs_per_hour: rate,
        time_left,
        words,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(total: i64, done: i64, skipped: i64, secs: f64, last_hour: i64) -> Progress {
        Progress {
            pairs_total: total,
            pairs_done: done,
            pairs_leased: 0,
            pairs_skipped: skipped,
            workers_alive: 1,
            pairs_last_hour: last_hour,
            reporting_secs: secs,
        }
    }

    fn counts(penta: [i64; 5]) -> PairingCounts {
        let [ll, ld, dd, wd, ww] = penta;
        PairingCounts {
            pairing: 0,
            active: true,
            dropped: false,
            penta,
            wdl: [2 * ww + wd, ld + 2 * dd + wd, 2 * ll + ld],
        }
    }

    #[test]
    fn the_rate_is_na_without_data_and_recent_once_an_hour_is_reported() {
        assert_eq!(pairs_per_hour(&progress(100, 0, 0, 0.0, 0)), None);
        assert_eq!(pairs_per_hour(&progress(100, 1, 0, 0.0, 1)), None);
        // 10 pairs in 900 s: 9 intervals, 36 pairs/h.
        assert_eq!(pairs_per_hour(&progress(100, 10, 0, 900.0, 10)), Some(36.0));
        // Past an hour: the last hour's pairs; none in it is no rate.
        assert_eq!(pairs_per_hour(&progress(1000, 500, 0, 7200.0, 120)), Some(120.0));
        assert_eq!(pairs_per_hour(&progress(1000, 500, 0, 7200.0, 0)), None);
    }

    #[test]
    fn time_left_is_na_without_a_rate_and_fixed_runs_count_what_is_left() {
        let p = progress(100, 40, 10, 900.0, 40);
        let left = pairs_left(&[], None, &p);
        assert_eq!(left, Left::Fixed(50.0));
        assert_eq!(time_left(left, None), "time left n/a (no pairs per hour yet)");
        assert_eq!(time_left(left, Some(0.0)), "time left n/a (no pairs per hour yet)");
        assert_eq!(time_left(left, Some(100.0)), "time left 30m (50 pairs)");
    }

    #[test]
    fn an_sprt_without_enough_pairs_claims_only_the_schedule() {
        let spec = SprtSpec::parse("elo0=0,elo1=5").unwrap();
        let p = progress(1000, 5, 0, 600.0, 5);
        let left = pairs_left(&[counts([0, 1, 2, 1, 1])], Some(&spec), &p);
        assert_eq!(left, Left::AtMost(995.0));
        assert!(time_left(left, Some(995.0)).starts_with("time left at most 1h00m"), "{left:?}");
    }

    #[test]
    fn an_sprt_expects_a_range_capped_by_the_schedule() {
        let spec = SprtSpec::parse("elo0=0,elo1=5").unwrap();
        // A near-even result after 400 pairs: far from both bounds.
        let c = counts([20, 90, 180, 90, 20]);
        let p = progress(100_000, 400, 0, 3600.0, 400);
        let Left::Sprt { expected, lo, hi, .. } = pairs_left(&[c], Some(&spec), &p) else {
            panic!("an SPRT estimate")
        };
        assert!(lo <= expected && expected <= hi && lo > 0.0, "{lo} {expected} {hi}");
        assert!(hi > lo, "a range, not a point: {lo} {hi}");
        // The same counts with only 50 pairs left in the schedule: never more than that.
        let short = progress(450, 400, 0, 3600.0, 400);
        let Left::Sprt { expected, lo, hi, gaps } = pairs_left(&[c], Some(&spec), &short) else {
            panic!("an SPRT estimate")
        };
        assert!(expected <= 50.0 && lo <= 50.0 && hi <= 50.0, "{lo} {expected} {hi}");
        let words = time_left(Left::Sprt { expected, lo, hi, gaps }, Some(400.0));
        assert!(words.starts_with("time left ") && words.contains("SPRT: "), "{words}");
    }

    #[test]
    fn a_pulled_record_carries_the_status_figures() {
        let spec = SprtSpec::parse("elo0=0,elo1=5").unwrap();
        let c = counts([20, 90, 180, 90, 20]);
        let p = progress(100_000, 400, 0, 3600.0, 400);
        let share = Share { priority: 1, throughput: 200 };
        let now = ShareRow {
            run: 7,
            owner: "alice".into(),
            share,
            weight: 100.0,
            leased: 3,
            now: Some(0.5),
            target: 0.25,
        };
        let r = share_record("alice", share, Some(&now), &[c], Some(&spec), &p, true);
        assert_eq!((r.owner.as_str(), r.priority, r.throughput), ("alice", 1, 200));
        assert_eq!((r.weight, r.share_now, r.share_target), (Some(100.0), Some(0.5), Some(0.25)));
        // An hour of reports: the last hour's 400 pairs.
        assert_eq!(r.pairs_per_hour, Some(400.0));
        let t = r.time_left.expect("an active run has a time left");
        assert_eq!(t.kind, "sprt");
        let (lo, hi) = (t.pairs_low.unwrap(), t.pairs_high.unwrap());
        assert!(lo <= t.pairs && t.pairs <= hi, "{t:?}");
        assert!((t.seconds.unwrap() - t.pairs / 400.0 * 3600.0).abs() < 1e-6, "{t:?}");
        assert!(t.seconds_low.unwrap() <= t.seconds_high.unwrap());
        assert_eq!(r.words, share_line(share, Some(&now), &[c], Some(&spec), &p, true).trim());
        // A finished run: no time left, no share now; without a rate, seconds are n/a.
        let done = share_record("bob", Share::default(), None, &[c], Some(&spec), &p, false);
        assert_eq!((done.time_left, done.weight, done.share_now), (None, None, None));
        let idle = progress(100, 0, 0, 0.0, 0);
        let fresh = share_record("bob", Share::default(), None, &[], None, &idle, true);
        let t = fresh.time_left.unwrap();
        assert_eq!((t.kind.as_str(), t.pairs, t.seconds), ("fixed", 100.0, None));
    }

    #[test]
    fn durations_read_as_hours_and_minutes() {
        assert_eq!(hm(Duration::from_secs(40)), "40s");
        assert_eq!(hm(Duration::from_secs(12 * 60)), "12m");
        assert_eq!(hm(Duration::from_secs(3900)), "1h05m");
        assert_eq!(hm(Duration::from_secs(3 * 86_400 + 4 * 3600)), "3d04h");
    }
}
