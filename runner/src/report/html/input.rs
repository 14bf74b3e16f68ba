//! Reading a run folder for its page, leniently: a file that is missing or malformed gives a
//! note ("n/a" and the reason) instead of an error, and a games.jsonl line that is not a game
//! record is skipped and counted. Only regular files are read, each up to its cap
//! ([`crate::store::files`]): a FIFO, a device, a symbolic link or an oversized file is a note
//! naming it, never a hang. Nothing here writes.

use std::collections::HashMap;
use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::plan::run_plan::{RunKind, RunPlan};
use crate::store::dir::LOCK_FILE;
use crate::store::files::{cap_for, read_regular};
use crate::store::formats::{
    CalibrateSummary, SWEEP_FILE, SearchtestSummary, SweepPlan, SweepSummary,
};
use crate::store::{GameRecord, RunFile, RunSummary};

/// What kind of folder this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Match,
    Gauntlet,
    Sweep,
    Calibrate,
    Searchtest,
    Unknown,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Match => "match",
            Kind::Gauntlet => "gauntlet",
            Kind::Sweep => "sweep",
            Kind::Calibrate => "calibrate",
            Kind::Searchtest => "searchtest",
            Kind::Unknown => "results",
        }
    }
}

/// Everything the page is made from.
pub struct RunFiles {
    pub dir: PathBuf,
    pub kind: Kind,
    /// run.json (`plan` inside), sweep.json, summary.json.
    pub run: Option<RunFile>,
    pub sweep: Option<SweepPlan>,
    pub summary: Option<SummaryFile>,
    /// games.jsonl records in file order, and the lines skipped with their reasons.
    pub records: Vec<GameRecord>,
    pub skipped: Vec<String>,
    /// PGN text per (pairing label, round "P.G") from games.pgn.
    pub pgn: HashMap<(String, String), String>,
    pub table_md: Option<String>,
    /// SVG files beside run.json (name, text), by name.
    pub svgs: Vec<(String, String)>,
    /// Files and folders beside the page, by name (folders end in '/').
    pub files: Vec<String>,
    /// Notes about files that could not be read.
    pub notes: Vec<String>,
}

/// The text of `dir/name` (a regular file under its cap), or `None` with a note when it cannot
/// be read; a missing file is `None` without one.
fn text_of(dir: &Path, name: &str, notes: &mut Vec<String>) -> Option<String> {
    match read_regular(&dir.join(name), cap_for(name)) {
        Ok(b) => b.map(|b| String::from_utf8_lossy(&b).into_owned()),
        Err(e) => {
            notes.push(format!("{name}: {e}"));
            None
        }
    }
}

/// summary.json, read as the type the folder's kind of run writes.
#[derive(Clone, Debug)]
pub enum SummaryFile {
    /// A match, tournament, tune, merged or pulled run.
    Run(RunSummary),
    Sweep(Box<SweepSummary>),
    Calibrate(CalibrateSummary),
    Searchtest(SearchtestSummary),
}

impl SummaryFile {
    /// The runner's keys (a run's or a sweep's summary).
    pub fn run(&self) -> Option<&RunSummary> {
        match self {
            SummaryFile::Run(r) => Some(r),
            SummaryFile::Sweep(s) => Some(&s.run),
            _ => None,
        }
    }

    /// Whether a tool stopped before every position was searched.
    pub fn partial(&self) -> Option<bool> {
        match self {
            SummaryFile::Calibrate(c) => Some(c.partial),
            SummaryFile::Searchtest(s) => Some(s.partial),
            _ => None,
        }
    }
}

/// `value` as a `T`, or `None` with a note naming the file.
fn typed<T: DeserializeOwned>(name: &str, value: Value, notes: &mut Vec<String>) -> Option<T> {
    match serde_json::from_value(value) {
        Ok(t) => Some(t),
        Err(e) => {
            notes.push(format!("{name}: not as the runner writes it ({e})"));
            None
        }
    }
}

/// Reads the folder `dir`.
pub fn read(dir: &Path) -> RunFiles {
    read_with(dir, true, true)
}

/// Reads the folder `dir` for a page whose games' figures come from elsewhere (a server's
/// [`super::digest::Digest`]): everything but games.jsonl and games.pgn.
pub fn read_page(dir: &Path) -> RunFiles {
    read_with(dir, false, true)
}

/// Reads the folder `dir` without its games (games.jsonl, games.pgn) and plots: the plan, the
/// summary and the file list, what a list of runs needs (its counts come from elsewhere).
pub fn read_meta(dir: &Path) -> RunFiles {
    read_with(dir, false, false)
}

fn read_with(dir: &Path, games: bool, plots: bool) -> RunFiles {
    let mut notes = Vec::new();
    let json = |name: &str, notes: &mut Vec<String>| -> Option<Value> {
        let text = text_of(dir, name, notes)?;
        match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                notes.push(format!("{name}: not valid JSON ({e})"));
                None
            }
        }
    };
    let run_value = json("run.json", &mut notes);
    let sweep_value = json(SWEEP_FILE, &mut notes);
    let is_sweep = sweep_value.is_some();
    let sweep: Option<SweepPlan> = sweep_value.and_then(|v| typed(SWEEP_FILE, v, &mut notes));
    let summary_value = json("summary.json", &mut notes);
    let run: Option<RunFile> = run_value.and_then(|v| typed("run.json", v, &mut notes));
    let (records, skipped) = match games.then(|| text_of(dir, "games.jsonl", &mut notes)) {
        Some(Some(text)) => parse_games(&text),
        _ => (Vec::new(), Vec::new()),
    };
    let (kind, summary) = kind_and_summary(run.as_ref(), is_sweep, summary_value, &mut notes);
    let pgn = match games.then(|| text_of(dir, "games.pgn", &mut notes)) {
        Some(Some(t)) => split_pgn(&t),
        _ => HashMap::new(),
    };
    let table_md = text_of(dir, "table.md", &mut notes);
    let mut files: Vec<String> = Vec::new();
    let mut svgs = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "report.html" || name.ends_with(".tmp") || name == LOCK_FILE {
            continue;
        }
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if plots
            && !is_dir
            && name.ends_with(".svg")
            && let Some(text) = text_of(dir, &name, &mut notes)
        {
            svgs.push((name.clone(), text));
        }
        files.push(if is_dir { format!("{name}/") } else { name });
    }
    files.sort();
    svgs.sort();
    RunFiles {
        dir: dir.to_path_buf(),
        kind,
        run,
        sweep,
        summary,
        records,
        skipped,
        pgn,
        table_md,
        svgs,
        files,
        notes,
    }
}

impl RunFiles {
    /// The run's plan (run.json's `plan`), if any.
    pub fn plan(&self) -> Option<&RunPlan> {
        self.run.as_ref().map(|r| &r.plan)
    }

    /// The engine names of the plan, by index.
    pub fn engine_names(&self) -> Vec<String> {
        self.plan().map(|p| p.engines.iter().map(|e| e.name.clone()).collect()).unwrap_or_default()
    }

    /// The pairing labels of the plan (from the records when there is no plan).
    pub fn pairing_labels(&self) -> Vec<String> {
        if let Some(p) = self.plan() {
            return p.pairings.iter().map(|p| p.label.clone()).collect();
        }
        let mut labels: Vec<String> = Vec::new();
        for r in &self.records {
            if labels.len() <= r.pairing {
                labels.resize(r.pairing + 1, String::new());
            }
            labels[r.pairing] = r.label.clone();
        }
        labels
    }

    /// The SPRT of the plan, if any.
    pub fn sprt(&self) -> Option<stats::SprtSpec> {
        self.plan()?.sprt
    }

    /// summary.json's runner keys (`stopped_by`, `runner_overhead`, `warnings`, ...), if any.
    pub fn run_summary(&self) -> Option<&RunSummary> {
        self.summary.as_ref()?.run()
    }

    /// summary.json's `stopped_by` (none in a tool's summary, nor in one without it).
    pub fn stopped_by(&self) -> Option<&str> {
        Some(self.run_summary()?.stopped_by.as_str()).filter(|s| !s.is_empty())
    }
}

/// The kind of the folder and its summary.json read as that kind writes it: a sweep (it has
/// sweep.json), a run (run.json), else a calibration or a search test by the summary's shape.
fn kind_and_summary(
    run: Option<&RunFile>,
    sweep: bool,
    summary: Option<Value>,
    notes: &mut Vec<String>,
) -> (Kind, Option<SummaryFile>) {
    const NAME: &str = "summary.json";
    if sweep {
        let s = summary.and_then(|v| typed(NAME, v, notes));
        return (Kind::Sweep, s.map(|s| SummaryFile::Sweep(Box::new(s))));
    }
    if let Some(r) = run {
        let kind = match r.plan.kind {
            RunKind::Match => Kind::Match,
            RunKind::Sweep => Kind::Sweep,
            RunKind::Gauntlet | RunKind::RoundRobin | RunKind::Tune => Kind::Gauntlet,
        };
        return (kind, summary.and_then(|v| typed(NAME, v, notes)).map(SummaryFile::Run));
    }
    let Some(v) = summary else { return (Kind::Unknown, None) };
    if let Ok(c) = serde_json::from_value::<CalibrateSummary>(v.clone()) {
        return (Kind::Calibrate, Some(SummaryFile::Calibrate(c)));
    }
    match typed::<SearchtestSummary>(NAME, v, notes) {
        Some(s) => (Kind::Searchtest, Some(SummaryFile::Searchtest(s))),
        None => (Kind::Unknown, None),
    }
}

/// The game records of a games.jsonl's text, and one note per line skipped.
pub fn parse_games(text: &str) -> (Vec<GameRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<GameRecord>(line) {
            Ok(r) if seen.insert(r.key()) => records.push(r),
            Ok(_) => skipped.push(format!("games.jsonl line {}: a repeated game", i + 1)),
            Err(e) => skipped.push(format!("games.jsonl line {}: not a game record ({e})", i + 1)),
        }
    }
    (records, skipped)
}

/// games.pgn split into games, keyed by their `Pairing` and `Round` tags.
pub fn split_pgn(text: &str) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    let mut starts: Vec<usize> = text.match_indices("[Event ").map(|(i, _)| i).collect();
    starts.retain(|&i| i == 0 || text[..i].ends_with('\n'));
    for (k, &s) in starts.iter().enumerate() {
        let game = text[s..starts.get(k + 1).copied().unwrap_or(text.len())].trim_end();
        let tag = |name: &str| {
            let open = format!("[{name} \"");
            let at = game.find(&open)? + open.len();
            let end = game[at..].find("\"]")?;
            Some(game[at..at + end].to_string())
        };
        if let (Some(p), Some(r)) = (tag("Pairing"), tag("Round")) {
            out.insert((p, r), game.to_string());
        }
    }
    out
}

/// Whether the run is still going, and why the page says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Liveness {
    Running(String),
    Ended(String),
}

/// Live or ended, from the files: a runner holding run.lock's `flock` runs the folder unless the
/// summary.json it writes last is newer than games.jsonl and run.lock (the run's end); without a
/// runner, summary.json's `stopped_by` says how it ended, and no summary.json means the run is
/// starting (no run.lock: an older runner) or was killed (an unheld run.lock).
pub fn liveness(files: &RunFiles) -> Liveness {
    let dir = &files.dir;
    // Calibrate and searchtest write summary.json once, at their end.
    let tool_end = files.summary.as_ref().and_then(SummaryFile::partial).map(|partial| {
        if partial { "partial (not every position was searched)" } else { "complete" }.to_string()
    });
    // A sweep's live outputs write summary.json with `stopped_by: "running"`.
    let stopped = files.stopped_by().filter(|s| *s != "running").map(str::to_string).or(tool_end);
    let mtime = |n: &str| fs::metadata(dir.join(n)).and_then(|m| m.modified()).ok();
    let summary_last = match mtime("summary.json") {
        Some(s) => ["games.jsonl", LOCK_FILE].iter().all(|n| mtime(n).is_none_or(|t| t <= s)),
        None => false,
    };
    match (lock_state(&dir.join(LOCK_FILE)), stopped) {
        (Lock::Held, Some(s)) if summary_last => Liveness::Ended(s),
        (Lock::Held, _) => Liveness::Running("a runner holds run.lock".into()),
        (_, Some(s)) => Liveness::Ended(s),
        (Lock::Absent, None) => Liveness::Running("no summary.json yet".into()),
        (Lock::Free, None) => {
            Liveness::Ended("stopped without a summary.json (killed?); resume it to finish".into())
        }
    }
}

enum Lock {
    Held,
    Free,
    Absent,
}

fn lock_state(path: &Path) -> Lock {
    let Ok(f) = File::open(path) else { return Lock::Absent };
    match f.try_lock_shared() {
        Ok(()) => Lock::Free,
        Err(TryLockError::WouldBlock) => Lock::Held,
        Err(TryLockError::Error(_)) => Lock::Free,
    }
}
