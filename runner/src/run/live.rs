//! Outputs written while a run goes: after the first finished game, then at most every
//! [`LIVE_EVERY`], each through a temporary file and a rename (a reader never sees half a file).
//! The run's end writes them once more. A failure to write is reported once and never stops the
//! run.

use std::time::{Duration, Instant};

use crate::store::GameRecord;

/// Shortest time between two live writes.
pub const LIVE_EVERY: Duration = Duration::from_secs(2);

/// Writes the outputs from the games stored so far (in store order).
pub type LiveWrite<'a> = &'a mut (dyn FnMut(&[GameRecord]) -> anyhow::Result<()> + Send);

/// A live writer and its rhythm.
pub struct LiveOutputs<'a> {
    pub write: LiveWrite<'a>,
    last: Option<Instant>,
}

impl<'a> LiveOutputs<'a> {
    pub fn new(write: LiveWrite<'a>) -> LiveOutputs<'a> {
        LiveOutputs { write, last: None }
    }

    /// Whether to write now: at the first call, then once [`LIVE_EVERY`] has passed.
    pub fn due(&mut self) -> bool {
        match self.last {
            Some(t) if t.elapsed() < LIVE_EVERY => false,
            _ => {
                self.last = Some(Instant::now());
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_game_is_always_written() {
        let mut w = |_: &[GameRecord]| Ok(());
        let mut live = LiveOutputs::new(&mut w);
        assert!(live.due(), "the first call writes");
    }
}
