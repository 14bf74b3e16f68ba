//! Time management: turns `go` limits into a soft limit (do not start a new
//! iteration after it) and a hard limit (abort the search), with a safety
//! margin for process and pipe latency.

use std::time::{Duration, Instant};

/// Search limits from a `go` command.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    pub movetime: Option<u64>,
    /// Our remaining time and increment (ms), already chosen for the side to move.
    pub time: Option<u64>,
    pub inc: u64,
    pub movestogo: Option<u64>,
    pub infinite: bool,
}

#[derive(Clone, Debug)]
pub struct TimeManager {
    start: Instant,
    soft: Option<Duration>,
    hard: Option<Duration>,
}

impl TimeManager {
    pub fn new(limits: &Limits, overhead_ms: u64) -> Self {
        let start = Instant::now();
        if limits.infinite {
            return Self { start, soft: None, hard: None };
        }
        if let Some(mt) = limits.movetime {
            let t = mt.saturating_sub(overhead_ms).max(1);
            return Self {
                start,
                soft: Some(Duration::from_millis(t)),
                hard: Some(Duration::from_millis(t)),
            };
        }
        if let Some(time) = limits.time {
            // Keep the overhead in reserve, spend a small share of the rest plus
            // half the increment: at a fast control the clock settles near
            // 35 increments above the overhead instead of running dry.
            let usable = time.saturating_sub(overhead_ms).max(1);
            let mtg = limits.movestogo.unwrap_or(30).clamp(1, 30);
            // The increment counts fully only while the clock holds 20 of them.
            let inc_part = if limits.inc == 0 { 0 } else { (limits.inc / 2).min(usable / 40) };
            let base = usable / (mtg + 5) + inc_part;
            let soft = base.min(usable / 6).max(1);
            let hard = (soft * 2).min(usable / 6).max(soft);
            return Self {
                start,
                soft: Some(Duration::from_millis((soft / 2).max(1))),
                hard: Some(Duration::from_millis(hard)),
            };
        }
        Self { start, soft: None, hard: None }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Past the hard limit: abort now.
    pub fn hard_exceeded(&self) -> bool {
        self.hard.is_some_and(|h| self.start.elapsed() >= h)
    }

    /// Past the soft limit: do not start another iteration.
    pub fn soft_exceeded(&self) -> bool {
        self.soft.is_some_and(|s| self.start.elapsed() >= s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_game_budget_is_small_and_safe() {
        let l = Limits { time: Some(1000), inc: 10, ..Default::default() };
        let tm = TimeManager::new(&l, 30);
        let hard = tm.hard.unwrap().as_millis();
        let soft = tm.soft.unwrap().as_millis();
        assert!(hard <= 250 && hard >= soft, "hard {hard} soft {soft}");
        assert!(soft > 0);
    }

    #[test]
    fn nearly_flagged_still_searches_a_little() {
        let l = Limits { time: Some(5), ..Default::default() };
        let tm = TimeManager::new(&l, 30);
        assert_eq!(tm.hard.unwrap().as_millis(), 1);
    }

    #[test]
    fn movetime_and_infinite() {
        let l = Limits { movetime: Some(500), ..Default::default() };
        assert_eq!(TimeManager::new(&l, 20).hard.unwrap().as_millis(), 480);
        let inf = Limits { infinite: true, time: Some(10), ..Default::default() };
        assert!(TimeManager::new(&inf, 20).hard.is_none());
    }
}
