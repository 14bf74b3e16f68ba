//! Time controls and the clocks the runner keeps for each side.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long engines may think.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum TimeControl {
    /// `[MOVES/]BASE[+INC]` in seconds: a base time, an increment added after each move, and
    /// optionally a number of moves after which the base is added again (repeating).
    Fischer { moves: Option<u32>, base_ms: u64, inc_ms: u64 },
    /// A fixed time per move (`go movetime`).
    MoveTime { ms: u64 },
    /// A node limit per move (`go nodes`).
    Nodes { nodes: u64 },
    /// A depth limit per move (`go depth`).
    Depth { depth: u32 },
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad time control {input:?}: {reason} (examples: 10+0.1, 40/60+0.6, 60)")]
pub struct TcError {
    input: String,
    reason: &'static str,
}

fn seconds_to_ms(s: &str, input: &str) -> Result<u64, TcError> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| TcError { input: input.into(), reason: "not a number of seconds" })?;
    if !v.is_finite() || !(0.0..=1.0e7).contains(&v) {
        return Err(TcError { input: input.into(), reason: "seconds out of range" });
    }
    Ok((v * 1000.0).round() as u64)
}

impl TimeControl {
    /// Parses `BASE+INC`, `MOVES/BASE+INC`, `BASE` (seconds).
    pub fn parse_tc(input: &str) -> Result<TimeControl, TcError> {
        let (moves, rest) = match input.split_once('/') {
            Some((m, rest)) => {
                let m: u32 = m
                    .trim()
                    .parse()
                    .map_err(|_| TcError { input: input.into(), reason: "bad move count" })?;
                if m == 0 {
                    return Err(TcError { input: input.into(), reason: "move count must be > 0" });
                }
                (Some(m), rest)
            }
            None => (None, input),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (seconds_to_ms(b, input)?, seconds_to_ms(i, input)?),
            None => (seconds_to_ms(rest, input)?, 0),
        };
        if base == 0 && inc == 0 {
            return Err(TcError { input: input.into(), reason: "no time at all" });
        }
        if base == 0 && moves.is_some() {
            return Err(TcError { input: input.into(), reason: "a moves/ period needs a base" });
        }
        Ok(TimeControl::Fischer { moves, base_ms: base, inc_ms: inc })
    }

    /// Parses a fixed time per move in seconds (`--st 0.1`).
    pub fn parse_st(input: &str) -> Result<TimeControl, TcError> {
        let ms = seconds_to_ms(input, input)?;
        if ms == 0 {
            return Err(TcError { input: input.into(), reason: "time per move must be > 0" });
        }
        Ok(TimeControl::MoveTime { ms })
    }

    /// The PGN `TimeControl` tag value.
    pub fn pgn_tag(&self) -> String {
        match *self {
            TimeControl::Fischer { moves, base_ms, inc_ms } => {
                let mut s = String::new();
                if let Some(m) = moves {
                    s.push_str(&format!("{m}/"));
                }
                s.push_str(&fmt_secs(base_ms));
                if inc_ms > 0 {
                    s.push('+');
                    s.push_str(&fmt_secs(inc_ms));
                }
                s
            }
            TimeControl::MoveTime { ms } => format!("1/{}", fmt_secs(ms)),
            TimeControl::Nodes { .. } | TimeControl::Depth { .. } => "-".to_string(),
        }
    }

    /// True when the runner must keep a real clock (the engines can lose on time).
    pub fn is_timed(&self) -> bool {
        matches!(self, TimeControl::Fischer { .. } | TimeControl::MoveTime { .. })
    }
}

fn fmt_secs(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}", ms / 1000)
    } else {
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        s.trim_end_matches('0').to_string()
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeControl::Fischer { .. } => write!(f, "tc={}", self.pgn_tag()),
            TimeControl::MoveTime { ms } => write!(f, "st={}", fmt_secs(ms)),
            TimeControl::Nodes { nodes } => write!(f, "nodes={nodes}"),
            TimeControl::Depth { depth } => write!(f, "depth={depth}"),
        }
    }
}

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
    fn parses_common_forms() {
        assert_eq!(
            TimeControl::parse_tc("10+0.1").unwrap(),
            TimeControl::Fischer { moves: None, base_ms: 10_000, inc_ms: 100 }
        );
        assert_eq!(
            TimeControl::parse_tc("40/60+0.6").unwrap(),
            TimeControl::Fischer { moves: Some(40), base_ms: 60_000, inc_ms: 600 }
        );
        assert_eq!(
            TimeControl::parse_tc("60").unwrap(),
            TimeControl::Fischer { moves: None, base_ms: 60_000, inc_ms: 0 }
        );
        assert_eq!(TimeControl::parse_st("0.1").unwrap(), TimeControl::MoveTime { ms: 100 });
        for bad in ["", "abc", "10+", "0+0", "0/10", "-1+0.1", "x/10+1", "NaN", "1e30"] {
            assert!(TimeControl::parse_tc(bad).is_err(), "{bad}");
        }
        assert!(TimeControl::parse_st("0").is_err());
    }

    #[test]
    fn pgn_tags() {
        assert_eq!(TimeControl::parse_tc("10+0.1").unwrap().pgn_tag(), "10+0.1");
        assert_eq!(TimeControl::parse_tc("40/60+0.6").unwrap().pgn_tag(), "40/60+0.6");
        assert_eq!(TimeControl::parse_tc("1+0.01").unwrap().pgn_tag(), "1+0.01");
        assert_eq!(TimeControl::Nodes { nodes: 5 }.pgn_tag(), "-");
        assert_eq!(TimeControl::MoveTime { ms: 250 }.pgn_tag(), "1/0.25");
    }

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
