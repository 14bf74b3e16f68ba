//! Per-engine limits (`--engine ...,tc=,st=,nodes=,depth=,timemargin=` and the same keys in
//! `--each` and configs/engines.toml) and what one side of a game may use once the run's own
//! limits are applied: a clock (or none), node and depth caps, and the time margin.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::plan::time_control::{
    DEFAULT_TIMEMARGIN_MS, MAX_UCI_COUNT, TimeControl, check_timemargin,
};

/// The largest `nodes=` (as `--nodes`).
pub const MAX_NODES: u64 = 1_000_000_000_000;

/// An engine's own limit keys. When it gives any of `tc`/`st`, `nodes`, `depth`, those replace
/// the run's limits (`--tc`, `--st`, `--nodes`, `--depth`, a gauntlet pairing's `--tc`) for that
/// engine as a whole; `timemargin` replaces `--timemargin` alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineLimits {
    /// `tc=` (a Fischer clock) or `st=` (a time per move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TimeControl>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timemargin_ms: Option<u64>,
}

impl EngineLimits {
    pub fn is_empty(&self) -> bool {
        *self == EngineLimits::default()
    }

    /// True when the engine gives a limit of its own (a clock, nodes or depth).
    pub fn has_limit(&self) -> bool {
        self.clock.is_some() || self.nodes.is_some() || self.depth.is_some()
    }

    /// Sets one key (`tc`, `st`, `nodes`, `depth`, `timemargin`) from its text; `Ok(false)` when
    /// `key` is not a limit key. A second clock (`tc` and `st`) is refused.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        match key {
            "tc" | "st" => {
                let tc = if key == "tc" {
                    TimeControl::parse_tc(value)
                } else {
                    TimeControl::parse_st(value)
                }
                .map_err(|e| e.to_string())?;
                if self.clock.is_some_and(|c| c != tc) {
                    return Err("give one of tc= and st=".into());
                }
                self.clock = Some(tc);
            }
            "nodes" => {
                let n: u64 = value.parse().map_err(|_| format!("nodes={value}: not a number"))?;
                if !(1..=MAX_NODES).contains(&n) {
                    return Err(format!("nodes={n}: expected 1 to {MAX_NODES}"));
                }
                self.nodes = Some(n);
            }
            "depth" => {
                let d: u32 = value.parse().map_err(|_| format!("depth={value}: not a number"))?;
                if !(1..=MAX_UCI_COUNT).contains(&d) {
                    return Err(format!(
                        "depth={d}: expected 1 to {MAX_UCI_COUNT} (`go depth` is 8 bits in \
                         common UCI parsers)"
                    ));
                }
                self.depth = Some(d);
            }
            "timemargin" => {
                let ms: u64 =
                    value.parse().map_err(|_| format!("timemargin={value}: not milliseconds"))?;
                self.timemargin_ms = Some(check_timemargin(ms).map_err(|e| e.to_string())?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The keys of an engine spec that give these limits (`tc=10+0.1`, `nodes=3000`, ...), as
    /// `--engine` reads them back.
    pub fn spec_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        if let Some(c) = self.clock {
            keys.push(c.to_string());
        }
        if let Some(n) = self.nodes {
            keys.push(format!("nodes={n}"));
        }
        if let Some(d) = self.depth {
            keys.push(format!("depth={d}"));
        }
        if let Some(ms) = self.timemargin_ms {
            keys.push(format!("timemargin={ms}"));
        }
        keys
    }

    /// Fills the keys this engine does not give from `each` (`--each`).
    pub fn add_defaults(&mut self, each: &EngineLimits) {
        self.clock = self.clock.or(each.clock);
        self.nodes = self.nodes.or(each.nodes);
        self.depth = self.depth.or(each.depth);
        self.timemargin_ms = self.timemargin_ms.or(each.timemargin_ms);
    }
}

/// What one side of a game may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideLimit {
    /// A Fischer clock or a time per move; none when only nodes or depth limit the side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TimeControl>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    pub timemargin_ms: u64,
}

impl SideLimit {
    /// A run's limits: `tc` (a clock, or `go nodes`/`go depth` alone) with the node and depth
    /// caps given beside it (`--tc 10+0.1 --nodes 50000`).
    pub fn of_run(tc: TimeControl, nodes: Option<u64>, depth: Option<u32>, margin: u64) -> Self {
        let mut s = SideLimit { clock: None, nodes, depth, timemargin_ms: margin };
        match tc {
            TimeControl::Fischer { .. } | TimeControl::MoveTime { .. } => s.clock = Some(tc),
            TimeControl::Nodes { nodes } => s.nodes = Some(nodes),
            TimeControl::Depth { depth } => s.depth = Some(depth),
        }
        s
    }

    /// The side's limits: the engine's own when it gives any, else the run's; its own
    /// `timemargin` else the run's.
    pub fn resolve(run: SideLimit, own: &EngineLimits) -> SideLimit {
        let mut s = if own.has_limit() {
            SideLimit { clock: own.clock, nodes: own.nodes, depth: own.depth, ..run }
        } else {
            run
        };
        s.timemargin_ms = own.timemargin_ms.unwrap_or(run.timemargin_ms);
        s
    }

    /// True when the runner keeps a clock for this side (it can lose on time).
    pub fn is_timed(&self) -> bool {
        self.clock.is_some()
    }

    /// The clock as a PGN `TimeControl` value (cutechess-cli's form: `40/60+0.6`, `10+0.1`,
    /// `1/0.25` for a time per move); `-` without a clock.
    pub fn pgn_tag(&self) -> String {
        self.clock.map_or_else(|| "-".to_string(), |c| c.pgn_tag())
    }

    /// The limits in words for a display (`tc=10+0.1`, `nodes=3000`, `st=0.5 depth=9`): as
    /// [`fmt::Display`], with the time margin only when it is not the default.
    pub fn brief(&self) -> String {
        let mut s = *self;
        if s.timemargin_ms == DEFAULT_TIMEMARGIN_MS {
            s.clock = None;
            let caps = s.to_string();
            return match self.clock {
                Some(c) if caps.is_empty() => c.to_string(),
                Some(c) => format!("{c} {caps}"),
                None => caps,
            };
        }
        self.to_string()
    }

    /// The limit words appended to `go` after the clock: `nodes N`, `depth D`.
    pub fn go_caps(&self) -> String {
        let mut s = String::new();
        if let Some(n) = self.nodes {
            s.push_str(&format!(" nodes {n}"));
        }
        if let Some(d) = self.depth {
            s.push_str(&format!(" depth {d}"));
        }
        s
    }
}

impl fmt::Display for SideLimit {
    /// `tc=10+0.1 nodes=5000`, `st=0.5`, `depth=8` (the margin only with a clock).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(c) = self.clock {
            parts.push(c.to_string());
        }
        if let Some(n) = self.nodes {
            parts.push(format!("nodes={n}"));
        }
        if let Some(d) = self.depth {
            parts.push(format!("depth={d}"));
        }
        if self.clock.is_some() {
            parts.push(format!("timemargin={}", self.timemargin_ms));
        }
        write!(f, "{}", parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_bad_values_are_refused() {
        let mut l = EngineLimits::default();
        assert_eq!(l.set("tc", "2+0.02"), Ok(true));
        assert_eq!(l.set("nodes", "5000"), Ok(true));
        assert_eq!(l.set("depth", "9"), Ok(true));
        assert_eq!(l.set("timemargin", "250"), Ok(true));
        assert_eq!(l.set("name", "x"), Ok(false));
        assert_eq!(l.clock, Some(TimeControl::parse_tc("2+0.02").unwrap()));
        assert_eq!((l.nodes, l.depth, l.timemargin_ms), (Some(5000), Some(9), Some(250)));
        assert!(l.set("st", "1").unwrap_err().contains("one of tc= and st="));
        for (k, v) in [
            ("nodes", "0"),
            ("nodes", "x"),
            ("depth", "256"),
            ("depth", "0"),
            ("tc", "0+0"),
            ("st", "0"),
            ("timemargin", "86400001"),
        ] {
            assert!(EngineLimits::default().set(k, v).is_err(), "{k}={v}");
        }
    }

    #[test]
    fn an_engines_limits_replace_the_runs_and_each_fills_gaps() {
        let run = SideLimit::of_run(TimeControl::parse_tc("10+0.1").unwrap(), Some(50), None, 100);
        assert_eq!(run.go_caps(), " nodes 50");
        assert_eq!(SideLimit::resolve(run, &EngineLimits::default()), run);
        let own = EngineLimits { nodes: Some(7), timemargin_ms: Some(5), ..Default::default() };
        let s = SideLimit::resolve(run, &own);
        assert_eq!((s.clock, s.nodes, s.timemargin_ms), (None, Some(7), 5));
        assert_eq!(s.to_string(), "nodes=7");
        let margin_only = EngineLimits { timemargin_ms: Some(5), ..Default::default() };
        assert_eq!(SideLimit::resolve(run, &margin_only).clock, run.clock);
        let mut a = EngineLimits { nodes: Some(1), ..Default::default() };
        a.add_defaults(&EngineLimits {
            clock: TimeControl::parse_tc("1+0").ok(),
            nodes: Some(9),
            ..Default::default()
        });
        assert_eq!((a.clock.map(|c| c.pgn_tag()), a.nodes), (Some("1".to_string()), Some(1)));
        assert_eq!(
            SideLimit::resolve(run, &a).to_string(),
            "tc=1 nodes=1 timemargin=100",
            "an engine's clock comes with its own caps only"
        );
    }
}
