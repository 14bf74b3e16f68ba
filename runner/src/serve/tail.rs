//! A run folder's games.jsonl read as it grows: each call reads only the bytes appended since
//! the last one (a cheap `stat` when nothing changed) and adds the new records to a
//! [`Digest`] (per-pairing tallies, the trace, terminations, time use, faults: what the run's
//! page is made of), so the list, the live counts and the run page never re-read a whole file
//! and never hold its games. It also notes the byte offset of every [`MARK_EVERY`]-th line, so
//! a page of games far into the file starts with a seek. A file that shrank (rewritten by
//! `--resume`) is read again from its start.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::GameKey;
use crate::report::html::digest::Digest;
use crate::store::GameRecord;

/// A line offset is noted every this many lines.
pub const MARK_EVERY: u64 = 256;

/// The counts of one games.jsonl so far.
pub struct Tail {
    /// Bytes read: the start of the first line not yet complete.
    offset: u64,
    /// The file's length and modification time at the last read.
    seen: Option<(u64, std::time::SystemTime)>,
    keys: HashSet<GameKey>,
    /// What the page shows of the games read (a fresh one is cloned from `empty`).
    pub digest: Digest,
    empty: Digest,
    /// Records counted (repeats and lines that are not records are not).
    pub games: u64,
    /// Lines that were not game records.
    pub skipped: u64,
    /// Non-blank complete lines read (the games page's numbering).
    pub lines: u64,
    /// The byte offset of line `k * MARK_EVERY`, for each k.
    pub marks: Vec<u64>,
}

impl Tail {
    /// A tail for a run with pairings `labels`, its SPRT and plan.
    pub fn new(labels: Vec<String>, sprt: Option<stats::SprtSpec>, plan: Option<RunPlan>) -> Tail {
        let empty = Digest::new(labels, sprt, plan, None);
        Tail {
            offset: 0,
            seen: None,
            keys: HashSet::new(),
            digest: empty.clone(),
            empty,
            games: 0,
            skipped: 0,
            lines: 0,
            marks: Vec::new(),
        }
    }

    /// Where to start reading line `index`: the nearest noted line at or before it and its
    /// byte offset.
    pub fn mark_before(&self, index: u64) -> (u64, u64) {
        let k = ((index / MARK_EVERY) as usize).min(self.marks.len().saturating_sub(1));
        match self.marks.get(k) {
            Some(&at) => (k as u64 * MARK_EVERY, at),
            None => (0, 0),
        }
    }

    /// Reads what was appended to `path` since the last call; true when something was counted.
    /// A missing file counts nothing.
    pub fn update(&mut self, path: &Path) -> Result<bool> {
        let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(false) };
        if !meta.is_file() {
            return Ok(false);
        }
        let stamp = (meta.len(), meta.modified().unwrap_or(std::time::UNIX_EPOCH));
        if self.seen == Some(stamp) {
            return Ok(false);
        }
        if meta.len() < self.offset {
            let empty = self.empty.clone();
            *self = Tail { digest: empty.clone(), empty, ..Tail::new(Vec::new(), None, None) };
        }
        let mut file =
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        file.seek(SeekFrom::Start(self.offset))
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let before = self.games;
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 || line.last() != Some(&b'\n') {
                // End of file, or a line still being written: read again next time.
                break;
            }
            let start = self.offset;
            self.offset += n as u64;
            if !line.iter().all(u8::is_ascii_whitespace) {
                if self.lines.is_multiple_of(MARK_EVERY) {
                    self.marks.push(start);
                }
                self.lines += 1;
            }
            self.add_line(&line);
        }
        self.seen = Some(stamp);
        Ok(self.games > before)
    }

    fn add_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match serde_json::from_slice::<GameRecord>(line) {
            Ok(r) if self.keys.insert(r.key()) => {
                self.digest.add(&r);
                self.games += 1;
            }
            Ok(_) => self.digest.skip(format!("games.jsonl line {}: a repeated game", self.lines)),
            Err(e) => {
                self.skipped += 1;
                self.digest
                    .skip(format!("games.jsonl line {}: not a game record ({e})", self.lines));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_only_complete_appended_lines() {
        let dir = std::env::temp_dir().join(format!("serve-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.jsonl");
        let mut tail = Tail::new(vec!["A vs B".into()], None, None);
        assert!(!tail.update(&path).unwrap(), "a missing file counts nothing");
        std::fs::write(&path, "not a record\n{\"seq\":").unwrap();
        assert!(!tail.update(&path).unwrap());
        assert_eq!((tail.games, tail.skipped), (0, 1));
        // The cut line, once complete, is read from its start.
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"1}\n").unwrap();
        tail.update(&path).unwrap();
        assert_eq!(tail.skipped, 2, "the completed line is read whole (and is not a record)");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
