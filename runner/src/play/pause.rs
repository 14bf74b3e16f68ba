//! Noticing that the runner itself was stopped (SIGSTOP, Ctrl-Z): a ticker task looks at the
//! monotonic clock every [`TICK`]; a gap between two looks longer than [`PAUSE_GAP`] means the
//! whole process was frozen, and the shared pause epoch goes up. A game that spanned a pause is
//! not scored: the engines' clocks were charged for time in which nobody could move.
//!
//! A system suspend does not advance the monotonic clock on Linux, so it is not seen here (and
//! charges no clock either).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// How often the ticker looks at the clock.
pub const TICK: Duration = Duration::from_millis(100);
/// A gap between looks longer than this (10 ticks) is a pause. A loaded machine makes a tick
/// late by a few hundred milliseconds at most; a frozen process is gone for much longer.
pub const PAUSE_GAP: Duration = Duration::from_secs(1);

/// The pause epoch and when the clock was last looked at.
pub struct PauseWatch {
    start: Instant,
    /// Milliseconds from `start` at the last look.
    last_ms: AtomicU64,
    epoch: AtomicU64,
}

impl Default for PauseWatch {
    fn default() -> Self {
        PauseWatch::new()
    }
}

impl PauseWatch {
    pub fn new() -> PauseWatch {
        PauseWatch { start: Instant::now(), last_ms: AtomicU64::new(0), epoch: AtomicU64::new(0) }
    }

    /// Looks at the clock now and returns the pause epoch, raised first if the time since the
    /// last look is over [`PAUSE_GAP`]. Safe to call from any task: one gap raises it once.
    pub fn observe(&self) -> u64 {
        let now = self.start.elapsed().as_millis() as u64;
        let last = self.last_ms.swap(now, Ordering::SeqCst);
        if now.saturating_sub(last) > PAUSE_GAP.as_millis() as u64 {
            self.epoch.fetch_add(1, Ordering::SeqCst);
        }
        self.epoch.load(Ordering::SeqCst)
    }

    /// The ticker: looks at the clock every [`TICK`] until the task is aborted.
    pub fn spawn_ticker(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let watch = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                watch.observe();
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_long_gap_raises_the_epoch_once() {
        let w = PauseWatch::new();
        let before = w.observe();
        std::thread::sleep(PAUSE_GAP + Duration::from_millis(100));
        assert_eq!(w.observe(), before + 1);
        assert_eq!(w.observe(), before + 1);
    }
}
