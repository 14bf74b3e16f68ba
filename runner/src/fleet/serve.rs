//! A worker's view of a submitted run: the submission read back, its engines resolved on this
//! machine (`identity::resolve_on_worker`) and checked against the submitted identities, the
//! engine pools to play with, and the judge its reports use.

use std::path::Path;
use std::sync::Arc;

use super::decide::RunJudge;
use super::identity::{check_same, identify_all, resolve_on_worker};
use super::pair::RunSpec;
use super::queue::RunRow;
use super::submission::{SUBMISSION_FORMAT, Submission};
use super::worker::Served;
use crate::play::worker::EnginePool;

/// Loads run `row` for this worker, engine logs under `log_dir` (none: discarded); `Err` is the
/// one line saying why this worker refuses the run.
pub fn load_run(row: &RunRow, log_dir: Option<&Path>) -> Result<Served, String> {
    let sub: Submission = serde_json::from_value(row.submission.clone()).map_err(|e| {
        format!("its submission does not parse ({e}): submitted by another runner version?")
    })?;
    if sub.format != SUBMISSION_FORMAT {
        return Err(format!(
            "its submission has format {}, this runner reads {SUBMISSION_FORMAT}",
            sub.format
        ));
    }
    let mut plan = sub.plan().clone();
    plan.engines = plan.engines.iter().map(resolve_on_worker).collect();
    let local = identify_all(&plan.engines).map_err(|e| format!("{e:#}"))?;
    check_same(&sub.engines, &local)?;
    let mut start = sub.start_options();
    start.log_dir = log_dir.map(|d| d.join(format!("run-{}", row.id)));
    if let Some(d) = &start.log_dir {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot make {}: {e}", d.display()))?;
    }
    let pools =
        plan.engines.iter().map(|s| Arc::new(EnginePool::new(s.clone(), start.clone()))).collect();
    let spsa = sub.spsa();
    let tuned = spsa
        .as_ref()
        .map(|s| (s.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>(), s.integer.clone()));
    let judge = RunJudge {
        sprt: plan.sprt,
        race: sub.race(),
        labels: plan.pairings.iter().map(|p| p.label.clone()).collect(),
        spsa: spsa.clone(),
    };
    let spec = RunSpec {
        id: row.id,
        // Records carry the submitted plan's hash, as a local run of that plan stamps them.
        plan_hash: sub.plan().merge_hash(),
        settings: sub.game_settings(),
        openings: sub.openings.clone(),
        plan,
        pools,
        tuned,
    };
    Ok(Served { spec: Arc::new(spec), judge, spsa })
}
