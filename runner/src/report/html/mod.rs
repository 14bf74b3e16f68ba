//! A run's page: `report.html`, one self-contained file (inline CSS, SVG and a small script; no
//! network) made from the run folder's files alone — run.json, sweep.json, summary.json,
//! games.jsonl, games.pgn, table.md and the *.svg plots — so it can be written from a finished
//! folder (`runner report DIR --html`) or from a live run's loop at any moment.
//!
//! One file per section: [`plan`] (command and plan), [`results`] (verdict, score table, Elo and
//! pentanomial), [`trace`] (LLR or Elo against games), [`figures`] (the runner's plots, links),
//! [`games`] (terminations, faults, the games list), [`timing`] (time use); [`page`] is the
//! document around them, [`input`] reads the folder leniently, [`escape`] escapes, [`live`]
//! rewrites the page of a running run in the background.

pub mod data_url;
pub mod digest;
pub mod escape;
pub mod figures;
pub mod games;
pub mod input;
pub mod live;
pub mod markdown;
pub mod page;
pub mod plan;
pub mod results;
pub mod svg;
pub mod timing;
pub mod trace;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use self::digest::Digest;
use self::input::{Kind, Liveness, RunFiles};
use crate::store::write_atomic;

/// The page's file name inside the run folder.
pub const REPORT_FILE: &str = "report.html";

/// Writes `dir/report.html` (temporary file and rename) and returns its path. Whether the page
/// reloads itself comes from the folder ([`input::liveness`]): a runner holding run.lock that
/// has not yet written its final summary.json, or no summary.json at all, is a live run.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    write_report_noting(dir).map(|(path, _)| path)
}

/// [`write_report`], also returning the notes about files that could not be read (a FIFO, a
/// symbolic link, a file over its cap, invalid JSON), which the page shows too.
pub fn write_report_noting(dir: &Path) -> Result<(PathBuf, Vec<String>)> {
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let files = input::read(dir);
    let live = input::liveness(&files);
    let html = render(&files, &live);
    let path = dir.join(REPORT_FILE);
    write_atomic(&path, html.as_bytes())?;
    Ok((path, files.notes))
}

/// The page of `files`.
pub fn render(files: &RunFiles, live: &Liveness) -> String {
    render_as(files, live, None)
}

/// [`render`], or with `served` the page as a server sends it ([`page::document_as`]): its
/// games list is the server's paged one (linked from the banner), not the last games inline.
pub fn render_as(files: &RunFiles, live: &Liveness, served: Option<&page::Served>) -> String {
    render_digest(files, &Digest::of_files(files), live, served)
}

/// The page of `files` with its games' figures taken from `digest` rather than from
/// `files.records` (a server gathers the digest as it reads the games, and does not keep
/// them). The inline games list is `files.records`' (report.html only).
pub fn render_digest(
    files: &RunFiles,
    digest: &Digest,
    live: &Liveness,
    served: Option<&page::Served>,
) -> String {
    let rows = results::rows(digest);
    let base = served.map_or("", |s| s.files_base);
    let mut body = String::new();
    let running = matches!(live, Liveness::Running(_));
    if running && served.is_none() {
        body.push_str(&format!(
            "<p class=\"live\">Live: this page reloads every {} s while the run goes on.</p>",
            page::REFRESH_S
        ));
    }
    let mut nav: Vec<(&str, &str)> =
        vec![("verdict", "Verdict"), ("plan", "Plan"), ("table", "Table")];
    let live_id = served.and_then(|s| s.live_id);
    body.push_str(&results::verdict_section(files, &rows, live, live_id));
    body.push_str(&plan::section(files));
    body.push_str(&results::table_section(files, &rows));
    let games_kind = !matches!(files.kind, Kind::Calibrate | Kind::Searchtest);
    if games_kind {
        nav.extend([
            ("elo", "Elo"),
            ("trace", if files.sprt().is_some() { "LLR" } else { "Elo trace" }),
        ]);
        body.push_str(&results::elo_section(&rows));
        body.push_str(&trace::section(digest));
    }
    let figs = figures::section(files, base);
    if !figs.is_empty() {
        nav.push(("figures", "Plots"));
        body.push_str(&figs);
    }
    if games_kind {
        nav.extend([("terminations", "Terminations"), ("time", "Time"), ("faults", "Faults")]);
        body.push_str(&games::terminations_section(digest));
        body.push_str(&timing::section(files, digest));
        body.push_str(&games::faults_section(files, digest));
        if served.is_none() {
            nav.push(("games", "Games"));
            body.push_str(&games::list_section(files));
        }
    }
    nav.push(("files", "Files"));
    body.push_str(&figures::files_section(files, base));
    let name = files.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let title = format!("{} {name}", files.kind.name());
    page::document_as(&title, running, &nav, &body, served)
}

#[cfg(test)]
mod tests;
