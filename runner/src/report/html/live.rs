//! The page of a run that is still going: rewritten in a thread of its own so that the run's
//! loop (and the games' clocks) never wait for it, at most one rewrite at a time, and once more
//! when the run has ended.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::write_report;

/// A run folder's page, refreshed in the background while the run goes.
pub struct LivePage {
    dir: PathBuf,
    busy: Arc<AtomicBool>,
    last: Option<Instant>,
}

/// Shortest time between two rewrites through [`LivePage::refresh_due`].
pub const PAGE_EVERY: Duration = Duration::from_secs(5);

impl LivePage {
    pub fn new(dir: PathBuf) -> LivePage {
        LivePage { dir, busy: Arc::new(AtomicBool::new(false)), last: None }
    }

    /// [`LivePage::refresh`] at most every [`PAGE_EVERY`] (for loops without a rhythm of their
    /// own, such as the tools' positions).
    pub fn refresh_due(&mut self) {
        if self.last.is_none_or(|t| t.elapsed() >= PAGE_EVERY) {
            self.last = Some(Instant::now());
            self.refresh();
        }
    }

    /// Starts a rewrite unless one is still going. A failure here is not reported: the rewrite
    /// at the end ([`LivePage::finish`]) reports it.
    pub fn refresh(&self) {
        if self.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        let (dir, busy) = (self.dir.clone(), self.busy.clone());
        let spawned = std::thread::Builder::new().name("report-page".into()).spawn(move || {
            let _ = write_report(&dir);
            busy.store(false, Ordering::Release);
        });
        if spawned.is_err() {
            self.busy.store(false, Ordering::Release);
        }
    }

    /// The final page, written after the run's last files: waits (up to a minute) for a
    /// background rewrite to finish so that the last word is this one.
    pub fn finish(&self) -> Result<PathBuf> {
        self.wait();
        write_report(&self.dir)
    }

    /// Waits (up to a minute) until no background rewrite is going, so that a page written next
    /// (by this or another `LivePage` of the folder) is not overwritten by an older one.
    pub fn wait(&self) {
        let start = Instant::now();
        while self.busy.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// [`LivePage::finish`], saying where the page is; a failure is a warning (the games and
    /// tables are kept; `runner report DIR --html` tries again).
    pub fn finish_or_warn(&self) {
        if let Some(line) = self.finish_line() {
            outln!("{line}");
        }
    }

    /// [`LivePage::finish`]: the line that says where the page is, for the caller to print
    /// where its own lines go (a match with `--output cutechess` keeps stdout for those lines);
    /// a failure is a warning on stderr and no line.
    pub fn finish_line(&self) -> Option<String> {
        match self.finish() {
            Ok(path) => Some(format!("page: {}", path.display())),
            Err(e) => {
                errln!("warning: no report.html: {e:#}");
                None
            }
        }
    }
}
