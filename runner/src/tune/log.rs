//! `tune.jsonl`: the run's SPSA settings on the first line, then one line per iteration as it
//! starts (theta, Delta, the values both sides play, c_k, a_k), appended and synced before the
//! iteration's first game. With games.jsonl it gives back theta after any interruption
//! ([`super::spsa::Spsa::replay`]); a last line cut short by a kill is dropped.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::spsa::{Iteration, Spsa};

pub const LOG_FILE: &str = "tune.jsonl";

use crate::store::formats::TuneLogLine as Line;

/// The open log of a run.
pub struct TuneLog {
    path: PathBuf,
    file: File,
}

/// What a log holds: the settings and every started iteration.
pub struct Logged {
    pub spsa: Spsa,
    pub started: BTreeMap<u64, Iteration>,
}

impl TuneLog {
    /// A new log in `dir` (any earlier one replaced) holding `spsa`.
    pub fn create(dir: &Path, spsa: &Spsa) -> Result<TuneLog> {
        let path = dir.join(LOG_FILE);
        let file = crate::store::files::create_file(&path)?;
        let mut log = TuneLog { path, file };
        log.write(&Line::Plan(spsa.clone()))?;
        Ok(log)
    }

    /// Reopens the log of `dir` for the same settings, returning the iterations started.
    pub fn resume(dir: &Path, spsa: &Spsa) -> Result<(TuneLog, BTreeMap<u64, Iteration>)> {
        let path = dir.join(LOG_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "cannot resume {}: it holds no {LOG_FILE} (is it a match or a sweep?)",
                dir.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        // A line cut short by a kill: dropped from the file.
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let logged = parse(&bytes[..whole]).with_context(|| path.display().to_string())?;
        if &logged.spsa != spsa {
            bail!(
                "cannot resume {}: the tuning differs from the stored one ({})",
                dir.display(),
                differences(&logged.spsa, spsa)
            );
        }
        let file = crate::store::files::open_existing(&path)?;
        file.set_len(whole as u64).with_context(|| format!("cannot repair {}", path.display()))?;
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        Ok((TuneLog { path, file }, logged.started))
    }

    /// Appends a started iteration and syncs it; returns it as it reads back, the values the
    /// run then uses (so that a replay after a kill computes exactly what the run computed).
    pub fn start(&mut self, it: &Iteration) -> Result<Iteration> {
        self.write(&Line::Start(it.clone()))?;
        as_logged(it)
    }

    fn write(&mut self, line: &Line) -> Result<()> {
        let mut text = serde_json::to_string(line)?;
        text.push('\n');
        let ctx = || format!("cannot write {}", self.path.display());
        self.file.write_all(text.as_bytes()).with_context(ctx)?;
        self.file.sync_data().with_context(ctx)
    }
}

/// `x` as it reads back from the log: JSON numbers are read back to the nearest double only up
/// to the last bit, so a run works with the logged values from the start.
pub fn as_logged<T: Serialize + serde::de::DeserializeOwned>(x: &T) -> Result<T> {
    Ok(serde_json::from_str(&serde_json::to_string(x)?)?)
}

/// Reads the log of `dir` without changing it (a last partial line is ignored).
pub fn read(dir: &Path) -> Result<Logged> {
    let path = dir.join(LOG_FILE);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    parse(&bytes[..whole]).with_context(|| path.display().to_string())
}

fn parse(bytes: &[u8]) -> Result<Logged> {
    let text = std::str::from_utf8(bytes).context("not UTF-8")?;
    let mut spsa = None;
    let mut started = BTreeMap::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line: Line =
            serde_json::from_str(l).with_context(|| format!("line {}: unreadable", i + 1))?;
        match (line, &spsa) {
            (Line::Plan(s), None) if i == 0 => spsa = Some(s),
            (Line::Start(it), Some(_)) => {
                started.insert(it.k, it);
            }
            _ => bail!("line {}: out of place", i + 1),
        }
    }
    let Some(spsa) = spsa else { bail!("no settings line") };
    Ok(Logged { spsa, started })
}

/// Names the settings that differ.
fn differences(old: &Spsa, new: &Spsa) -> String {
    let mut d = Vec::new();
    if old.params != new.params {
        d.push("--param changed".to_string());
    }
    if old.integer != new.integer {
        d.push("the engine's option types changed".into());
    }
    if old.iterations != new.iterations {
        d.push(format!("--games: stored {}, now {}", 2 * old.iterations, 2 * new.iterations));
    }
    if old.big_a != new.big_a {
        d.push(format!("--spsa-A: stored {}, now {}", old.big_a, new.big_a));
    }
    if old.seed != new.seed {
        d.push(format!("--seed: stored {}, now {}", old.seed, new.seed));
    }
    if d.is_empty() { "settings changed".into() } else { d.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_read_back_and_repaired() {
        let dir = std::env::temp_dir().join(format!("tune-log-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let spsa = Spsa {
            params: super::super::params::parse_params(&["X,80,0,100,10,0.002".into()]).unwrap(),
            integer: vec![true],
            iterations: 10,
            big_a: 1.0,
            seed: 3,
        };
        let mut log = TuneLog::create(&dir, &spsa).unwrap();
        let it0 = log.start(&spsa.begin(0, &[80.0])).unwrap();
        drop(log);
        // A kill in the middle of the next line.
        let mut f = File::options().append(true).open(dir.join(LOG_FILE)).unwrap();
        f.write_all(b"{\"start\":{\"k\":1,").unwrap();
        drop(f);
        let (mut log, started) = TuneLog::resume(&dir, &spsa).unwrap();
        assert_eq!(started.into_values().collect::<Vec<_>>(), std::slice::from_ref(&it0));
        let it1 = log.start(&spsa.begin(1, &[81.0])).unwrap();
        let back = read(&dir).unwrap();
        assert_eq!(back.spsa, spsa);
        assert_eq!(back.started.into_values().collect::<Vec<_>>(), [it0, it1]);
        let other = Spsa { seed: 4, ..spsa.clone() };
        let e = TuneLog::resume(&dir, &other).err().unwrap().to_string();
        assert!(e.contains("--seed: stored 3, now 4"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
