//! Who plays whom in a match of more than two engines or several time controls: gauntlet
//! pairings (the engines under test, in the first seats, against every other engine) or a
//! round-robin (everyone against everyone), repeated once per time control.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::plan::schedule::Pairing;
use crate::plan::time_control::TimeControl;

/// How pairings are made from more than two engines.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tournament {
    /// The first --gauntlet-seats engines (under test) each play every other engine.
    #[default]
    Gauntlet,
    /// Every engine plays every other engine.
    RoundRobin,
}

impl Tournament {
    pub fn as_str(self) -> &'static str {
        match self {
            Tournament::Gauntlet => "gauntlet",
            Tournament::RoundRobin => "round-robin",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error(
        "--gauntlet-seats {seats} needs at least one opponent after it (there are {engines} engines)"
    )]
    Seats { seats: usize, engines: usize },
    #[error("two engines are named {0:?}: give each a different name=")]
    DuplicateName(String),
    #[error("a tournament needs at least two engines")]
    TooFew,
}

/// A time control as a table heading: `2+0.02` for clocks, `nodes=N`, `depth=N`, `st=S`.
pub fn tc_label(tc: &TimeControl) -> String {
    match tc {
        TimeControl::Fischer { .. } => tc.pgn_tag(),
        _ => tc.to_string(),
    }
}

/// The pairings of `names` (engine indices = positions), once per time control. With one time
/// control the pairings carry none (the plan's applies) and are labelled `A vs B`; with several,
/// each carries its own and the label ends in `@ TC`.
pub fn pairings(
    names: &[String],
    tournament: Tournament,
    seats: usize,
    tcs: &[TimeControl],
) -> Result<Vec<Pairing>, PlanError> {
    let n = names.len();
    if n < 2 {
        return Err(PlanError::TooFew);
    }
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(PlanError::DuplicateName(a.clone()));
        }
    }
    let pairs: Vec<(usize, usize)> = match tournament {
        Tournament::Gauntlet => {
            if seats == 0 || seats >= n {
                return Err(PlanError::Seats { seats, engines: n });
            }
            (0..seats).flat_map(|a| (seats..n).map(move |b| (a, b))).collect()
        }
        Tournament::RoundRobin => (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).collect(),
    };
    let several = tcs.len() > 1;
    let mut out = Vec::with_capacity(pairs.len() * tcs.len().max(1));
    for tc in tcs {
        for &(first, second) in &pairs {
            let base = format!("{} vs {}", names[first], names[second]);
            out.push(Pairing {
                label: if several { format!("{base} @ {}", tc_label(tc)) } else { base },
                first,
                second,
                tc: several.then_some(*tc),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn gauntlet_round_robin_and_time_controls() {
        let n = names(&["a", "b", "c", "d"]);
        let one = [TimeControl::Nodes { nodes: 100 }];
        let g = pairings(&n, Tournament::Gauntlet, 1, &one).unwrap();
        let fs: Vec<_> = g.iter().map(|p| (p.first, p.second)).collect();
        assert_eq!(fs, [(0, 1), (0, 2), (0, 3)]);
        assert_eq!(g[0].label, "a vs b");
        assert_eq!(g[0].tc, None);
        let g2 = pairings(&n, Tournament::Gauntlet, 2, &one).unwrap();
        let fs: Vec<_> = g2.iter().map(|p| (p.first, p.second)).collect();
        assert_eq!(fs, [(0, 2), (0, 3), (1, 2), (1, 3)]);
        let rr = pairings(&n, Tournament::RoundRobin, 1, &one).unwrap();
        assert_eq!(rr.len(), 6);
        let two =
            [TimeControl::parse_tc("2+0.02").unwrap(), TimeControl::parse_tc("8+0.08").unwrap()];
        let t = pairings(&n[..2], Tournament::Gauntlet, 1, &two).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].label, "a vs b @ 8+0.08");
        assert_eq!(t[1].tc, Some(two[1]));
    }

    #[test]
    fn bad_plans() {
        let one = [TimeControl::Depth { depth: 2 }];
        let e = pairings(&names(&["a", "b"]), Tournament::Gauntlet, 2, &one).unwrap_err();
        assert_eq!(e, PlanError::Seats { seats: 2, engines: 2 });
        let e = pairings(&names(&["a", "b", "a"]), Tournament::RoundRobin, 1, &one).unwrap_err();
        assert_eq!(e, PlanError::DuplicateName("a".into()));
        assert_eq!(pairings(&names(&["a"]), Tournament::Gauntlet, 1, &one), Err(PlanError::TooFew));
    }
}
