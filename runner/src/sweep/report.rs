//! Writes a sweep's outputs from its analysis: table.md, table.csv, summary.json, plot.svg, and
//! points/<label>/summary.json (one sub-result per point). Files are written to a temporary name
//! and renamed, so a run killed while writing leaves the previous version intact.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use super::analysis::SweepAnalysis;
use super::plot;
use super::table;
use super::values::Point;

/// Writes `text` to `path` through a temporary file in the same directory.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("out")
    ));
    fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The summary.json document: the analysis plus `context` (the plan, what was compared), with
/// the keys of the runner's own summary (`run_summary`: `stopped_by`, `pairings` with
/// terminations) kept at the top level, so tools reading a match summary read a sweep's too.
pub fn summary_json(
    a: &SweepAnalysis,
    context: &serde_json::Value,
    run_summary: &serde_json::Value,
) -> serde_json::Value {
    let mut doc = json!({
        "kind": "sweep",
        "context": context,
        "params": a.params,
        "options": a.options,
        "best": a.best,
        "points": a.rows,
    });
    if let (Some(d), Some(r)) = (doc.as_object_mut(), run_summary.as_object()) {
        for (k, v) in r {
            d.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    doc
}

/// Which files [`write_all`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// table.md, table.csv, plot.svg, summary.json and points/*/summary.json.
    Sweep,
    /// table.md, table.csv and plot.svg only (a match keeps the runner's summary.json).
    TablesAndPlot,
}

/// Writes the outputs into `dir` and returns the terminal table.
pub fn write_all(
    dir: &Path,
    a: &SweepAnalysis,
    points: &[Point],
    title: &str,
    context: &serde_json::Value,
    run_summary: &serde_json::Value,
    outputs: Outputs,
) -> Result<String> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_atomic(&dir.join("table.md"), &table::markdown(a, title))?;
    write_atomic(&dir.join("table.csv"), &table::csv(a))?;
    let svg = plot::svg(a, title)?;
    write_atomic(&dir.join("plot.svg"), &svg)?;
    if outputs == Outputs::TablesAndPlot {
        return Ok(table::console(a, title));
    }
    let doc = summary_json(a, context, run_summary);
    write_atomic(&dir.join("summary.json"), &(serde_json::to_string_pretty(&doc)? + "\n"))?;
    for (p, row) in points.iter().zip(&a.rows) {
        let pdir = dir.join("points").join(p.dir_name());
        fs::create_dir_all(&pdir).with_context(|| format!("cannot create {}", pdir.display()))?;
        let doc = json!({
            "label": row.label,
            "assignments": row.assignments,
            "summary": row.summary,
            "significant": row.significant,
            "p_best": row.p_best,
            "status": row.status,
        });
        write_atomic(&pdir.join("summary.json"), &(serde_json::to_string_pretty(&doc)? + "\n"))?;
    }
    Ok(table::console(a, title))
}

#[cfg(test)]
mod tests {
    use super::super::analysis::tests::sample;
    use super::super::analysis::{AnalysisOptions, analyze};
    use super::*;

    #[test]
    fn writes_every_file_and_rewrites_identically() {
        let dir = std::env::temp_dir().join(format!("sweep-report-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        let ctx = json!({"engine": "e"});
        let run = json!({"stopped_by": "complete", "kind": "not this one"});
        let con = write_all(&dir, &a, &points, "t", &ctx, &run, Outputs::Sweep).unwrap();
        assert!(con.contains("t_mid"));
        let read = |n: &str| fs::read_to_string(dir.join(n)).unwrap();
        let first: Vec<String> =
            ["table.md", "table.csv", "summary.json", "plot.svg"].iter().map(|n| read(n)).collect();
        let doc: serde_json::Value = serde_json::from_str(&first[2]).unwrap();
        assert_eq!(doc["points"].as_array().unwrap().len(), 3);
        assert_eq!(doc["best"]["label"], "t_mid=0.9");
        assert_eq!(
            (doc["stopped_by"].as_str(), doc["kind"].as_str()),
            (Some("complete"), Some("sweep"))
        );
        assert_eq!(doc["points"][2]["summary"]["elo"], serde_json::Value::Null);
        let p: serde_json::Value =
            serde_json::from_str(&read("points/t_mid=0.8/summary.json")).unwrap();
        assert_eq!(p["summary"]["games"], 64);
        write_all(&dir, &a, &points, "t", &ctx, &run, Outputs::Sweep).unwrap();
        let again: Vec<String> =
            ["table.md", "table.csv", "summary.json", "plot.svg"].iter().map(|n| read(n)).collect();
        assert_eq!(first, again);
        assert!(
            fs::read_dir(&dir).unwrap().all(|e| !e
                .unwrap()
                .path()
                .to_string_lossy()
                .ends_with(".tmp"))
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
