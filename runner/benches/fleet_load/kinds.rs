//! Every request of `--via http` by kind: each attempt's latency (a failed attempt's too: a
//! request that was answered 503 after waiting is a request that took that long), how many
//! failed, the first failure's text; printed as p50 / p99 / max per kind.

use std::time::Duration;

use super::pct;

/// What a worker asks the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `GET /version`, once at the start, as `runner worker --server` does.
    Version,
    Register,
    /// A claim that returned a pair.
    Claim,
    /// A claim that returned nothing (the worker then polls as an idle worker).
    ClaimEmpty,
    Report,
    /// A heartbeat of the lease held (every 2 s while a pair is in flight).
    Heartbeat,
    /// `POST /outstanding` of an idle worker (every 0.2-2 s while it has nothing).
    IdlePoll,
    /// The heartbeat of an idle worker, holding no lease (every lease / 4).
    IdleBeat,
    Settle,
    /// `POST /stopped` at the end.
    Stopped,
}

pub const KINDS: [Kind; 10] = [
    Kind::Version,
    Kind::Register,
    Kind::Claim,
    Kind::ClaimEmpty,
    Kind::Report,
    Kind::Heartbeat,
    Kind::IdlePoll,
    Kind::IdleBeat,
    Kind::Settle,
    Kind::Stopped,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Version => "version",
            Kind::Register => "register",
            Kind::Claim => "claim",
            Kind::ClaimEmpty => "claim (nothing)",
            Kind::Report => "report",
            Kind::Heartbeat => "heartbeat",
            Kind::IdlePoll => "idle poll",
            Kind::IdleBeat => "idle heartbeat",
            Kind::Settle => "settle",
            Kind::Stopped => "stopped",
        }
    }

    fn index(self) -> usize {
        KINDS.iter().position(|k| *k == self).expect("every kind is in KINDS")
    }
}

/// The requests of one worker, or of all of them merged.
#[derive(Default)]
pub struct Lat {
    took: [Vec<Duration>; KINDS.len()],
    failed: [u64; KINDS.len()],
    first_failure: [Option<String>; KINDS.len()],
}

impl Lat {
    /// One attempt of `kind` that took `d`; `failure` when it failed (its text).
    pub fn push(&mut self, kind: Kind, d: Duration, failure: Option<String>) {
        let i = kind.index();
        self.took[i].push(d);
        if let Some(f) = failure {
            self.failed[i] += 1;
            self.first_failure[i].get_or_insert(f);
        }
    }

    pub fn merge(&mut self, other: Lat) {
        for (i, v) in other.took.into_iter().enumerate() {
            self.took[i].extend(v);
            self.failed[i] += other.failed[i];
            if self.first_failure[i].is_none() {
                self.first_failure[i] = other.first_failure[i].clone();
            }
        }
    }

    pub fn count(&self, kind: Kind) -> usize {
        self.took[kind.index()].len()
    }

    /// Every attempt of `kind`.
    pub fn took(&self, kind: Kind) -> &[Duration] {
        &self.took[kind.index()]
    }

    pub fn failed(&self, kind: Kind) -> u64 {
        self.failed[kind.index()]
    }

    pub fn total_failed(&self) -> u64 {
        self.failed.iter().sum()
    }

    pub fn mean_ms(&self, kind: Kind) -> f64 {
        super::mean_ms(&self.took[kind.index()])
    }

    /// p50, p99 and max of `kind`, in ms (NaN when none).
    pub fn quantiles(&mut self, kind: Kind) -> (f64, f64, f64) {
        let v = &mut self.took[kind.index()];
        (pct(v, 0.5), pct(v, 0.99), pct(v, 1.0))
    }

    /// The table of every kind that was asked: count, failed, p50 / p99 / max; then the first
    /// failure of each kind that had one.
    pub fn print(&mut self, title: &str) {
        println!("\n{title}\n");
        println!("| request | count | failed | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|---:|---:|");
        for k in KINDS {
            if self.count(k) == 0 {
                continue;
            }
            let (p50, p99, max) = self.quantiles(k);
            println!(
                "| {} | {} | {} | {p50:.1} | {p99:.1} | {max:.1} |",
                k.name(),
                self.count(k),
                self.failed(k)
            );
        }
        for k in KINDS {
            if let Some(f) = &self.first_failure[k.index()] {
                println!("first failed {}: {f}", k.name());
            }
        }
    }
}
