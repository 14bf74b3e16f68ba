//! A match's files besides the runner's summary.json: table.md, table.csv (one row per pairing,
//! see [`super::match_table`]) and plot.svg (the running score, [`super::match_plot`]), all from
//! the stored games, each written to a temporary name and renamed.

use std::path::Path;

use anyhow::Result;

use super::match_table::{MatchRow, csv, markdown};
use crate::plan::run_plan::RunPlan;
use crate::report::summary::Tally;
use crate::store::{GameRecord, write_atomic};

/// The title of a match's table and plot: `mpc vs nompc: 24 games, tc=10+0.1`, with each
/// engine's own limits when they differ (`RunPlan::limits_text`).
pub fn title(plan: &RunPlan, games: usize) -> String {
    let label = plan.pairings.first().map(|p| p.label.as_str()).unwrap_or("match");
    format!("{label}: {games} games, {}", plan.limits_text())
}

/// Writes table.md, table.csv and plot.svg of a match into `dir`; returns table.md's text.
pub fn write(dir: &Path, plan: &RunPlan, records: &[GameRecord]) -> Result<String> {
    let tally = Tally::of_records(plan.pairings.len(), records);
    let rows: Vec<MatchRow> = plan
        .pairings
        .iter()
        .zip(&tally.pairings)
        .map(|(p, t)| {
            let (stats, problem) = match t.summarize_why(plan.sprt) {
                Some((s, why)) => (Some(s), why),
                None => (None, None),
            };
            MatchRow { label: &p.label, tally: t, stats, problem }
        })
        .collect();
    let title = title(plan, records.len());
    let md = markdown(&title, &rows);
    write_atomic(&dir.join("table.md"), md.as_bytes())?;
    write_atomic(&dir.join("table.csv"), csv(&rows).as_bytes())?;
    let svg = super::match_plot::svg(records, 0, &title)?;
    write_atomic(&dir.join("plot.svg"), svg.as_bytes())?;
    Ok(md)
}
