//! A run's games one page at a time, read from games.jsonl as a stream: reading starts at a
//! noted line before the page (a seek), the lines up to the page are skipped without being
//! parsed and reading stops after it, so a page of a 100,000-game run holds one page of
//! records and reads little more than it.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use anyhow::{Context, Result};

use crate::store::GameRecord;

/// Games on one page at the most.
pub const MAX_PAGE: usize = 500;

/// One page: the records (with their 0-based index among the records) and whether more follow.
pub struct Page {
    pub games: Vec<(usize, GameRecord)>,
    pub more: bool,
}

/// Records `offset..offset + limit` of games.jsonl at `path` (lines that are not records are
/// skipped and not counted; a line still being written is left out).
pub fn page(path: &Path, offset: usize, limit: usize) -> Result<Page> {
    page_from(path, (0, 0), offset, limit)
}

/// [`page`], reading from `start`: (the index of a line, its byte offset), a line at or before
/// `offset` (a [`super::tail::Tail`]'s mark), so the lines before it are not read at all.
pub fn page_from(path: &Path, start: (u64, u64), offset: usize, limit: usize) -> Result<Page> {
    let limit = limit.clamp(1, MAX_PAGE);
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let (first, at) = if start.0 as usize <= offset { start } else { (0, 0) };
    file.seek(SeekFrom::Start(at)).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut index = first as usize;
    let mut games = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Ok(Page { games, more: false });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if index < offset {
            // Counted as a record without parsing it: a page's index is a line's.
            index += 1;
            continue;
        }
        if games.len() == limit {
            return Ok(Page { games, more: true });
        }
        if let Ok(r) = serde_json::from_slice::<GameRecord>(&line) {
            games.push((index, r));
        }
        index += 1;
    }
}
