//! `runner merge DIR... --out DIR`: combines the shards of one run (`--shard K/N`) into one
//! results directory: the store merges the games (see [`crate::store::merge`]), then the
//! summaries and tables are written by the layer that owns the kind of run (sweep, tournament,
//! match).

use anyhow::Result;

use crate::cli::MergeArgs;
use crate::exit::Exit;
use crate::gauntlet::files::write_tables;
use crate::plan::run_plan::RunKind;
use crate::report::summary::write_merged_summary;
use crate::store::merge::{Merged, merge_dirs};
use crate::sweep::plan::SweepPlan;
use crate::sweep::report::write_merged_sweep;

/// Writes the merged directory's summary.json and tables; returns the text to print.
fn write_reports(m: &Merged) -> Result<String> {
    let (out, plan, records) = (&m.dir, &m.plan, &m.records);
    if let Some(sweep) = &m.side_plan {
        return write_merged_sweep(out, sweep, plan, records, &m.stopped_by, m.merge_info.clone());
    }
    let mut text = write_merged_summary(out, plan, records, &m.stopped_by, m.merge_info.clone())?;
    if plan.kind != RunKind::Match {
        // A gauntlet or round-robin: its tables, anchored as the shards were.
        let tables = write_tables(out, plan, records, m.anchor.0, m.anchor.1)?;
        text.push('\n');
        text.push_str(&tables.markdown());
    }
    Ok(text)
}

/// `runner merge`. Returns the process exit code.
pub fn run(args: &MergeArgs) -> Result<Exit> {
    let m = merge_dirs(&args.dirs, &args.out, &SweepPlan::load)?;
    out!("{}", write_reports(&m)?);
    outln!(
        "merged shard(s) {} of a {}-way split: {} of {} scheduled games ({})",
        m.set.describe(),
        m.set.count,
        m.games,
        m.scheduled_games,
        m.stopped_by
    );
    if !m.missing.is_empty() {
        let missing: Vec<String> =
            m.missing.iter().map(|k| format!("{k}/{}", m.set.count)).collect();
        errln!(
            "warning: partial merge: shard(s) {} missing; merge this directory again with them \
             (it counts as the shards it holds)",
            missing.join(", ")
        );
    } else if !m.shortfalls.is_empty() {
        for s in &m.shortfalls {
            errln!("warning: incomplete merge: {s}");
        }
        errln!(
            "warning: {} scheduled game(s) are missing: --resume on {} plays them",
            m.scheduled_games - m.games,
            m.dir.display()
        );
    } else if m.games < m.scheduled_games {
        errln!(
            "warning: {} scheduled game(s) are not in any shard (shards stopped early: {})",
            m.scheduled_games - m.games,
            m.stopped_by
        );
    }
    outln!("results: {}", m.dir.display());
    Ok(Exit::Done)
}
