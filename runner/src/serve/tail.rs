//! A run folder's games.jsonl read as it grows: each call reads only the bytes appended since
//! the last one (a cheap `stat` when nothing changed) and adds the new records to per-pairing
//! tallies, so a list of runs and its live counts never re-read a whole file and never hold
//! its games. A file that shrank (rewritten by `--resume`) is read again from its start.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::schedule::GameKey;
use crate::report::summary::PairingTally;
use crate::store::GameRecord;

/// The counts of one games.jsonl so far.
#[derive(Default)]
pub struct Tail {
    /// Bytes read: the start of the first line not yet complete.
    offset: u64,
    /// The file's length and modification time at the last read.
    seen: Option<(u64, std::time::SystemTime)>,
    keys: HashSet<GameKey>,
    /// One tally per pairing index seen (a plan's pairings are added up front).
    pub tallies: Vec<PairingTally>,
    /// Records counted (repeats and lines that are not records are not).
    pub games: u64,
    /// Lines that were not game records.
    pub skipped: u64,
}

impl Tail {
    /// A tail with `pairings` empty tallies.
    pub fn new(pairings: usize) -> Tail {
        Tail { tallies: vec![PairingTally::default(); pairings], ..Tail::default() }
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
            let pairings = self.tallies.len();
            *self = Tail::new(pairings);
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
            self.offset += n as u64;
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
                if self.tallies.len() <= r.pairing {
                    self.tallies.resize(r.pairing + 1, PairingTally::default());
                }
                self.tallies[r.pairing].add(&r);
                self.games += 1;
            }
            Ok(_) => {}
            Err(_) => self.skipped += 1,
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
        let mut tail = Tail::new(1);
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
