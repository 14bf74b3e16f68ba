//! The oracle's evaluations on disk: one JSON line per search, keyed by the oracle's identity
//! (its spec, limit, `id name` and the SHA-256 of its binary), the position (FEN) and the move
//! (`""` for a search of all moves). The file is appended to and shared by runs (default
//! `results/oracle-cache.jsonl`, `--oracle-cache FILE`); a line that does not parse (a write cut
//! short by a kill) is skipped and counted, and the next append starts on a new line.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex::hex;
use crate::play::uci_info::Eval;
use crate::searchtest::oracle_spec::{OracleSpec, find_on_path};
use crate::store::files;

/// The default cache file.
pub const DEFAULT_CACHE: &str = "results/oracle-cache.jsonl";

/// The cache's size limit when read (a larger file is an error naming it).
const CACHE_CAP: u64 = 4096 * 1024 * 1024;

/// One oracle search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheLine {
    pub oracle: String,
    pub fen: String,
    /// The only move searched (`searchmoves`), or "" for all moves.
    #[serde(rename = "move")]
    pub mv: String,
    pub score: Eval,
    /// The oracle's best move (for a one-move search: that move).
    pub bestmove: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

/// The evaluations of one oracle, loaded from the file, and the file to append new ones to.
pub struct OracleCache {
    path: PathBuf,
    oracle: String,
    map: HashMap<(String, String), CacheLine>,
    /// Lines of other oracles, and lines that did not parse.
    pub other_lines: usize,
    pub torn_lines: usize,
    needs_newline: bool,
    file: Option<File>,
}

impl OracleCache {
    /// Loads the lines of `oracle` from `path` (absent: an empty cache).
    pub fn open(path: &Path, oracle: &str) -> Result<OracleCache> {
        let text = files::read_regular(path, CACHE_CAP)?.unwrap_or_default();
        let mut cache = OracleCache {
            path: path.to_path_buf(),
            oracle: oracle.to_string(),
            map: HashMap::new(),
            other_lines: 0,
            torn_lines: 0,
            needs_newline: text.last().is_some_and(|&b| b != b'\n'),
            file: None,
        };
        for line in text.split(|&b| b == b'\n').filter(|l| !l.iter().all(u8::is_ascii_whitespace)) {
            match serde_json::from_slice::<CacheLine>(line) {
                Ok(l) if l.oracle == oracle => {
                    cache.map.insert((l.fen.clone(), l.mv.clone()), l);
                }
                Ok(_) => cache.other_lines += 1,
                Err(_) => cache.torn_lines += 1,
            }
        }
        Ok(cache)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Evaluations of this oracle in the cache.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, fen: &str, mv: &str) -> Option<&CacheLine> {
        self.map.get(&(fen.to_string(), mv.to_string()))
    }

    /// Records one search (in memory and appended to the file, flushed).
    pub fn put(&mut self, line: CacheLine) -> Result<()> {
        debug_assert_eq!(line.oracle, self.oracle);
        if self.file.is_none() {
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                files::create_dir_all(dir)?;
            }
            self.file = Some(files::open_append(&self.path)?);
        }
        let mut text = String::new();
        if std::mem::take(&mut self.needs_newline) {
            text.push('\n');
        }
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
        if let Some(f) = self.file.as_mut() {
            files::write_named(&self.path, f, text.as_bytes())?;
            f.flush().with_context(|| format!("writing {}", self.path.display()))?;
        }
        self.map.insert((line.fen.clone(), line.mv.clone()), line);
        Ok(())
    }
}

/// The oracle's identity: a hash of its command, arguments, options, limit, the `id name` it
/// answered and the SHA-256 of its binary (when it can be read), as 16 hex digits.
pub fn oracle_identity(spec: &OracleSpec, id_name: Option<&str>) -> String {
    let binary = binary_sha256(&spec.engine.cmd, spec.engine.dir.as_deref())
        .unwrap_or_else(|| "unreadable".into());
    let key = serde_json::json!({
        "cmd": spec.engine.cmd,
        "args": spec.engine.args,
        "options": spec.engine.options,
        "limit": spec.limit,
        "id_name": id_name,
        "binary_sha256": binary,
    });
    let digest = Sha256::digest(key.to_string().as_bytes());
    hex(&digest[..8])
}

/// SHA-256 (hex) of the engine binary `cmd` (a path, relative to `dir` when given, or a name on
/// PATH).
pub fn binary_sha256(cmd: &str, dir: Option<&Path>) -> Option<String> {
    let p = Path::new(cmd);
    let path = if p.components().count() > 1 || p.is_absolute() {
        match dir {
            Some(d) if p.is_relative() => d.join(p),
            _ => p.to_path_buf(),
        }
    } else {
        find_on_path(cmd)?
    };
    let mut f = File::open(path).ok()?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Some(hex(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(oracle: &str, fen: &str, mv: &str, cp: i32) -> CacheLine {
        CacheLine {
            oracle: oracle.into(),
            fen: fen.into(),
            mv: mv.into(),
            score: Eval::Cp(cp),
            bestmove: "e2e4".into(),
            depth: Some(8),
        }
    }

    #[test]
    fn cache_survives_a_torn_last_line_and_keeps_oracles_apart() {
        let dir = std::env::temp_dir().join(format!("oracle-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("cache.jsonl");
        let mut c = OracleCache::open(&path, "A").unwrap();
        assert!(c.is_empty());
        c.put(line("A", "f1", "", 30)).unwrap();
        c.put(line("A", "f1", "d2d4", 10)).unwrap();
        drop(c);
        // Another oracle's line, then a write cut short.
        let mut f = files::open_append(&path).unwrap();
        let other = serde_json::to_string(&line("B", "f1", "", 99)).unwrap();
        write!(f, "{other}\n{{\"oracle\":\"A\",\"fen\":\"f2\",\"mo").unwrap();
        drop(f);
        let mut c = OracleCache::open(&path, "A").unwrap();
        assert_eq!((c.len(), c.other_lines, c.torn_lines), (2, 1, 1));
        assert_eq!(c.get("f1", "d2d4").unwrap().score, Eval::Cp(10));
        assert!(c.get("f1", "e2e4").is_none());
        c.put(line("A", "f2", "", 5)).unwrap();
        let c = OracleCache::open(&path, "A").unwrap();
        assert_eq!((c.len(), c.torn_lines), (3, 1), "the append after a torn line is readable");
        std::fs::remove_dir_all(&dir).ok();
    }
}
