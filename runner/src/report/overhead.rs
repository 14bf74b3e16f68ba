//! The runner's own cost: its CPU time against the engines', per game and per move, and the
//! turnaround from one engine's `bestmove` to the opponent's `go`.

use std::time::Duration;

use crate::play::uci::own_cpu_time;
use crate::store::GameRecord;
/// Figures of one run of the runner process (summary.json `runner_overhead`).
pub use crate::store::formats::OverheadReport;

/// Accumulates [`OverheadReport`] figures as games finish.
#[derive(Clone, Debug)]
pub struct OverheadMeter {
    cpu_at_start: Option<Duration>,
    games: u64,
    moves: u64,
    turn_sum: f64,
    turn_n: u64,
    turn_max: Option<u64>,
    turn_hist: Histogram,
    over_sum: f64,
    over_n: u64,
}

impl Default for OverheadMeter {
    fn default() -> Self {
        OverheadMeter::new()
    }
}

impl OverheadMeter {
    pub fn new() -> OverheadMeter {
        OverheadMeter {
            cpu_at_start: own_cpu_time(),
            games: 0,
            moves: 0,
            turn_sum: 0.0,
            turn_n: 0,
            turn_max: None,
            turn_hist: Histogram::default(),
            over_sum: 0.0,
            over_n: 0,
        }
    }

    /// Adds one game's per-move turnarounds (microseconds) to the percentile counts.
    pub fn add_turnarounds(&mut self, us: impl IntoIterator<Item = u64>) {
        for t in us {
            self.turn_hist.add(t);
        }
    }

    pub fn add(&mut self, rec: &GameRecord) {
        self.games += 1;
        let engine_moves = rec.times_ms.len() as u64;
        self.moves += engine_moves;
        if let Some(m) = rec.latency.turnaround_us_mean {
            let n = engine_moves.saturating_sub(1);
            self.turn_sum += m * n as f64;
            self.turn_n += n;
        }
        if let Some(mx) = rec.latency.turnaround_us_max {
            self.turn_max = Some(self.turn_max.map_or(mx, |c| c.max(mx)));
        }
        for (t, e) in rec.times_ms.iter().zip(&rec.engine_times_ms) {
            if let Some(e) = e {
                self.over_sum += t - *e as f64;
                self.over_n += 1;
            }
        }
    }

    pub fn finish(&self, engines_cpu: Option<Duration>) -> OverheadReport {
        let runner = match (own_cpu_time(), self.cpu_at_start) {
            (Some(now), Some(start)) => Some(now.saturating_sub(start).as_secs_f64()),
            _ => None,
        };
        let engines = engines_cpu.map(|d| d.as_secs_f64());
        let per = |total: Option<f64>, n: u64, scale: f64| {
            total.filter(|_| n > 0).map(|t| t * scale / n as f64)
        };
        OverheadReport {
            games: self.games,
            moves: self.moves,
            runner_cpu_s: runner,
            engines_cpu_s: engines,
            runner_cpu_share: match (runner, engines) {
                (Some(r), Some(e)) if e > 0.0 => Some(r / e),
                _ => None,
            },
            runner_cpu_per_game_ms: per(runner, self.games, 1e3),
            runner_cpu_per_move_us: per(runner, self.moves, 1e6),
            turnaround_us_mean: (self.turn_n > 0).then(|| self.turn_sum / self.turn_n as f64),
            turnaround_us_p99: self.turn_hist.quantile(0.99),
            turnaround_us_max: self.turn_max,
            measured_minus_reported_ms_mean: (self.over_n > 0)
                .then(|| self.over_sum / self.over_n as f64),
        }
    }
}

/// The overhead figures of merged shards: the latency figures come from the games themselves;
/// CPU figures belong to the shards' own runner processes (kept per source), so they are left
/// out.
pub fn merged_overhead(records: &[GameRecord]) -> OverheadReport {
    let mut meter = OverheadMeter::new();
    for r in records {
        meter.add(r);
    }
    let mut o = meter.finish(None);
    o.runner_cpu_s = None;
    o.runner_cpu_share = None;
    o.runner_cpu_per_game_ms = None;
    o.runner_cpu_per_move_us = None;
    o
}

impl OverheadReport {
    /// One line for the final report.
    pub fn line(&self) -> String {
        let f = |v: Option<f64>, d: usize| v.map_or("n/a".to_string(), |x| format!("{x:.d$}"));
        format!(
            "runner CPU {} s vs engines {} s ({}%), {} ms/game, {} us/move; bestmove->go turnaround mean {} us, p99 {} us, max {} us",
            f(self.runner_cpu_s, 3),
            f(self.engines_cpu_s, 3),
            f(self.runner_cpu_share.map(|s| s * 100.0), 2),
            f(self.runner_cpu_per_game_ms, 2),
            f(self.runner_cpu_per_move_us, 1),
            f(self.turnaround_us_mean, 0),
            self.turnaround_us_p99.map_or("n/a".into(), |m| m.to_string()),
            self.turnaround_us_max.map_or("n/a".into(), |m| m.to_string()),
        )
    }
}

/// Counts of microsecond values: exact below 1024 us, then 64 buckets per power of two (each
/// within 1/64 of its value), so quantiles of any number of moves fit in 36 KiB.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    max: Option<u64>,
}

const EXACT: u64 = 1024;
const SUB: u64 = 64;

fn bucket(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let e = 63 - u64::from(v.leading_zeros()); // 10..=63
    let mantissa = (v >> (e - 6)) & (SUB - 1);
    (EXACT + (e - 10) * SUB + mantissa) as usize
}

/// Largest value that falls in bucket `b`.
fn upper(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        return b;
    }
    let k = b - EXACT;
    let e = k / SUB + 10;
    let m = k % SUB;
    let lo = (SUB + m) << (e - 6);
    lo.saturating_add((1u64 << (e - 6)) - 1)
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; bucket(u64::MAX) + 1], n: 0, max: None }
    }
}

impl Histogram {
    pub fn add(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
    }

    pub fn max(&self) -> Option<u64> {
        self.max
    }

    /// The `q` quantile (0 < q <= 1): the smallest bucket bound holding at least q of the
    /// values, never above the maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let max = self.max?;
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(upper(b).min(max));
            }
        }
        Some(max)
    }
}

#[cfg(test)]
mod histogram_tests {
    use super::*;

    #[test]
    fn quantiles_are_exact_below_a_millisecond_and_close_above() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.99), None);
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.99), Some(99));
        assert_eq!(h.quantile(1.0), Some(100));
        let mut h = Histogram::default();
        for v in [5_000u64, 156_600, u64::MAX] {
            h.add(v);
        }
        assert_eq!(h.quantile(1.0), Some(u64::MAX));
        let q = h.quantile(0.5).unwrap();
        assert!((156_600..=156_600 + 156_600 / 64).contains(&q), "{q}");
        for v in [0u64, 1023, 1024, 1025, 4095, 1 << 40, u64::MAX] {
            assert!(upper(bucket(v)) >= v, "{v}");
            assert!(bucket(v) < Histogram::default().counts.len());
        }
    }
}
