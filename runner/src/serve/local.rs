//! The local source: the run folders directly under `--results`, each read as `runner report`
//! reads it (its plan, summary and liveness) with its games gathered by a [`Tail`] kept per
//! folder, so a request costs a `stat` of games.jsonl plus the lines appended since the last,
//! and a run's page is made from the tail's digest, not from the games read again. A page of
//! games seeks to the tail's nearest noted line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::report::html::digest::Digest;
use crate::report::html::input::{self, Liveness, RunFiles};

use super::games::{self, Page};
use super::tail::Tail;
use super::view::{PairingView, RunView, State};

/// Folders deep a linked file may be (a sweep's `points/NAME/summary.json`).
pub const MAX_DEPTH: usize = 3;

/// The kinds of file a run page links to that the server hands out, with the type each is
/// sent as (plain text for what a browser could otherwise run; the policy header of every
/// response applies to the SVG plots too).
pub const SERVED: [(&str, &str); 9] = [
    ("json", "application/json"),
    ("jsonl", "application/x-ndjson"),
    ("pgn", "application/vnd.chess-pgn; charset=utf-8"),
    ("svg", "image/svg+xml"),
    ("md", "text/plain; charset=utf-8"),
    ("csv", "text/csv; charset=utf-8"),
    ("txt", "text/plain; charset=utf-8"),
    ("log", "text/plain; charset=utf-8"),
    ("png", "image/png"),
];

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

    /// Runs `f` on run `name`'s tail brought up to date (made on first use).
    fn with_tail<T>(
        &self,
        name: &str,
        dir: &Path,
        files: &RunFiles,
        f: impl FnOnce(&Tail) -> T,
    ) -> T {
        let mut tails = self.tails.lock().unwrap_or_else(|p| p.into_inner());
        let tail = tails.entry(name.to_string()).or_insert_with(|| {
            Tail::new(files.pairing_labels(), files.sprt(), files.plan().cloned())
        });
        // A games.jsonl that cannot be read counts what was read before.
        let _ = tail.update(&dir.join("games.jsonl"));
        f(tail)
    }

    /// Run `name`'s page parts: its row, its files without the games, the digest of its games
    /// and its liveness.
    pub fn page(&self, name: &str) -> Option<(RunView, RunFiles, Digest, Liveness)> {
        let dir = self.folder(name)?;
        let files = input::read_page(&dir);
        let live = input::liveness(&files);
        let view = self.view(name, &dir, &files, &live);
        let digest = self.with_tail(name, &dir, &files, |t| t.digest.clone());
        Some((view, files, digest, live))
    }

    /// Games `offset..offset + limit` of run `name` (its lines in file order), read from the
    /// tail's nearest noted line on; and the lines counted so far.
    pub fn games(
        &self,
        name: &str,
        offset: usize,
        limit: usize,
    ) -> Option<anyhow::Result<(Page, u64)>> {
        let dir = self.folder(name)?;
        let files = input::read_meta(&dir);
        let (start, lines) =
            self.with_tail(name, &dir, &files, |t| (t.mark_before(offset as u64), t.lines));
        let path = dir.join("games.jsonl");
        if !path.is_file() {
            return Some(Ok((Page { games: Vec::new(), more: false }, 0)));
        }
        Some(games::page_from(&path, start, offset, limit).map(|p| (p, lines)))
    }

    fn view(&self, name: &str, dir: &Path, files: &RunFiles, live: &Liveness) -> RunView {
        let (games, pairings) = self.with_tail(name, dir, files, |tail| {
            let d = &tail.digest;
            let pairings: Vec<PairingView> = d
                .labels
                .iter()
                .zip(&d.tallies)
                .enumerate()
                .map(|(i, (l, t))| {
                    let label = if l.is_empty() { format!("pairing {i}") } else { l.clone() };
                    PairingView::from_tally(label, t, d.sprt())
                })
                .collect();
            (tail.games, pairings)
        });
        let (state, state_note) = match live {
            Liveness::Running(why) => (State::Running, why.clone()),
            Liveness::Ended(how) => {
                (State::ended(how, &super::view::verdicts(&pairings)), how.clone())
            }
        };
        let limits = files.plan().map(|p| p.limits_text());
        RunView {
            id: name.to_string(),
            source: "local",
            kind: files.kind.name().to_string(),
            state,
            state_note,
            engines: files.engine_names(),
            options: files
                .plan()
                .map(|p| super::view::differing_options(&p.engines))
                .unwrap_or_default(),
            limits: limits.unwrap_or_default(),
            games,
            games_planned: files.plan().map(super::view::planned_games),
            pairings,
            owner: None,
            priority: None,
            workers: None,
            submitted: None,
            ..RunView::default()
        }
    }

    /// The file at `rel` in run `name`'s folder, with its content type, when its page may link
    /// to it: `rel` is one to [`MAX_DEPTH`] plain names (no `.` or `..`, not hidden, no
    /// separator or NUL inside one; the router has decoded the URL, so an encoded `%2e%2e` or
    /// `%2f` arrives here as what it is), every folder on the way and the file itself is not
    /// a symbolic link, and the name ends in one of [`SERVED`]'s extensions. Nothing outside
    /// the run's folder can be named.
    pub fn listed_file(&self, name: &str, rel: &str) -> Option<(PathBuf, &'static str)> {
        let mut path = self.folder(name)?;
        let parts: Vec<&str> = rel.split('/').collect();
        if parts.is_empty() || parts.len() > MAX_DEPTH {
            return None;
        }
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() || part.starts_with('.') || part.contains(['\\', '\0', ':']) {
                return None;
            }
            path.push(part);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            let last = i + 1 == parts.len();
            if (last && !meta.is_file()) || (!last && !meta.is_dir()) {
                return None;
            }
        }
        let ext = parts.last()?.rsplit_once('.')?.1;
        SERVED.iter().find(|(e, _)| *e == ext).map(|(_, mime)| (path, *mime))
    }

    /// The path of `name`'s file `file` (games.jsonl, games.pgn) when it is a regular file.
    pub fn file(&self, name: &str, file: &str) -> Option<PathBuf> {
        let path = self.folder(name)?.join(file);
        std::fs::symlink_metadata(&path).ok()?.is_file().then_some(path)
    }
}
