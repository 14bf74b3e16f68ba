//! A worker's view of a submitted run: the submission read back, its engines resolved on this
//! machine (the run's own artifact when the submitter stored the binary, fetched into the
//! worker's cache, else among the engines it trusts: `identity::resolve_trusted`) and checked
//! against the submitted identities, the engine pools to play with, and the judge that tells it when to ask the
//! database for a decision.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::boxing::EngineBox;
use super::decide::RunJudge;
use super::identity::{base_names, check_same, identify_all, resolve_trusted};
use super::pair::RunSpec;
use super::queue::RunRow;
use super::submission::Submission;
use super::tablebase::worker_settings;
use super::worker::{Served, run_log_dir};
use crate::plan::engine_spec::EngineSpec;
use crate::plan::engines::EngineCatalog;
use crate::play::tablebase::Tables;
use crate::play::worker::EnginePool;

/// What a worker brings to every run it loads.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Engine logs go under this folder (`run-ID/`); none: discarded.
    pub log_dir: Option<PathBuf>,
    /// Folders whose commands this worker runs as submitted (`--trust`).
    pub trust: Vec<PathBuf>,
    /// The engines file to read instead of configs/engines.toml (`--engines-file`).
    pub engines_file: Option<PathBuf>,
    /// This worker's Syzygy tables (`--tb`), for the runs that adjudicate by them.
    pub tables: Option<Tables>,
    /// Whether the run's engines start in a box (`super::boxing`).
    pub boxing: EngineBox,
}

/// Loads run `row` for this worker, with the files of the run's artifacts on this machine by
/// SHA-256 (`artifacts::fetch_run_artifacts`) and the binaries of its engines from source by
/// engine name (`source::load::build_run_engines`, which checked their bench); `Err` is the one
/// line saying why this worker refuses it.
pub fn load_run(
    row: &RunRow,
    opts: &LoadOptions,
    artifacts: &HashMap<String, PathBuf>,
    built: &HashMap<String, PathBuf>,
) -> Result<Served, String> {
    let sub = Submission::from_stored(&row.submission).map_err(|e| format!("{e:#}"))?;
    let settings = worker_settings(sub.game_settings(), opts.tables.as_ref())?;
    let catalog = EngineCatalog::load(opts.engines_file.as_deref())
        .map_err(|e| format!("cannot read this worker's engines: {e:#}"))?;
    let mut plan = sub.plan().clone();
    plan.engines = plan
        .engines
        .iter()
        .map(|s| match sub.engines.iter().find(|i| i.name == s.name) {
            Some(id) if id.source.is_some() => match built.get(&s.name) {
                Some(file) => {
                    opts.boxing.allow_submitted(&s.name)?;
                    Ok(from_artifact(s, file))
                }
                None => Err(format!("engine {}: built from source, not built here", s.name)),
            },
            Some(id) if artifacts.contains_key(&id.sha256) => {
                opts.boxing.allow_submitted(&s.name)?;
                Ok(from_artifact(s, &artifacts[&id.sha256]))
            }
            _ => {
                // A command under --trust is a submitted one; the catalog's are the worker's.
                if !base_names(&s.name).iter().any(|n| catalog.get(n).is_some()) {
                    opts.boxing.allow_submitted(&s.name)?;
                }
                resolve_trusted(s, &catalog, &opts.trust)
            }
        })
        .collect::<Result<_, _>>()?;
    let local = identify_all(&plan.engines).map_err(|e| format!("{e:#}"))?;
    check_same(&sub.engines, &local)?;
    let mut start = sub.start_options();
    start.sandbox = opts.boxing.sandbox();
    start.log_dir = opts.log_dir.as_deref().map(|d| run_log_dir(d, row.id));
    if let Some(d) = &start.log_dir {
        make_log_dir(d)?;
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
    };
    let spec = RunSpec {
        id: row.id,
        // Records carry the submitted plan's hash, as a local run of that plan stamps them.
        plan_hash: sub.plan().merge_hash(),
        settings,
        openings: sub.openings.clone(),
        plan,
        pools,
        tuned,
    };
    Ok(Served { spec: Arc::new(spec), judge, fault_limit: sub.settings.fault_limit })
}

/// `spec` started from the artifact's file: an approved run's binary, run with its submitted
/// arguments and options; its working folder only if this machine has it.
fn from_artifact(spec: &EngineSpec, file: &Path) -> EngineSpec {
    let mut s = spec.clone();
    s.cmd = file.display().to_string();
    s.dir = s.dir.filter(|d| d.is_dir());
    s
}

/// The run's log folder, made now so that a name the file system refuses is a refusal of the
/// run here rather than a failure of every game.
fn make_log_dir(d: &Path) -> Result<(), String> {
    crate::store::files::create_dir_all(d)
        .map_err(|e| format!("cannot make the log folder {}: {e}", d.display()))?;
    Ok(())
}
