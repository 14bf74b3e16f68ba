//! Multi-ProbCut variants, each a UCI option whose default is the seed's behaviour
//! (seed 000, Figure 3: both sides, every node including PV nodes, a plain shallow null-window
//! search, no recursion, the test before null move). The search (`Searcher::probcut` in
//! `search.rs`) reads them from [`MpcVariant`]:
//!
//! | option | values (default first) | effect |
//! |---|---|---|
//! | `MPCSide` | `both`, `beta` | `beta`: fail-high cuts only (as Stockfish's ProbCut) |
//! | `MPCPV` | `true`, `false` | `false`: no test at PV nodes |
//! | `MPCEvalGate` | -1, 0..1000 | margin m >= 0: the beta side only when the node's estimate is `>= bound - m`, the alpha side only when it is `<= bound + m` |
//! | `MPCVerify` | `off`, `qsearch`, `captures` | quiescence at the bound first; `captures`: the beta side over captures with SEE >= 0 only |
//! | `MPCNested` | 0, 1..4 | MPC inside MPC's shallow searches down to this many levels |
//! | `MPCMinDepth` | 1, 2..40 | smallest check height tested |
//! | `MPCAfterNull` | `false`, `true` | the test after null-move pruning instead of before |
//!
//! The node's estimate for `MPCEvalGate` is its static evaluation, replaced by the TT score
//! when the TT entry's bound says the score is nearer the truth (exact, a lower bound above the
//! evaluation, or an upper bound below it), as strong engines refine their static evaluation.

use crate::options::{parse_bool, parse_spin};

/// Which sides of the cut test are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpcSide {
    /// Beta side then alpha side (the seed).
    Both,
    /// Fail-high cuts only.
    Beta,
}

/// What must hold before the shallow search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpcVerify {
    /// The shallow search alone (the seed).
    Off,
    /// A quiescence search at the bound first; the shallow search only if it agrees.
    Qsearch,
    /// Beta side: each capture or promotion with SEE >= 0 in turn, a quiescence search at the
    /// bound after it, then the shallow search (one ply less) after it if that agrees
    /// (Stockfish's ProbCut order). Alpha side as `Qsearch`.
    Captures,
}

/// The MPC variant options; `Default` is the seed's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpcVariant {
    pub side: MpcSide,
    /// Test at PV nodes too.
    pub pv: bool,
    /// Eval-gate margin in centipawns; negative = no gate.
    pub eval_gate: i32,
    pub verify: MpcVerify,
    /// Levels of MPC allowed inside MPC's own shallow searches (0 = no recursion).
    pub nested: u32,
    /// Smallest check height tested.
    pub min_depth: i32,
    /// Test after null move instead of before it.
    pub after_null: bool,
}

impl Default for MpcVariant {
    fn default() -> Self {
        Self {
            side: MpcSide::Both,
            pv: true,
            eval_gate: -1,
            verify: MpcVerify::Off,
            nested: 0,
            min_depth: 1,
            after_null: false,
        }
    }
}

impl MpcVariant {
    /// The `option ...` lines answered to `uci`.
    pub fn uci_declarations() -> Vec<String> {
        [
            "option name MPCSide type combo default both var both var beta",
            "option name MPCPV type check default true",
            "option name MPCEvalGate type spin default -1 min -1 max 1000",
            "option name MPCVerify type combo default off var off var qsearch var captures",
            "option name MPCNested type spin default 0 min 0 max 4",
            "option name MPCMinDepth type spin default 1 min 1 max 40",
            "option name MPCAfterNull type check default false",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// Applies `setoption` for one of these options: `None` when `name` is not one of them,
    /// `Some(Err)` (nothing changed) for a bad value.
    pub fn set(&mut self, name: &str, value: &str) -> Option<Result<(), String>> {
        let r = match name.to_ascii_lowercase().as_str() {
            "mpcside" => match value.to_ascii_lowercase().as_str() {
                "both" => Ok(MpcSide::Both),
                "beta" => Ok(MpcSide::Beta),
                _ => Err(format!("expected both or beta, got {value:?}")),
            }
            .map(|s| self.side = s),
            "mpcpv" => parse_bool(value).map(|b| self.pv = b),
            "mpcevalgate" => parse_spin(value, -1, 1000).map(|m| self.eval_gate = m as i32),
            "mpcverify" => match value.to_ascii_lowercase().as_str() {
                "off" => Ok(MpcVerify::Off),
                "qsearch" => Ok(MpcVerify::Qsearch),
                "captures" => Ok(MpcVerify::Captures),
                _ => Err(format!("expected off, qsearch or captures, got {value:?}")),
            }
            .map(|v| self.verify = v),
            "mpcnested" => parse_spin(value, 0, 4).map(|n| self.nested = n as u32),
            "mpcmindepth" => parse_spin(value, 1, 40).map(|d| self.min_depth = d as i32),
            "mpcafternull" => parse_bool(value).map(|b| self.after_null = b),
            _ => return None,
        };
        Some(r)
    }

    /// Whether the eval gate lets the beta side with this bound be tried.
    pub fn gate_beta(&self, estimate: i32, bound: i32) -> bool {
        self.eval_gate < 0 || estimate >= bound - self.eval_gate
    }

    /// Whether the eval gate lets the alpha side with this bound be tried.
    pub fn gate_alpha(&self, estimate: i32, bound: i32) -> bool {
        self.eval_gate < 0 || estimate <= bound + self.eval_gate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_bad_values_change_nothing() {
        let mut v = MpcVariant::default();
        assert_eq!(v.set("MPCSide", "BETA"), Some(Ok(())));
        assert_eq!(v.side, MpcSide::Beta);
        assert_eq!(v.set("mpcpv", "false"), Some(Ok(())));
        assert!(!v.pv);
        assert_eq!(v.set("MPCEvalGate", "50"), Some(Ok(())));
        assert_eq!(v.set("MPCVerify", "captures"), Some(Ok(())));
        assert_eq!(v.set("MPCNested", "2"), Some(Ok(())));
        assert_eq!(v.set("MPCMinDepth", "8"), Some(Ok(())));
        assert_eq!(v.set("MPCAfterNull", "true"), Some(Ok(())));
        let set = MpcVariant {
            side: MpcSide::Beta,
            pv: false,
            eval_gate: 50,
            verify: MpcVerify::Captures,
            nested: 2,
            min_depth: 8,
            after_null: true,
        };
        assert_eq!(v, set);
        for (name, bad) in [
            ("MPCSide", "alpha"),
            ("MPCPV", "yes"),
            ("MPCEvalGate", "-2"),
            ("MPCEvalGate", "1001"),
            ("MPCVerify", "see"),
            ("MPCNested", "5"),
            ("MPCMinDepth", "0"),
            ("MPCAfterNull", ""),
        ] {
            assert!(matches!(v.set(name, bad), Some(Err(_))), "{name}={bad}");
        }
        assert_eq!(v, set);
        assert_eq!(v.set("Hash", "16"), None);
        assert_eq!(MpcVariant::uci_declarations().len(), 7);
    }

    #[test]
    fn eval_gate_margins() {
        let off = MpcVariant::default();
        assert!(off.gate_beta(-3000, 3000) && off.gate_alpha(3000, -3000));
        let g = MpcVariant { eval_gate: 40, ..MpcVariant::default() };
        assert!(g.gate_beta(60, 100) && !g.gate_beta(59, 100));
        assert!(g.gate_alpha(-60, -100) && !g.gate_alpha(-59, -100));
        let zero = MpcVariant { eval_gate: 0, ..MpcVariant::default() };
        assert!(zero.gate_beta(100, 100) && !zero.gate_beta(99, 100));
    }
}
