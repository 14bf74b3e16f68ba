//! The clock the runner keeps for each side of a game, charged from writing `go` to reading
//! `bestmove`.

use std::time::Duration;

use crate::plan::time_control::TimeControl;

/// One side's clock. Time is measured by the runner from writing `go` to reading `bestmove`.
#[derive(Clone, Debug)]
pub struct Clock {
    tc: TimeControl,
    /// Remaining time in microseconds (Fischer only); may go negative within the margin.
    remaining_us: i64,
    moves_made: u32,
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        let remaining_us = match tc {
            TimeControl::Fischer { base_ms, .. } => base_ms as i64 * 1000,
            _ => 0,
        };
        Clock { tc, remaining_us, moves_made: 0 }
    }

    /// Remaining time in whole milliseconds, never negative (what `go wtime` gets).
    pub fn remaining_ms(&self) -> u64 {
        (self.remaining_us.max(0) / 1000) as u64
    }

    /// Moves to go until the next time control, for `MOVES/BASE` controls.
    pub fn moves_to_go(&self) -> Option<u32> {
        match self.tc {
            TimeControl::Fischer { moves: Some(m), .. } => Some(m - self.moves_made % m),
            _ => None,
        }
    }

    /// The increment in ms (for `go winc`).
    pub fn inc_ms(&self) -> u64 {
        match self.tc {
            TimeControl::Fischer { inc_ms, .. } => inc_ms,
            _ => 0,
        }
    }

    /// How long the engine may think before it has lost on time, margin included; `None` for
    /// node or depth limits (then only the stall timeout applies).
    pub fn time_to_flag(&self, margin: Duration) -> Option<Duration> {
        let margin_us = margin.as_micros() as i64;
        match self.tc {
            TimeControl::Fischer { .. } => {
                Some(Duration::from_micros((self.remaining_us + margin_us).max(0) as u64))
            }
            TimeControl::MoveTime { ms } => Some(Duration::from_millis(ms) + margin),
            _ => None,
        }
    }

    /// Charges a move that took `elapsed`. Returns false if the side has lost on time (its clock
    /// fell below minus the margin); otherwise adds the increment and any new period's base.
    pub fn charge(&mut self, elapsed: Duration, margin: Duration) -> bool {
        let elapsed_us = elapsed.as_micros() as i64;
        let margin_us = margin.as_micros() as i64;
        match self.tc {
            TimeControl::Fischer { moves, base_ms, inc_ms } => {
                self.remaining_us -= elapsed_us;
                if self.remaining_us < -margin_us {
                    return false;
                }
                self.remaining_us += inc_ms as i64 * 1000;
                self.moves_made += 1;
                if let Some(m) = moves
                    && self.moves_made.is_multiple_of(m)
                {
                    self.remaining_us += base_ms as i64 * 1000;
                }
                true
            }
            TimeControl::MoveTime { ms } => elapsed_us <= (ms as i64 * 1000) + margin_us,
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
        let mut c = Clock::new(tc);
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
        let mut c = Clock::new(tc);
        assert_eq!(c.moves_to_go(), Some(2));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.moves_to_go(), Some(1));
        assert!(c.charge(Duration::from_secs(3), Duration::ZERO));
        assert_eq!(c.remaining_ms(), 14_000);
        assert_eq!(c.moves_to_go(), Some(2));
    }

    #[test]
    fn movetime_and_limits() {
        let m = Duration::from_millis(10);
        let mut c = Clock::new(TimeControl::MoveTime { ms: 100 });
        assert!(c.charge(Duration::from_millis(109), m));
        assert!(!c.charge(Duration::from_millis(111), m));
        let mut n = Clock::new(TimeControl::Nodes { nodes: 1000 });
        assert!(n.charge(Duration::from_secs(100), m));
        assert_eq!(n.time_to_flag(m), None);
    }
}
