//! Runs of position probes, the tools' counterpart of a run of games (`runner calibrate`,
//! `runner searchtest`): the folder prepared, the jobs searched through the probe pool, and each
//! result kept as it arrives (one JSON line appended and flushed, so a stopped run keeps its
//! work), with the progress display and the folder's page kept current.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::play::cancel::Cancel;
use crate::play::probe_pool::{EngineSetup, Job, JobResult, PoolConfig, spawn_pool};
use crate::report::html::live::LivePage;
use crate::report::progress::Progress;

/// Prepares the tool's folder `out` and its `logs/`. A new run (`fresh`) refuses a folder of
/// the user's files (one that is not empty and holds no `plan.json`) before any engine starts.
pub fn prepare_folder(out: &Path, fresh: bool) -> Result<()> {
    if fresh {
        crate::store::dir::check_new_out(out, &|d| d.join("plan.json").is_file())?;
    }
    crate::store::files::create_dir_all(out)?;
    crate::store::files::create_subdir(out, Path::new("logs"))?;
    Ok(())
}

/// Where a probe run keeps its records and how it shows its progress.
pub struct ProbeOutput<'a> {
    /// The run's folder (its page is refreshed while the run goes).
    pub out: &'a Path,
    /// The JSONL file each record is appended to (opened to append: a resume continues it).
    pub records: &'a Path,
    /// Names the progress lines (e.g. "calibrate").
    pub label: &'static str,
    /// Positions in the whole run, and those done before (a resume).
    pub total: u64,
    pub already: u64,
    /// Faults among the records done before.
    pub faults: usize,
}

/// What a probe run left: its new records in arrival order, the faults (those before it
/// included), and what the caller finishes with once its files are written: the page (to
/// wait for) and the pool's own result (its error, if any, after the files).
pub struct Probed<R> {
    pub records: Vec<R>,
    pub faults: usize,
    pub page: LivePage,
    pub pool: Result<()>,
}

/// Searches `jobs` with the engines of `setups` and keeps each result: `record` turns it into
/// the record to store, with a message when it is a fault (shown, and counted). Stops early,
/// with the records so far, when `cancel` fires.
pub async fn probe<R: Serialize>(
    output: ProbeOutput<'_>,
    setups: Vec<EngineSetup>,
    jobs: Vec<Job>,
    cfg: PoolConfig,
    cancel: Cancel,
    mut record: impl FnMut(JobResult) -> (R, Option<String>),
) -> Result<Probed<R>> {
    let path = output.records;
    let mut file = crate::store::files::open_append(path)?;
    let mut page = LivePage::new(output.out.to_path_buf());
    let mut progress = Progress::positions(output.label, output.total, output.already);
    let (mut rx, handle) = spawn_pool(setups, jobs, cfg, cancel);
    let mut records = Vec::new();
    let mut faults = output.faults;
    while let Some(res) = rx.recv().await {
        let (rec, fault) = record(res);
        if let Some(message) = fault {
            faults += 1;
            progress.println(&message);
        }
        let mut line = serde_json::to_string(&rec)?;
        line.push('\n');
        file.write_all(line.as_bytes())
            .and_then(|_| file.flush())
            .with_context(|| format!("writing {}", path.display()))?;
        records.push(rec);
        progress.inc(&format!("{faults} faults"));
        page.refresh_due();
    }
    progress.finish();
    let pool = handle.await.with_context(|| format!("{} workers", output.label))?;
    Ok(Probed { records, faults, page, pool })
}
