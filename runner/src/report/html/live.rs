//! The page of a run that is still going: rewritten in a thread of its own so that the run's
//! loop (and the games' clocks) never wait for it, at most one rewrite at a time, and once more
//! when the run has ended.
//!
//! A rewrite reads the whole folder (games.jsonl, games.pgn) and so costs more as the run grows
//! (about 1.2 s of one core at 4,300 games of 50,000 nodes). Rewrites are therefore paced by
//! their own cost: after one that took `d`, the next starts no sooner than [`PACE`] times `d`
//! later, so the page never takes more than about a tenth of one core from the engines, however
//! long the run; on a long run the page lags the games by that much.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::write_report;

/// A run folder's page, refreshed in the background while the run goes.
pub struct LivePage {
    dir: PathBuf,
    busy: Arc<AtomicBool>,
    last: Option<Instant>,
    /// No background rewrite starts before this instant (set when one ends, from its cost).
    not_before: Arc<Mutex<Option<Instant>>>,
}

/// After a background rewrite that took `d`, the next waits `PACE * d` from its end: the page's
/// share of one core stays at or below 1 / (1 + PACE).
pub const PACE: u32 = 9;

/// Shortest time between two rewrites through [`LivePage::refresh_due`].
pub const PAGE_EVERY: Duration = Duration::from_secs(5);

impl LivePage {
    pub fn new(dir: PathBuf) -> LivePage {
        LivePage {
            dir,
            busy: Arc::new(AtomicBool::new(false)),
            last: None,
            not_before: Arc::new(Mutex::new(None)),
        }
    }

    /// [`LivePage::refresh`] at most every [`PAGE_EVERY`] (for loops without a rhythm of their
    /// own, such as the tools' positions).
    pub fn refresh_due(&mut self) {
        if self.last.is_none_or(|t| t.elapsed() >= PAGE_EVERY) {
            self.last = Some(Instant::now());
            self.refresh();
        }
    }

    /// Starts a rewrite unless one is still going or the last one's pace ([`PACE`]) has not
    /// elapsed. A failure here is not reported: the rewrite at the end ([`LivePage::finish`])
    /// reports it.
    pub fn refresh(&self) {
        if self.paced(Instant::now()) || self.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        let (dir, busy, not_before) =
            (self.dir.clone(), self.busy.clone(), self.not_before.clone());
        let spawned = std::thread::Builder::new().name("report-page".into()).spawn(move || {
            let start = Instant::now();
            let _ = write_report(&dir);
            let end = Instant::now();
            if let Ok(mut next) = not_before.lock() {
                *next = Some(end + (end - start) * PACE);
            }
            busy.store(false, Ordering::Release);
        });
        if spawned.is_err() {
            self.busy.store(false, Ordering::Release);
        }
    }

    /// Whether a background rewrite at `now` would come too soon after the last one.
    fn paced(&self, now: Instant) -> bool {
        self.not_before.lock().ok().and_then(|next| *next).is_some_and(|next| now < next)
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

#[cfg(test)]
mod tests {
    use super::super::{REPORT_FILE, tests::folder};
    use super::*;

    #[test]
    fn a_rewrite_paces_the_next_by_its_cost() {
        let tmp = folder("live-pace");
        let report = tmp.path().join(REPORT_FILE);
        let page = LivePage::new(tmp.path().to_path_buf());
        let before = Instant::now();
        assert!(!page.paced(before), "nothing written yet: nothing to wait for");
        page.refresh();
        page.wait();
        let next = page.not_before.lock().unwrap().expect("a rewrite sets its pace");
        assert!(next > before);
        assert!(report.is_file());
        // A rewrite that took d is followed by PACE * d of rest: at any instant inside it, a
        // refresh starts nothing; once it has passed, one may start again.
        *page.not_before.lock().unwrap() = Some(Instant::now() + Duration::from_secs(3600));
        std::fs::remove_file(&report).unwrap();
        page.refresh();
        page.wait();
        assert!(!report.exists(), "refresh inside the pace");
        *page.not_before.lock().unwrap() = Some(Instant::now());
        page.refresh();
        page.wait();
        assert!(report.is_file(), "refresh after the pace");
        // The final page is never paced.
        *page.not_before.lock().unwrap() = Some(Instant::now() + Duration::from_secs(3600));
        std::fs::remove_file(&report).unwrap();
        page.finish().unwrap();
        assert!(report.is_file());
    }
}
