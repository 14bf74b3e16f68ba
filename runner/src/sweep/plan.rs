//! A sweep's plan: the swept engine at each point (its options plus `--fixed` plus the point's
//! values), the baseline it meets, and the pairings handed to the runner core (one pairing per
//! point, all against the same baseline engine). Saved as `sweep.json` beside the runner's
//! `run.json`; `--resume` and `runner report` read it back.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::plan::engine_spec::{EngineSpec, set_option};
use crate::plan::schedule::Pairing;

use super::analysis::AnalysisOptions;
use super::values::SweptParam;

/// `sweep.json` and its type (the file's format lives with the other formats).
pub use crate::store::formats::{SWEEP_FILE, SweepPlan};

impl SweepPlan {
    /// Names of the swept parameters, in `--param` order.
    pub fn param_names(&self) -> Vec<String> {
        self.params.iter().map(|p| p.name.clone()).collect()
    }

    /// The swept engine at point `i`.
    pub fn candidate(&self, i: usize) -> EngineSpec {
        let mut e = self.engine.clone();
        for (n, v) in &self.fixed {
            set_option(&mut e.options, n, v);
        }
        for (n, v) in &self.points[i].assignments {
            set_option(&mut e.options, n, v);
        }
        e.name = format!("{}[{}]", self.engine.name, self.points[i].label());
        e
    }

    /// The run's engines: one per point, then the baseline (last).
    pub fn engines(&self) -> Vec<EngineSpec> {
        let mut v: Vec<EngineSpec> = (0..self.points.len()).map(|i| self.candidate(i)).collect();
        v.push(self.baseline.clone());
        v
    }

    /// One pairing per point: the point's engine first, the baseline second.
    pub fn pairings(&self) -> Vec<Pairing> {
        let base = self.points.len();
        self.points
            .iter()
            .enumerate()
            .map(|(i, p)| Pairing { label: p.label(), first: i, second: base, tc: None })
            .collect()
    }

    pub fn analysis_options(&self) -> AnalysisOptions {
        AnalysisOptions { alpha: self.alpha, draws_floor: self.draws_floor, sprt: self.sprt }
    }

    /// Title of the table and plot, e.g. `Sweep of t_mid: engine vs engine[MPC=false]`.
    pub fn title(&self) -> String {
        format!(
            "Sweep of {}: {} vs {}",
            self.param_names().join(" x "),
            self.engine.name,
            self.baseline.name
        )
    }

    pub fn save(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        super::report::write_atomic(&dir.join(SWEEP_FILE), &text)
    }

    /// Reads `sweep.json` from a results directory; `Ok(None)` if there is none (not a sweep).
    pub fn load(dir: &Path) -> Result<Option<SweepPlan>> {
        let p = dir.join(SWEEP_FILE);
        let Some(text) =
            crate::store::files::read_regular_text(&p, crate::store::files::SMALL_CAP)?
        else {
            return Ok(None);
        };
        let plan = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid sweep plan", p.display()))?;
        Ok(Some(plan))
    }

    /// Refuses to resume with a different sweep plan, naming what differs.
    pub fn check_same(&self, stored: &SweepPlan, dir: &Path) -> Result<()> {
        if self == stored {
            return Ok(());
        }
        let diffs: Vec<String> =
            stored.changed_fields(self).iter().map(|k| format!("{k} changed")).collect();
        bail!(
            "cannot resume {}: the sweep differs from the stored one ({})",
            dir.display(),
            if diffs.is_empty() { "plan changed".to_string() } else { diffs.join(", ") }
        )
    }
}

/// Parses `--baseline` when it is an option list rather than an engine: `MPC=false,Hash=16` or
/// `option.MPC=false`. Returns `None` when the text names an engine (`name=` or `cmd=`).
pub fn baseline_options(text: &str) -> Result<Option<Vec<(String, String)>>> {
    let mut opts = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            bail!("bad --baseline item {item:?}: expected NAME=VALUE or an engine spec");
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "name" | "cmd" | "arg" | "dir" | "proto" => return Ok(None),
            _ => {}
        }
        let k = k.strip_prefix("option.").unwrap_or(k);
        if k.is_empty() {
            bail!("bad --baseline item {item:?}: empty option name");
        }
        set_option(&mut opts, k, v);
    }
    if opts.is_empty() {
        bail!("--baseline is empty: give NAME=VALUE options or an engine spec");
    }
    Ok(Some(opts))
}

/// The baseline engine from the swept engine and a list of options set on it; named
/// `engine[MPC=false]`.
pub fn baseline_with_options(engine: &EngineSpec, opts: &[(String, String)]) -> EngineSpec {
    let mut b = engine.clone();
    for (n, v) in opts {
        set_option(&mut b.options, n, v);
    }
    let desc = opts.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(",");
    b.name = if desc.is_empty() {
        format!("{}[baseline]", engine.name)
    } else {
        format!("{}[{desc}]", engine.name)
    };
    b
}

/// Checks `--fixed` against the swept parameters (no overlap, no repeats).
pub fn validate(params: &[SweptParam], fixed: &[(String, String)]) -> Result<()> {
    for (n, _) in fixed {
        if params.iter().any(|p| p.name.eq_ignore_ascii_case(n)) {
            bail!("--fixed {n}=... also appears as --param {n}: drop one of them");
        }
        if fixed.iter().filter(|(m, _)| m.eq_ignore_ascii_case(n)).count() > 1 {
            bail!("--fixed {n} is given twice");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::racing::RaceConfig;
    use crate::sweep::values::{SweptParam, grid};

    fn engine() -> EngineSpec {
        EngineSpec {
            name: "engine".into(),
            cmd: "/x/engine".into(),
            args: vec![],
            dir: None,
            options: vec![("Hash".into(), "8".into()), ("MPC".into(), "true".into())],
            limits: Default::default(),
        }
    }

    fn plan() -> SweepPlan {
        let params = vec![
            SweptParam { name: "t_mid".into(), values: vec!["0.9".into(), "1.0".into()] },
            SweptParam { name: "t_end".into(), values: vec!["1.0".into()] },
        ];
        let points = grid(&params).unwrap();
        SweepPlan {
            params,
            fixed: vec![("Hash".into(), "16".into())],
            points,
            engine: engine(),
            baseline: baseline_with_options(&engine(), &[("MPC".into(), "false".into())]),
            race: None,
            alpha: 0.05,
            draws_floor: None,
            sprt: None,
        }
    }

    #[test]
    fn engines_and_pairings() {
        let p = plan();
        let e = p.engines();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].name, "engine[t_mid=0.9,t_end=1.0]");
        assert_eq!(
            e[0].options,
            [
                ("Hash".to_string(), "16".to_string()),
                ("MPC".into(), "true".into()),
                ("t_mid".into(), "0.9".into()),
                ("t_end".into(), "1.0".into())
            ]
        );
        assert_eq!(e[2].name, "engine[MPC=false]");
        assert_eq!(e[2].options[1], ("MPC".into(), "false".into()));
        assert_eq!(e[2].options[0], ("Hash".into(), "8".into()), "--fixed is not the baseline's");
        let pr = p.pairings();
        assert_eq!(
            pr[1],
            Pairing { label: "t_mid=1.0,t_end=1.0".into(), first: 1, second: 2, tc: None }
        );
        assert_eq!(p.title(), "Sweep of t_mid x t_end: engine vs engine[MPC=false]");
    }

    #[test]
    fn baseline_forms() {
        assert_eq!(
            baseline_options("MPC=false, option.Hash=4").unwrap(),
            Some(vec![("MPC".into(), "false".into()), ("Hash".into(), "4".into())])
        );
        assert_eq!(baseline_options("name=sf").unwrap(), None);
        assert_eq!(baseline_options("name=sf,cmd=/usr/games/stockfish").unwrap(), None);
        assert!(baseline_options("MPC").is_err());
        assert!(baseline_options("").is_err());
    }

    #[test]
    fn save_load_and_resume_check() {
        let dir = std::env::temp_dir().join(format!("sweep-plan-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = plan();
        assert_eq!(SweepPlan::load(&dir).unwrap(), None);
        p.save(&dir).unwrap();
        let back = SweepPlan::load(&dir).unwrap().unwrap();
        assert_eq!(back, p);
        p.check_same(&back, &dir).unwrap();
        let mut q = p.clone();
        q.race = Some(RaceConfig::default());
        let e = q.check_same(&back, &dir).unwrap_err().to_string();
        assert!(e.contains("race changed"), "{e}");
        assert!(validate(&p.params, &[("t_mid".into(), "1".into())]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
