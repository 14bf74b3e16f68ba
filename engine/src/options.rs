//! Every engine knob, declared once: its UCI declaration, its default and how
//! a `setoption` value is checked. Search tunables are plain integers exposed
//! as UCI spin options.

use crate::mpc::MpcTable;
use crate::mpc_params::load_params;
use crate::mpc_variant::MpcVariant;

/// Multi-cut (the default table) or single-pair (4,8) ProbCut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbCutMode {
    Multi,
    Single,
}

/// Integer search tunables: (UCI name, default, min, max).
macro_rules! tunables {
    ($($field:ident : $name:literal = $def:expr, $min:expr, $max:expr;)*) => {
        /// Integer search parameters, each a UCI spin option.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Tunables { $(pub $field: i32,)* }
        impl Default for Tunables {
            fn default() -> Self { Self { $($field: $def,)* } }
        }
        impl Tunables {
            /// (name, default, min, max) of each tunable.
            pub const SPECS: &[(&'static str, i32, i32, i32)] = &[$(($name, $def, $min, $max),)*];
            fn slot(&mut self, name: &str) -> Option<&mut i32> {
                $(if name.eq_ignore_ascii_case($name) { return Some(&mut self.$field); })*
                None
            }
        }
    };
}

tunables! {
    asp_window: "AspWindow" = 25, 5, 500;
    nmp_base: "NmpBase" = 3, 1, 6;
    nmp_depth_div: "NmpDepthDiv" = 6, 1, 20;
    lmr_base: "LmrBase" = 75, 0, 300;
    lmr_div: "LmrDiv" = 225, 100, 600;
    rfp_margin: "RfpMargin" = 80, 0, 500;
    rfp_depth: "RfpDepth" = 6, 0, 12;
}

#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub hash_mb: usize,
    pub mpc: bool,
    pub probcut: ProbCutMode,
    pub t_mid: f64,
    pub t_end: f64,
    pub mpc_params_path: String,
    /// The table loaded from `MPCParams` (or the built-in defaults).
    pub mpc_table: MpcTable,
    /// Use the largest height's MPC entries (shifted) above the table.
    pub mpc_extend: bool,
    /// The MPC variant options (`MPCSide`, `MPCPV`, ...; see `mpc_variant`).
    pub mpc_variant: MpcVariant,
    /// Diagnostic: at each MPC fail-high cut where null move would have been tried next, run
    /// that null-move search in a sandbox and count whether it would have cut too (`MPCDiag`).
    pub mpc_diag: bool,
    /// Diagnostic: percent of MPC cuts re-searched at full depth in a sandbox to count wrong
    /// cuts (`MPCVerifySample`, 0 = none).
    pub mpc_verify_sample: u32,
    pub null_move: bool,
    pub lmr: bool,
    pub move_overhead_ms: u64,
    pub chess960: bool,
    pub tunables: Tunables,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            hash_mb: 16,
            mpc: true,
            probcut: ProbCutMode::Multi,
            t_mid: 1.0,
            t_end: 1.0,
            mpc_params_path: String::new(),
            mpc_table: MpcTable::default_multi(),
            mpc_extend: false,
            mpc_variant: MpcVariant::default(),
            mpc_diag: false,
            mpc_verify_sample: 0,
            null_move: true,
            lmr: true,
            move_overhead_ms: 30,
            chess960: false,
            tunables: Tunables::default(),
        }
    }
}

/// What the caller must do after a successful `setoption`.
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    ResizeHash,
    ClearHash,
}

pub(crate) fn parse_bool(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("expected true or false, got {v:?}")),
    }
}

fn parse_threshold(v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("expected a number >= 0, got {v:?}")),
    }
}

pub(crate) fn parse_spin(v: &str, min: i64, max: i64) -> Result<i64, String> {
    match v.trim().parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected an integer in {min}..={max}, got {v:?}")),
    }
}

impl EngineOptions {
    /// The `option ...` lines answered to `uci`.
    pub fn uci_declarations() -> Vec<String> {
        let mut v = vec![
            "option name Hash type spin default 16 min 1 max 4096".to_string(),
            "option name Threads type spin default 1 min 1 max 1".to_string(),
            "option name Clear Hash type button".to_string(),
            "option name MPC type check default true".to_string(),
            "option name ProbCut type combo default multi var multi var single".to_string(),
            "option name t_mid type string default 1.0".to_string(),
            "option name t_end type string default 1.0".to_string(),
            "option name MPCParams type string default <empty>".to_string(),
            "option name MPCExtend type check default false".to_string(),
            "option name MPCDiag type check default false".to_string(),
            "option name MPCVerifySample type spin default 0 min 0 max 100".to_string(),
            "option name NullMove type check default true".to_string(),
            "option name LMR type check default true".to_string(),
            "option name Move Overhead type spin default 30 min 0 max 5000".to_string(),
            "option name UCI_Chess960 type check default false".to_string(),
        ];
        v.extend(MpcVariant::uci_declarations());
        for (name, def, min, max) in Tunables::SPECS {
            v.push(format!("option name {name} type spin default {def} min {min} max {max}"));
        }
        v
    }

    /// The table the search uses, given the ProbCut mode.
    pub fn active_table(&self) -> MpcTable {
        match self.probcut {
            ProbCutMode::Multi => {
                let mut t = self.mpc_table.clone();
                t.set_extend(self.mpc_extend);
                t
            }
            ProbCutMode::Single => MpcTable::single_from(&self.mpc_table),
        }
    }

    /// Applies `setoption name <name> value <value>`. On error nothing changes
    /// and the message says why (for an `info string`).
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<Effect, String> {
        let name = name.trim();
        let value = value.map(str::trim).unwrap_or("");
        let lname = name.to_ascii_lowercase();
        match lname.as_str() {
            "hash" => {
                self.hash_mb = parse_spin(value, 1, 4096)? as usize;
                Ok(Effect::ResizeHash)
            }
            "threads" => {
                parse_spin(value, 1, 1)?;
                Ok(Effect::None)
            }
            "clear hash" => Ok(Effect::ClearHash),
            "mpc" => {
                self.mpc = parse_bool(value)?;
                Ok(Effect::None)
            }
            "probcut" => {
                self.probcut = match value.to_ascii_lowercase().as_str() {
                    "multi" => ProbCutMode::Multi,
                    "single" => ProbCutMode::Single,
                    _ => return Err(format!("expected multi or single, got {value:?}")),
                };
                Ok(Effect::None)
            }
            "t_mid" => {
                self.t_mid = parse_threshold(value)?;
                Ok(Effect::None)
            }
            "t_end" => {
                self.t_end = parse_threshold(value)?;
                Ok(Effect::None)
            }
            "mpcparams" => {
                if value.is_empty() || value == "<empty>" {
                    self.mpc_table = MpcTable::default_multi();
                    self.mpc_params_path.clear();
                } else {
                    self.mpc_table = load_params(value)
                        .map_err(|e| format!("{e}; keeping the previous MPC parameters"))?;
                    self.mpc_params_path = value.to_string();
                }
                Ok(Effect::None)
            }
            "mpcextend" => {
                self.mpc_extend = parse_bool(value)?;
                Ok(Effect::None)
            }
            "mpcdiag" => {
                self.mpc_diag = parse_bool(value)?;
                Ok(Effect::None)
            }
            "mpcverifysample" => {
                self.mpc_verify_sample = parse_spin(value, 0, 100)? as u32;
                Ok(Effect::None)
            }
            "nullmove" => {
                self.null_move = parse_bool(value)?;
                Ok(Effect::None)
            }
            "lmr" => {
                self.lmr = parse_bool(value)?;
                Ok(Effect::None)
            }
            "move overhead" => {
                self.move_overhead_ms = parse_spin(value, 0, 5000)? as u64;
                Ok(Effect::None)
            }
            "uci_chess960" => {
                self.chess960 = parse_bool(value)?;
                Ok(Effect::None)
            }
            _ => {
                if let Some(r) = self.mpc_variant.set(name, value) {
                    return r.map(|()| Effect::None);
                }
                let spec = Tunables::SPECS
                    .iter()
                    .find(|s| s.0.eq_ignore_ascii_case(name))
                    .ok_or_else(|| format!("unknown option {name:?}"))?;
                let v = parse_spin(value, spec.2 as i64, spec.3 as i64)? as i32;
                if let Some(slot) = self.tunables.slot(name) {
                    *slot = v;
                }
                Ok(Effect::None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_values_apply() {
        let mut o = EngineOptions::default();
        assert_eq!(o.set("Hash", Some("32")), Ok(Effect::ResizeHash));
        assert_eq!(o.hash_mb, 32);
        o.set("mpc", Some("false")).unwrap();
        assert!(!o.mpc);
        o.set("t_mid", Some("1.5")).unwrap();
        assert_eq!(o.t_mid, 1.5);
        o.set("ProbCut", Some("single")).unwrap();
        assert_eq!(o.probcut, ProbCutMode::Single);
        o.set("LmrDiv", Some("300")).unwrap();
        assert_eq!(o.tunables.lmr_div, 300);
        o.set("MPCDiag", Some("true")).unwrap();
        o.set("mpcverifysample", Some("25")).unwrap();
        assert!(o.mpc_diag && o.mpc_verify_sample == 25);
        assert_eq!(o.set("Clear Hash", None), Ok(Effect::ClearHash));
        o.set("ProbCut", Some("multi")).unwrap();
        assert_eq!(o.active_table().tries(crate::mpc::Stage::Middlegame, 12).count(), 0);
        o.set("MPCExtend", Some("true")).unwrap();
        assert_eq!(o.active_table().tries(crate::mpc::Stage::Middlegame, 12).count(), 1);
    }

    #[test]
    fn bad_values_are_rejected_and_ignored() {
        let mut o = EngineOptions::default();
        assert!(o.set("Hash", Some("lots")).is_err());
        assert!(o.set("Hash", Some("0")).is_err());
        assert_eq!(o.hash_mb, 16);
        assert!(o.set("t_end", Some("abc")).is_err());
        assert!(o.set("t_end", Some("-1")).is_err());
        assert!(o.set("t_end", Some("NaN")).is_err());
        assert_eq!(o.t_end, 1.0);
        assert!(o.set("MPC", Some("yes")).is_err());
        assert!(o.set("NoSuchOption", Some("1")).is_err());
        assert!(o.set("AspWindow", Some("100000")).is_err());
        assert!(o.set("MPCDiag", Some("1")).is_err());
        assert!(o.set("MPCVerifySample", Some("101")).is_err());
        assert!(o.set("MPCVerifySample", Some("-1")).is_err());
        assert!(!o.mpc_diag && o.mpc_verify_sample == 0);
        assert!(o.set("MPCParams", Some("/definitely/not/here.json")).is_err());
        assert_eq!(o.mpc_table, MpcTable::default_multi());
    }
}
