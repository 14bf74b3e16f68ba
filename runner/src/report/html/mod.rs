//! A run's page: `report.html`, one self-contained file (inline CSS, SVG and a small script; no
//! network) made from the run folder's files alone — run.json, sweep.json, summary.json,
//! games.jsonl, games.pgn, table.md and the *.svg plots — so it can be written from a finished
//! folder (`runner report DIR --html`) or from a live run's loop at any moment.
//!
//! One file per section: [`plan`] (command and plan), [`results`] (verdict, score table, Elo and
//! pentanomial), [`trace`] (LLR or Elo against games), [`figures`] (the runner's plots, links),
//! [`games`] (terminations, faults, the games list), [`timing`] (time use); [`page`] is the
//! document around them, [`input`] reads the folder leniently, [`live`] rewrites the page of a
//! running run in the background. Every section is a maud template, so every value from the
//! folder is escaped by the template itself; [`charts`] draws the page's own figures with
//! plotters and [`markdown`] shows table.md through pulldown-cmark.

pub mod charts;
pub mod data_url;
pub mod digest;
pub mod figures;
pub mod games;
pub mod input;
pub mod live;
pub mod markdown;
pub mod page;
pub mod plan;
pub mod results;
pub mod text;
pub mod timing;
pub mod trace;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use maud::html;

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

/// The page of `files` (report.html).
pub fn render(files: &RunFiles, live: &Liveness) -> String {
    let page = render_page(files, &Digest::of_files(files), live, None);
    page::document(&page, None).into_string()
}

/// The page of `files` with its games' figures taken from `digest` rather than from
/// `files.records` (a server gathers the digest as it reads the games, and does not keep
/// them). With `served`, the page as a server shows it: its games list is the server's paged
/// one (linked from the banner), not the last games inline (report.html only).
pub fn render_page(
    files: &RunFiles,
    digest: &Digest,
    live: &Liveness,
    served: Option<&page::Served>,
) -> page::Page {
    let rows = results::rows(digest);
    let base = served.map_or("", |s| s.files_base);
    let running = matches!(live, Liveness::Running(_));
    let games_kind = !matches!(files.kind, Kind::Calibrate | Kind::Searchtest);
    let trace = if files.sprt().is_some() { "LLR" } else { "Elo trace" };
    let figures = figures::section(files, base);
    let mut nav: Vec<(&str, &str)> =
        vec![("verdict", "Verdict"), ("plan", "Plan"), ("table", "Table")];
    if games_kind {
        nav.extend([("elo", "Elo"), ("trace", trace)]);
    }
    if figures.is_some() {
        nav.push(("figures", "Plots"));
    }
    if games_kind {
        nav.extend([("terminations", "Terminations"), ("time", "Time"), ("faults", "Faults")]);
        if served.is_none() {
            nav.push(("games", "Games"));
        }
    }
    nav.push(("files", "Files"));
    let main = html! {
        @if running && served.is_none() {
            p.live { "Live: this page reloads every " (page::REFRESH_S) " s while the run goes on." }
        }
        @if let Some(s) = served { (s.banner) }
        (results::verdict_section(files, &rows, live, served.and_then(|s| s.live_id)))
        (plan::section(files))
        (results::table_section(files, &rows))
        @if games_kind {
            (results::elo_section(&rows))
            (trace::section(digest))
        }
        @if let Some(f) = figures { (f) }
        @if games_kind {
            (games::terminations_section(digest))
            (timing::section(files, digest))
            (games::faults_section(files, digest))
            @if served.is_none() { (games::list_section(files)) }
        }
        (figures::files_section(files, base))
        @if let Some(s) = served { (s.extra) }
    };
    let name = files.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    page::Page { title: format!("{} {name}", files.kind.name()), reload: running, nav, main }
}

#[cfg(test)]
mod tests;
