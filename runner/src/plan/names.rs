//! Engine names and pairing labels as a run uses them: the file-name stem of an engine's logs,
//! and the check that no two engines share a stem and no two pairings share a label (tables,
//! games.jsonl and the logs/ folder are keyed by them).

use anyhow::{Result, bail};

use crate::plan::engine_spec::EngineSpec;
use crate::plan::schedule::Pairing;

/// A file-name stem from an engine name: ASCII letters, digits, `-`, `.` and `=` kept, any run of
/// other characters one `_`, none at either end (`engine[MPC=false]` -> `engine_MPC=false`).
pub fn file_stem(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "-.=".contains(c) {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() { "engine".into() } else { out }
}

/// Refuses, before any game, engine names that would mix up a run's records: a name holding
/// ` vs ` (pairing labels are `A vs B`), two different names with one log file stem (they would
/// write one stderr log), and two pairings with one label.
pub fn check_run_names(engines: &[EngineSpec], pairings: &[Pairing]) -> Result<()> {
    for (i, e) in engines.iter().enumerate() {
        if e.name.contains(" vs ") {
            bail!(
                "engine name {:?} contains \" vs \", which separates the engines in pairing \
                 labels: give it another name=",
                e.name
            );
        }
        let stem = file_stem(&e.name);
        if let Some(o) =
            engines[..i].iter().find(|o| o.name != e.name && file_stem(&o.name) == stem)
        {
            bail!(
                "engines {:?} and {:?} would share the log file name {stem}-N.stderr.log: give \
                 names that differ in letters, digits, '-', '.' or '='",
                o.name,
                e.name
            );
        }
    }
    for (i, p) in pairings.iter().enumerate() {
        if pairings[..i].iter().any(|o| o.label == p.label) {
            bail!("two pairings are both labelled {:?}: give the engines other names", p.label);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str) -> EngineSpec {
        EngineSpec {
            name: name.into(),
            cmd: "e".into(),
            args: vec![],
            dir: None,
            options: vec![],
            limits: Default::default(),
        }
    }

    fn pairing(label: &str) -> Pairing {
        Pairing { label: label.into(), first: 0, second: 1, tc: None }
    }

    #[test]
    fn log_names_are_clean() {
        assert_eq!(file_stem("engine[MPC=false]"), "engine_MPC=false");
        assert_eq!(file_stem("engine[t_mid=0.8,t_end=1.0]"), "engine_t_mid=0.8_t_end=1.0");
        assert_eq!(file_stem("Stockfish 16"), "Stockfish_16");
        assert_eq!(file_stem("[]"), "engine");
    }

    #[test]
    fn names_that_would_share_logs_or_labels_are_refused() {
        let e = check_run_names(&[engine("x/y"), engine("x_y")], &[]).unwrap_err().to_string();
        assert!(e.contains("\"x/y\" and \"x_y\" would share the log file name x_y-N"), "{e}");
        let e = check_run_names(&[engine("a vs b"), engine("c")], &[]).unwrap_err().to_string();
        assert!(e.contains("contains \" vs \""), "{e}");
        let e =
            check_run_names(&[engine("a"), engine("b")], &[pairing("a vs b"), pairing("a vs b")])
                .unwrap_err()
                .to_string();
        assert!(e.contains("two pairings are both labelled \"a vs b\""), "{e}");
        // One engine playing itself and distinct names are fine.
        check_run_names(&[engine("a")], &[pairing("a vs a")]).unwrap();
        check_run_names(&[engine("x/y"), engine("x-y"), engine("x.y")], &[pairing("p")]).unwrap();
    }
}
