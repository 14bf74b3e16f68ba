//! The local source: the run folders directly under `--results`, each read as `runner report`
//! reads it (its plan, summary and liveness) with its games counted by a [`Tail`] kept per
//! folder, so a request costs a `stat` of games.jsonl plus the lines appended since the last.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::report::html::input::{self, Liveness, RunFiles};

use super::tail::Tail;
use super::view::{PairingView, RunView, State};

/// The run folders under one results folder.
pub struct Local {
    root: PathBuf,
    tails: Mutex<HashMap<String, Tail>>,
}

impl Local {
    pub fn new(root: PathBuf) -> Local {
        Local { root, tails: Mutex::new(HashMap::new()) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of run `name`: a plain name (no separator, not hidden) of a directory right
    /// under the results folder, not a symbolic link. Anything else is `None`.
    pub fn folder(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\', '\0']) {
            return None;
        }
        let dir = self.root.join(name);
        let meta = std::fs::symlink_metadata(&dir).ok()?;
        meta.is_dir().then_some(dir)
    }

    /// Every run folder (one with run.json or summary.json), newest name first.
    pub fn list(&self) -> Vec<RunView> {
        let mut names: Vec<String> = std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| self.folder(n).is_some())
            .collect();
        names.sort_by(|a, b| b.cmp(a));
        names.iter().filter_map(|n| self.run(n)).collect()
    }

    /// Run `name`'s row, if it is a run folder.
    pub fn run(&self, name: &str) -> Option<RunView> {
        let dir = self.folder(name)?;
        if !dir.join("run.json").is_file() && !dir.join("summary.json").is_file() {
            return None;
        }
        let files = input::read_meta(&dir);
        let live = input::liveness(&files);
        Some(self.view(name, &dir, &files, &live))
    }

    fn view(&self, name: &str, dir: &Path, files: &RunFiles, live: &Liveness) -> RunView {
        let labels = files.pairing_labels();
        let sprt = files.sprt();
        let (games, pairings) = {
            let mut tails = self.tails.lock().unwrap_or_else(|p| p.into_inner());
            let tail = tails.entry(name.to_string()).or_insert_with(|| Tail::new(labels.len()));
            // A games.jsonl that cannot be read counts what was read before.
            let _ = tail.update(&dir.join("games.jsonl"));
            let pairings = tail
                .tallies
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let label = labels.get(i).cloned().unwrap_or_else(|| format!("pairing {i}"));
                    PairingView::from_tally(label, t, sprt)
                })
                .collect();
            (tail.games, pairings)
        };
        let (state, state_note) = match live {
            Liveness::Running(why) => (State::Active, why.clone()),
            Liveness::Ended(why) => (State::Finished, why.clone()),
        };
        let limits = files.plan().map(|p| {
            let mut s = p.tc.to_string();
            if let Some(n) = p.nodes {
                s.push_str(&format!(", {n} nodes"));
            }
            if let Some(d) = p.depth {
                s.push_str(&format!(", depth {d}"));
            }
            s
        });
        RunView {
            id: name.to_string(),
            source: "local",
            kind: files.kind.name().to_string(),
            state,
            state_note,
            engines: files.engine_names(),
            limits: limits.unwrap_or_default(),
            games,
            pairings,
            owner: None,
            priority: None,
            workers: None,
            submitted: None,
        }
    }

    /// The path of `name`'s file `file` (games.jsonl, games.pgn) when it is a regular file.
    pub fn file(&self, name: &str, file: &str) -> Option<PathBuf> {
        let path = self.folder(name)?.join(file);
        std::fs::symlink_metadata(&path).ok()?.is_file().then_some(path)
    }
}
