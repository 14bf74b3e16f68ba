//! Tablebase adjudication in the fleet: a submitted run that asks for it (its plan's
//! `adjudication.tablebase`) is stored in submission format [`TB_FORMAT`], which runners that
//! do not know the rule refuse ("use the same runner version") instead of playing it without;
//! a worker serves it only with its own tables (`runner worker --tb PATH`) covering the run's
//! piece count, else refuses it with the reason.

use crate::plan::run_plan::RunPlan;
use crate::play::game::GameSettings;
use crate::play::tablebase::Tables;

/// The submission format of a run with tablebase adjudication (others keep theirs).
pub const TB_FORMAT: u32 = 2;

/// The format a submission of `plan` is stored in: [`TB_FORMAT`] with a tablebase rule, else
/// `base`.
pub fn format_for(plan: &RunPlan, base: u32) -> u32 {
    if plan.adjudication.tablebase.is_some() { TB_FORMAT } else { base }
}

/// A run's game settings on this worker: with its tables when the run asks for tablebase
/// adjudication. `Err` is the refusal: no tables (`--tb`), or tables that do not cover the
/// run's pieces.
pub fn worker_settings(
    settings: GameSettings,
    tables: Option<&Tables>,
) -> Result<GameSettings, String> {
    let Some(rule) = settings.adjudication.tablebase else { return Ok(settings) };
    let Some(t) = tables else {
        return Err(format!(
            "needs Syzygy tables for {} pieces: start the worker with --tb PATH",
            rule.pieces
        ));
    };
    settings.with_tables(Some(t)).map_err(|e| {
        format!("needs Syzygy tables for {} pieces: this worker's: {e:#}", rule.pieces)
    })
}
