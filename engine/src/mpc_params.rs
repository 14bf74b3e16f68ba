//! Loading Multi-ProbCut parameters from a JSON file: an array of rows
//! `{"stage": "middlegame"|"endgame", "shallow": d', "deep": d, "a", "b",
//! "sigma", "r", "n"}` (`r` and `n` are informational and optional).
//! Each row becomes one try at check height `deep` for its stage, in file
//! order (at most `NUM_TRY` per stage and height). A loaded file replaces the
//! whole table; for heights above its largest one see `mpc` (no test unless
//! the `MPCExtend` option is on).

use serde::Deserialize;
use thiserror::Error;

use crate::mpc::{MpcParam, MpcTable, NUM_TRY, Stage};

/// Deepest check height a file may name.
pub const MAX_DEEP: i32 = 40;

#[derive(Debug, Error)]
pub enum ParamError {
    #[error("cannot read MPC parameter file {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("MPC parameter file is not a JSON array of rows: {0}")]
    Json(#[from] serde_json::Error),
    #[error("MPC parameter row {row}: {msg}")]
    Row { row: usize, msg: String },
    #[error("MPC parameter file has no rows")]
    Empty,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    stage: String,
    shallow: i32,
    deep: i32,
    a: f64,
    b: f64,
    sigma: f64,
    #[allow(dead_code)]
    r: Option<f64>,
    #[allow(dead_code)]
    n: Option<u64>,
}

/// Parses the JSON text of a parameter file.
pub fn parse_params(text: &str) -> Result<MpcTable, ParamError> {
    let rows: Vec<Row> = serde_json::from_str(text)?;
    if rows.is_empty() {
        return Err(ParamError::Empty);
    }
    let mut table = MpcTable::empty(true);
    for (i, r) in rows.iter().enumerate() {
        let row = i + 1;
        let err = |msg: String| ParamError::Row { row, msg };
        let stage = match r.stage.to_ascii_lowercase().as_str() {
            "middlegame" | "mid" => Stage::Middlegame,
            "endgame" | "end" => Stage::Endgame,
            other => {
                return Err(err(format!(
                    "stage {other:?} is neither \"middlegame\" nor \"endgame\""
                )));
            }
        };
        if !(1..=MAX_DEEP).contains(&r.deep) || !(1..r.deep).contains(&r.shallow) {
            return Err(err(format!(
                "need 1 <= shallow < deep <= {MAX_DEEP}, got shallow {} deep {}",
                r.shallow, r.deep
            )));
        }
        if !(r.a.is_finite() && r.a > 0.0) {
            return Err(err(format!("slope a must be positive, got {}", r.a)));
        }
        if !r.b.is_finite() {
            return Err(err("offset b must be a finite number".into()));
        }
        if !(r.sigma.is_finite() && r.sigma >= 0.0) {
            return Err(err(format!("sigma must be >= 0, got {}", r.sigma)));
        }
        let p = MpcParam { shallow: r.shallow, a: r.a, b: r.b, sigma: r.sigma };
        if !table.add(stage, r.deep as usize, p) {
            return Err(err(format!(
                "more than {NUM_TRY} tries for stage {} deep {}",
                r.stage, r.deep
            )));
        }
    }
    Ok(table)
}

/// Reads and parses a parameter file.
pub fn load_params(path: &str) -> Result<MpcTable, ParamError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ParamError::Io { path: path.to_string(), source })?;
    parse_params(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"[
      {"stage": "middlegame", "shallow": 4, "deep": 8, "a": 1.0, "b": -3.5, "sigma": 70.0, "r": 0.9, "n": 1200},
      {"stage": "endgame", "shallow": 4, "deep": 8, "a": 1.1, "b": 2.0, "sigma": 60.0},
      {"stage": "middlegame", "shallow": 2, "deep": 8, "a": 0.9, "b": 0.0, "sigma": 95.0},
      {"stage": "middlegame", "shallow": 3, "deep": 7, "a": 1.05, "b": 1.0, "sigma": 80.0}
    ]"#;

    #[test]
    fn loads_good_file() {
        let t = parse_params(GOOD).unwrap();
        let mid8: Vec<_> = t.tries(Stage::Middlegame, 8).collect();
        assert_eq!(mid8.len(), 2);
        assert_eq!(mid8[0].shallow, 4);
        assert_eq!(mid8[0].b, -3.5);
        assert_eq!(mid8[1].shallow, 2);
        assert_eq!(t.tries(Stage::Middlegame, 7).next().unwrap().sigma, 80.0);
        assert_eq!(t.tries(Stage::Middlegame, 6).count(), 0);
        // Height 10 > 8 (largest): extension shifts the shallow depth by 2.
        let ten: Vec<_> = t.tries(Stage::Middlegame, 10).map(|p| p.shallow).collect();
        assert_eq!(ten, vec![6, 4]);
        assert_eq!(t.tries(Stage::Endgame, 8).next().unwrap().a, 1.1);
    }

    #[test]
    fn loads_from_disk_and_reports_missing_file() {
        let dir = std::env::temp_dir().join(format!("mpc-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.json");
        std::fs::write(&path, GOOD).unwrap();
        assert!(load_params(path.to_str().unwrap()).is_ok());
        let e = load_params(dir.join("nope.json").to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn rejects_malformed_files() {
        let bad = [
            "not json",
            "{}",
            "[]",
            r#"[{"stage": "opening", "shallow": 4, "deep": 8, "a": 1, "b": 0, "sigma": 50}]"#,
            r#"[{"stage": "endgame", "shallow": 8, "deep": 4, "a": 1, "b": 0, "sigma": 50}]"#,
            r#"[{"stage": "endgame", "shallow": 4, "deep": 8, "a": 0, "b": 0, "sigma": 50}]"#,
            r#"[{"stage": "endgame", "shallow": 4, "deep": 8, "a": 1, "b": 0, "sigma": -1}]"#,
            r#"[{"stage": "endgame", "shallow": 4, "deep": 8, "a": 1, "sigma": 50}]"#,
            r#"[{"stage": "endgame", "shallow": 4, "deep": 8, "a": 1, "b": 0, "sigma": 5, "x": 1}]"#,
        ];
        for text in bad {
            assert!(parse_params(text).is_err(), "accepted {text}");
        }
        let three = r#"[
          {"stage": "endgame", "shallow": 4, "deep": 8, "a": 1, "b": 0, "sigma": 5},
          {"stage": "endgame", "shallow": 3, "deep": 8, "a": 1, "b": 0, "sigma": 5},
          {"stage": "endgame", "shallow": 2, "deep": 8, "a": 1, "b": 0, "sigma": 5}]"#;
        let e = parse_params(three).unwrap_err();
        assert!(e.to_string().contains("row 3"), "{e}");
    }
}
