//! Request budgets of the worker API, one per secret: a token bucket for each bearer secret (a
//! worker process's secret, or the worker key it registers with), so that one runaway or
//! hostile machine spends its own budget and not the server's connections. Keyed by the secret
//! itself, never by a header another client could copy (a worker's id): only the holder of a
//! secret can spend its budget. Past it, the answer is 503 with `Retry-After`, which every
//! worker version retries.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Requests per second a secret may send, sustained: about 60 times what a 64-slot worker
/// sends at 10+0.1 (a claim, a report and a share of a heartbeat per pair).
pub const RATE: f64 = 200.0;
/// Requests a secret may send at once, after a quiet while.
pub const BURST: f64 = 1000.0;
/// Secrets remembered at the most: past it the budgets start afresh (a bound on memory when
/// many unknown secrets are tried; each costs no more than its own refusal).
const KEEP: usize = 100_000;

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Every secret's budget.
#[derive(Debug, Default)]
pub struct Budgets(Mutex<HashMap<String, Bucket>>);

impl Budgets {
    /// Spends one request of `secret`'s budget at `now`; `Err(wait)` when it has none left,
    /// with how long until it has one.
    pub fn take(&self, secret: &str, now: Instant) -> Result<(), Duration> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= KEEP && !map.contains_key(secret) {
            map.clear();
        }
        let b = map.entry(secret.to_string()).or_insert(Bucket { tokens: BURST, at: now });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * RATE).min(BURST);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / RATE))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_spends_its_own_budget_and_it_refills_with_time() {
        let budgets = Budgets::default();
        let t0 = Instant::now();
        for _ in 0..BURST as usize {
            assert!(budgets.take("a", t0).is_ok());
        }
        let wait = budgets.take("a", t0).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs_f64(1.0 / RATE), "{wait:?}");
        // Another secret is not touched by the first one's spending.
        assert!(budgets.take("b", t0).is_ok());
        // A second later, RATE more requests (and no more).
        let t1 = t0 + Duration::from_secs(1);
        for _ in 0..RATE as usize {
            assert!(budgets.take("a", t1).is_ok());
        }
        assert!(budgets.take("a", t1).is_err());
        // A long quiet while refills to BURST, not beyond.
        let t2 = t1 + Duration::from_secs(3600);
        for _ in 0..BURST as usize {
            assert!(budgets.take("a", t2).is_ok());
        }
        assert!(budgets.take("a", t2).is_err());
    }
}
