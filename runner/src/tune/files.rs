//! The outputs of a tuning run, all computed from its state (replayed from the store): tune.json
//! (final values, iterations, history), tune.csv (one row per iteration), tune.md (the table
//! printed at the end) and tune.svg ([`super::plot`]). Each is written through a temporary file
//! and a rename.

use std::path::Path;

use super::run::TuneState;
use crate::store::formats::{ByName, TuneFile, TuneStep};
use crate::store::write_atomic;
use anyhow::Result;

pub const JSON_FILE: &str = "tune.json";
pub const CSV_FILE: &str = "tune.csv";
pub const TABLE_FILE: &str = "tune.md";
pub const PLOT_FILE: &str = "tune.svg";

/// A value with at most 4 decimals, trailing zeros dropped (`37.2`, `0.8125`, `100`).
pub fn fmt_value(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// `{name: value}` per parameter.
fn by_name(state: &TuneState, values: &[f64]) -> ByName {
    state.spsa.params.iter().zip(values).map(|(p, v)| (p.name.clone(), *v)).collect()
}

/// tune.json: the final values, how far the run got, its settings and every update.
pub fn tune_json(state: &TuneState, stopped_by: &str) -> TuneFile {
    let history = state
        .history
        .iter()
        .map(|h| TuneStep {
            k: h.k,
            games: h.games,
            theta: by_name(state, &h.theta),
            c_k: by_name(state, &h.c_k),
            a_k: by_name(state, &h.a_k),
            result: h.result,
        })
        .collect();
    TuneFile {
        values: by_name(state, &state.theta),
        iterations: state.history.len(),
        planned_iterations: state.spsa.iterations,
        games: state.records.len(),
        stopped_by: stopped_by.to_string(),
        spsa: state.spsa.clone(),
        history,
    }
}

pub fn tune_csv(state: &TuneState) -> String {
    let mut head = vec!["k".to_string(), "games".into(), "result".into()];
    for p in &state.spsa.params {
        head.extend([p.name.clone(), format!("{}_c_k", p.name), format!("{}_a_k", p.name)]);
    }
    let mut out = head.join(",") + "\n";
    for h in &state.history {
        let mut row = vec![h.k.to_string(), h.games.to_string(), h.result.to_string()];
        for i in 0..state.spsa.params.len() {
            row.extend([h.theta[i].to_string(), h.c_k[i].to_string(), h.a_k[i].to_string()]);
        }
        out.push_str(&(row.join(",") + "\n"));
    }
    out
}

/// The table printed at the end: per parameter start, final value, min, max, c_end, r_end.
pub fn tune_table(state: &TuneState) -> String {
    let s = &state.spsa;
    let mut out = format!(
        "SPSA: {} of {} iterations ({} games), A = {}, seed {}\n\n",
        state.history.len(),
        s.iterations,
        state.records.len(),
        fmt_value(s.big_a),
        s.seed
    );
    out.push_str("| parameter | type | start | final | min | max | c_end | r_end |\n");
    out.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (i, p) in s.params.iter().enumerate() {
        let ty = if s.integer.get(i).copied().unwrap_or(false) { "int" } else { "float" };
        out.push_str(&format!(
            "| {} | {ty} | {} | {} | {} | {} | {} | {} |\n",
            p.name,
            fmt_value(p.start),
            fmt_value(state.theta[i]),
            fmt_value(p.min),
            fmt_value(p.max),
            fmt_value(p.c_end),
            p.r_end
        ));
    }
    out
}

/// Writes tune.json, tune.csv, tune.md and tune.svg; returns the table.
pub fn write_outputs(dir: &Path, state: &TuneState, stopped_by: &str) -> Result<String> {
    let table = tune_table(state);
    let json = serde_json::to_string_pretty(&tune_json(state, stopped_by))? + "\n";
    write_atomic(&dir.join(JSON_FILE), json.as_bytes())?;
    write_atomic(&dir.join(CSV_FILE), tune_csv(state).as_bytes())?;
    write_atomic(&dir.join(TABLE_FILE), table.as_bytes())?;
    let svg = super::plot::svg(state).map_err(|e| anyhow::anyhow!("tune.svg: {e}"))?;
    write_atomic(&dir.join(PLOT_FILE), svg.as_bytes())?;
    Ok(table)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::tune::params::parse_params;
    use crate::tune::spsa::{Finished, Spsa};

    pub(crate) fn state() -> TuneState {
        let spsa = Spsa {
            params: parse_params(&["X,80,0,100,10,0.5".into(), "t_mid,1,0.5,1.5,0.1,0.5".into()])
                .unwrap(),
            integer: vec![true, false],
            iterations: 4,
            big_a: 0.4,
            seed: 1,
        };
        let mut started = std::collections::BTreeMap::new();
        let mut theta = spsa.start_theta();
        for k in 0..3 {
            let it = spsa.begin(k, &theta);
            spsa.update(&mut theta, &it, 1.0);
            started.insert(k, it);
        }
        let done: Vec<Finished> =
            (0..3).map(|k| Finished { k, result: 1.0, games: 2 * (k + 1) }).collect();
        let (theta, history) = spsa.replay(&started, &done).unwrap();
        TuneState { spsa, theta, history, records: Vec::new() }
    }

    #[test]
    fn values_are_short() {
        assert_eq!(fmt_value(37.0), "37");
        assert_eq!(fmt_value(0.8125), "0.8125");
        assert_eq!(fmt_value(41.23456), "41.2346");
        assert_eq!(fmt_value(-0.00001), "0");
    }

    #[test]
    fn files_hold_every_iteration() {
        let s = state();
        let j = tune_json(&s, "complete");
        assert_eq!(j.iterations, 3);
        assert_eq!(j.history.len(), 3);
        assert_eq!(j.values["X"], s.theta[0]);
        assert_eq!(j.history[2].theta["t_mid"], s.theta[1]);
        let csv = tune_csv(&s);
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with("k,games,result,X,X_c_k,X_a_k,t_mid,"), "{csv}");
        let t = tune_table(&s);
        assert!(t.contains("| X | int | 80 | "), "{t}");
        assert!(t.contains("| t_mid | float | 1 | "), "{t}");
        assert!(t.starts_with("SPSA: 3 of 4 iterations (0 games)"), "{t}");
    }
}
