//! The clock the runner keeps for each side of a game, charged from writing `go` to reading
//! `bestmove`.

use std::time::Duration;

use crate::plan::time_control::TimeControl;

/// Microseconds of a duration or a millisecond count, saturating at `i64::MAX` (every time value
/// the clock adds up is saturating, so no input can wrap a clock around).
fn us(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

fn ms_to_us(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX).saturating_mul(1000)
}

/// One side's clock. Time is measured by the runner from writing `go` to reading `bestmove`.
#[derive(Clone, Debug)]
pub struct Clock {
    /// `None`: no clock (node or depth limits only).
    tc: Option<TimeControl>,
    /// Remaining time in microseconds (Fischer only); may go negative within the margin.
    remaining_us: i64,
    moves_made: u32,
}

impl Clock {
    pub fn new(tc: Option<TimeControl>) -> Clock {
        let remaining_us = match tc {
            Some(TimeControl::Fischer { base_ms, .. }) => ms_to_us(base_ms),
            _ => 0,
        };
        Clock { tc, remaining_us, moves_made: 0 }
    }

    /// True for a Fischer clock (`go wtime`/`btime` are sent for it).
    pub fn is_fischer(&self) -> bool {
        matches!(self.tc, Some(TimeControl::Fischer { .. }))
    }

    /// Remaining time in whole milliseconds, never negative (what `go wtime` gets).
    pub fn remaining_ms(&self) -> u64 {
        (self.remaining_us.max(0) / 1000) as u64
    }

    /// What the side had before its move, in milliseconds (margin excluded; negative when it
    /// already used part of the margin); `None` without a clock.
    pub fn available_ms(&self) -> Option<f64> {
        match self.tc {
            Some(TimeControl::Fischer { .. }) => Some(self.remaining_us as f64 / 1000.0),
            Some(TimeControl::MoveTime { ms }) => Some(ms as f64),
            _ => None,
        }
    }

    /// Moves to go until the next time control, for `MOVES/BASE` controls.
    pub fn moves_to_go(&self) -> Option<u32> {
        match self.tc {
            Some(TimeControl::Fischer { moves: Some(m), .. }) => Some(m - self.moves_made % m),
            _ => None,
        }
    }

    /// The increment in ms (for `go winc`).
    pub fn inc_ms(&self) -> u64 {
        match self.tc {
            Some(TimeControl::Fischer { inc_ms, .. }) => inc_ms,
            _ => 0,
        }
    }

    /// How long the engine may think before it has lost on time, margin included; `None` for
    /// node or depth limits (then only the stall timeout applies).
    pub fn time_to_flag(&self, margin: Duration) -> Option<Duration> {
        let margin_us = us(margin);
        match self.tc {
            Some(TimeControl::Fischer { .. }) => Some(Duration::from_micros(
                self.remaining_us.saturating_add(margin_us).max(0) as u64,
            )),
            Some(TimeControl::MoveTime { ms }) => {
                Some(Duration::from_millis(ms).saturating_add(margin))
            }
            _ => None,
        }
    }

    /// Charges a move that took `elapsed`. Returns false if the side has lost on time (its clock
    /// fell below minus the margin); otherwise adds the increment and any new period's base.
    pub fn charge(&mut self, elapsed: Duration, margin: Duration) -> bool {
        let elapsed_us = us(elapsed);
        let margin_us = us(margin);
        match self.tc {
            Some(TimeControl::Fischer { moves, base_ms, inc_ms }) => {
                self.remaining_us = self.remaining_us.saturating_sub(elapsed_us);
                if self.remaining_us < margin_us.saturating_neg() {
                    return false;
                }
                self.remaining_us = self.remaining_us.saturating_add(ms_to_us(inc_ms));
                self.moves_made = self.moves_made.wrapping_add(1);
                if let Some(m) = moves
                    && self.moves_made.is_multiple_of(m)
                {
                    self.remaining_us = self.remaining_us.saturating_add(ms_to_us(base_ms));
                }
                true
            }
            Some(TimeControl::MoveTime { ms }) => {
                elapsed_us <= ms_to_us(ms).saturating_add(margin_us)
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fischer_clock_flags_only_beyond_margin_and_adds_increment() {
        let tc = TimeControl::parse_tc("1+0.1").unwrap();
        let margin = Duration::from_millis(50);
        let mut c = Clock::new(Some(tc));
        assert!(c.charge(Duration::from_millis(400), margin));
        assert_eq!(c.remaining_ms(), 700);
        // 740 ms: 40 ms over, within the 50 ms margin.
        assert!(c.charge(Duration::from_millis(740), margin));
        assert_eq!(c.remaining_ms(), 60);
        assert!(!c.charge(Duration::from_millis(111), margin));
        assert_eq!(c.time_to_flag(margin), Some(Duration::ZERO));
    }

    #[test]
    fn repeating_periods_add_base_and_count_moves_to_go() {
        let tc = TimeControl::parse_tc("2/10").unwrap();
        let mut c = Clock::new(Some(tc));
        assert_eq!(c.moves_to_go(), Some(2));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.moves_to_go(), Some(1));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.remaining_ms(), 14_000);
        assert_eq!(c.moves_to_go(), Some(2));
    }

    #[test]
    fn huge_values_saturate_instead_of_wrapping() {
        // Before: a margin of 9223372036854775 ms wrapped negative and every move flagged.
        let huge = Duration::from_millis(9_223_372_036_854_775);
        let mut c = Clock::new(TimeControl::parse_tc("1+0.01").ok());
        assert!(c.charge(Duration::from_millis(1500), huge));
        assert!(c.time_to_flag(huge).unwrap() > Duration::from_secs(1_000_000));
        assert!(!c.charge(Duration::MAX, Duration::ZERO));
        let mut m = Clock::new(Some(TimeControl::MoveTime { ms: u64::MAX }));
        assert!(m.charge(Duration::from_secs(5), Duration::MAX));
        assert!(m.time_to_flag(Duration::MAX).is_some());
        let big = TimeControl::Fischer { moves: Some(1), base_ms: u64::MAX, inc_ms: u64::MAX };
        let mut b = Clock::new(Some(big));
        for _ in 0..3 {
            assert!(b.charge(Duration::from_secs(1), Duration::ZERO));
        }
        assert!(b.remaining_ms() > 0);
    }

    #[test]
    fn movetime_and_limits() {
        let m = Duration::from_millis(10);
        let mut c = Clock::new(Some(TimeControl::MoveTime { ms: 100 }));
        assert!(c.charge(Duration::from_millis(109), m));
        assert!(!c.charge(Duration::from_millis(111), m));
        let mut n = Clock::new(None);
        assert!(n.charge(Duration::from_secs(100), m));
        assert_eq!(n.time_to_flag(m), None);
    }
}
