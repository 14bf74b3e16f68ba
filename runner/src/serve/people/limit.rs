//! Login attempts, limited per client address: at most [`ATTEMPTS`] in a window of
//! [`WINDOW`] from an address's first attempt; then 429 until the window ends. A successful
//! login does not reset the count (an attacker who knows one password learns nothing faster).
//! The table holds at most [`ADDRESSES`] addresses; when full, ended windows are dropped first,
//! and a new address is refused while it stays full.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const ATTEMPTS: u32 = 10;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
pub const ADDRESSES: usize = 10_000;

#[derive(Debug, Default)]
pub struct LoginLimiter(Mutex<HashMap<IpAddr, (Instant, u32)>>);

impl LoginLimiter {
    /// Counts an attempt from `addr` at `now`; Err(seconds to wait) when over the limit.
    pub fn attempt(&self, addr: IpAddr, now: Instant) -> Result<(), u64> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !map.contains_key(&addr) && map.len() >= ADDRESSES {
            map.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
            if map.len() >= ADDRESSES {
                return Err(WINDOW.as_secs());
            }
        }
        let entry = map.entry(addr).or_insert((now, 0));
        if now.duration_since(entry.0) >= WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= ATTEMPTS {
            let left = WINDOW.saturating_sub(now.duration_since(entry.0));
            return Err(left.as_secs().max(1));
        }
        entry.1 += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_limited_per_address_and_window() {
        let l = LoginLimiter::default();
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let t0 = Instant::now();
        for _ in 0..ATTEMPTS {
            assert_eq!(l.attempt(a, t0), Ok(()));
        }
        assert!(l.attempt(a, t0).is_err());
        assert!(l.attempt(a, t0 + WINDOW - Duration::from_secs(1)).is_err());
        // Another address has its own count.
        assert_eq!(l.attempt(b, t0), Ok(()));
        // The window ends: the address starts again.
        assert_eq!(l.attempt(a, t0 + WINDOW), Ok(()));
    }

    #[test]
    fn a_full_table_drops_ended_windows_first() {
        let l = LoginLimiter::default();
        let t0 = Instant::now();
        for i in 0..ADDRESSES as u32 {
            assert_eq!(l.attempt(IpAddr::from(i.to_be_bytes()), t0), Ok(()));
        }
        let new = IpAddr::from([255, 255, 255, 255]);
        assert!(l.attempt(new, t0).is_err(), "full, no window ended");
        assert_eq!(l.attempt(new, t0 + WINDOW), Ok(()), "ended windows dropped");
    }
}
