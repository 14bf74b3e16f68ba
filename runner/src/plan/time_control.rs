//! Time controls: how long engines may think (`--tc`, `--st`, `--nodes`, `--depth`).

use std::fmt;

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

/// The largest depth and `movestogo` sent to engines: common UCI parsers (vampirc-uci among
/// them) keep these in 8 bits, and no engine searches deeper.
pub const MAX_UCI_COUNT: u32 = 255;

/// The largest `--timemargin`: one day, in milliseconds (clock arithmetic is in microseconds,
/// so anything near this stays far from overflow).
pub const MAX_TIMEMARGIN_MS: u64 = 86_400_000;

/// `--timemargin`'s default, in milliseconds.
pub const DEFAULT_TIMEMARGIN_MS: u64 = 100;

/// Checks `--timemargin`.
pub fn check_timemargin(ms: u64) -> anyhow::Result<u64> {
    if ms > MAX_TIMEMARGIN_MS {
        anyhow::bail!("--timemargin {ms}: at most {MAX_TIMEMARGIN_MS} ms (one day)");
    }
    Ok(ms)
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
                if m > MAX_UCI_COUNT {
                    return Err(TcError {
                        input: input.into(),
                        reason: "at most 255 moves per period (`go movestogo` is 8 bits in common UCI parsers)",
                    });
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

/// The time controls of `--tc` (every one, in order; repeats refused), else of
/// `--st`/`--nodes`/`--depth`, else 10+0.1.
pub fn time_controls(
    tc: &[String],
    st: Option<&str>,
    nodes: Option<u64>,
    depth: Option<u32>,
) -> anyhow::Result<Vec<TimeControl>> {
    if !tc.is_empty() {
        let mut v: Vec<TimeControl> = Vec::new();
        for tc in tc {
            let tc = TimeControl::parse_tc(tc)?;
            if v.contains(&tc) {
                anyhow::bail!("--tc {} is given twice", tc.pgn_tag());
            }
            v.push(tc);
        }
        return Ok(v);
    }
    Ok(vec![match (st, nodes, depth) {
        (Some(st), ..) => TimeControl::parse_st(st)?,
        (_, Some(n), _) if n > 0 => TimeControl::Nodes { nodes: n },
        (_, _, Some(d)) if d > MAX_UCI_COUNT => anyhow::bail!(
            "--depth {d}: at most {MAX_UCI_COUNT} (`go depth` is 8 bits in common UCI parsers, \
             e.g. vampirc-uci; no engine searches that deep)"
        ),
        (_, _, Some(d)) if d > 0 => TimeControl::Depth { depth: d },
        (_, Some(_), _) | (_, _, Some(_)) => anyhow::bail!("--nodes and --depth must be > 0"),
        _ => TimeControl::parse_tc("10+0.1")?,
    }])
}

/// The node and depth caps given beside the run's first limit: `--nodes` beside a clock (`--tc`
/// or `--st`), `--depth` beside a clock or `--nodes` (then `go wtime .. nodes N depth D`).
pub fn limit_caps(
    tc: &[String],
    st: Option<&str>,
    nodes: Option<u64>,
    depth: Option<u32>,
) -> anyhow::Result<(Option<u64>, Option<u32>)> {
    let clock = !tc.is_empty() || st.is_some();
    let nodes_cap = if clock { nodes } else { None };
    let depth_cap = if clock || nodes.is_some() { depth } else { None };
    if nodes_cap == Some(0) {
        anyhow::bail!("--nodes must be > 0");
    }
    if let Some(d) = depth_cap
        && !(1..=MAX_UCI_COUNT).contains(&d)
    {
        anyhow::bail!(
            "--depth {d}: expected 1 to {MAX_UCI_COUNT} (`go depth` is 8 bits in common UCI parsers)"
        );
    }
    Ok((nodes_cap, depth_cap))
}

/// [`time_controls`] where only one time control is allowed (sweeps).
pub fn time_control(
    tc: &[String],
    st: Option<&str>,
    nodes: Option<u64>,
    depth: Option<u32>,
) -> anyhow::Result<TimeControl> {
    let mut tcs = time_controls(tc, st, nodes, depth)?;
    if tcs.len() > 1 {
        anyhow::bail!("give one --tc here (several are for `runner match` gauntlets)");
    }
    Ok(tcs.remove(0))
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
}
