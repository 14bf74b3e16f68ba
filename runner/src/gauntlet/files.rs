//! Writing a gauntlet's tables into its run directory: table.md (all tables), table.csv (one line
//! per pairing and time control), ratings.csv, and a `gauntlet` key in summary.json.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::tables::{GauntletTables, build};
use crate::plan::run_plan::RunPlan;
use crate::store::files::{SMALL_CAP, read_regular_text};
use crate::store::{GameRecord, RunSummary, SUMMARY_FILE, write_atomic, write_summary};

pub const TABLE_MD: &str = "table.md";
pub const TABLE_CSV: &str = "table.csv";
pub const RATINGS_CSV: &str = "ratings.csv";

/// The engine index of `--anchor NAME` (the first engine without one).
pub fn anchor_index(plan: &RunPlan, anchor: Option<&str>) -> Result<usize> {
    match anchor {
        None => Ok(0),
        Some(name) => match plan.engines.iter().position(|e| e.name == name) {
            Some(i) => Ok(i),
            None => bail!(
                "--anchor {name:?} is not one of the engines ({})",
                plan.engines.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        },
    }
}

/// Computes the tables from `records` and writes them into `dir`.
pub fn write_tables(
    dir: &Path,
    plan: &RunPlan,
    records: &[GameRecord],
    anchor: usize,
    anchor_elo: f64,
) -> Result<GauntletTables> {
    let tables = build(plan, records, anchor, anchor_elo).context("fitting the ratings")?;
    write_atomic(&dir.join(TABLE_MD), tables.markdown().as_bytes())?;
    write_atomic(&dir.join(TABLE_CSV), tables.pairings_csv().as_bytes())?;
    write_atomic(&dir.join(RATINGS_CSV), tables.ratings_csv().as_bytes())?;
    let summary_path = dir.join(SUMMARY_FILE);
    // A folder may come from anywhere: summary.json is read only as a regular file, capped.
    let mut summary: RunSummary = match read_regular_text(&summary_path, SMALL_CAP)? {
        Some(text) => serde_json::from_str(&text)
            .with_context(|| format!("cannot parse {}", summary_path.display()))?,
        None => RunSummary::default(),
    };
    summary.gauntlet = Some(tables.clone());
    write_summary(dir, &summary)?;
    Ok(tables)
}
