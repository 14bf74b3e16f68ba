//! `runner book`: make a balanced opening book with an engine (see [`crate::book`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::book::lines::{SourceLine, read_sources};
use crate::book::{BookGenConfig, BookProgress, Keep, chess960, generate};
use crate::cli::BookGenArgs;
use crate::exit::Exit;
use crate::plan::engines::resolve_engines;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::worker::default_concurrency;
use crate::report::progress::Progress;
use crate::run::INTERRUPTED;
use crate::store::files::write_output;

/// Default output files.
const DEFAULT_OUT: &str = "openings/default.epd";
const DEFAULT_960_OUT: &str = "openings/chess960.epd";
/// Default number of openings an engine makes.
const DEFAULT_COUNT: usize = 4000;
/// Default length of a random walk.
const DEFAULT_PLIES: usize = 8;

/// `runner book --chess960`: the start positions, computed.
fn chess960_book(args: &BookGenArgs) -> Result<Exit> {
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_960_OUT));
    let text = chess960::book_text(args.count, args.seed)?;
    write_output(&out, text.as_bytes())?;
    errln!("wrote {} Chess960 start positions to {}", text.lines().count(), out.display());
    Ok(Exit::Done)
}

/// `--uho MIN:MAX` and `--uho-side`, or the balanced `--window`.
fn keep(args: &BookGenArgs) -> Result<Keep> {
    let Some(text) = &args.uho else {
        if args.window < 0 {
            bail!("--window must be at least 0");
        }
        return Ok(Keep::Balanced { window: args.window });
    };
    let parsed = text
        .split_once(':')
        .and_then(|(a, b)| Some((a.trim().parse::<i32>().ok()?, b.trim().parse::<i32>().ok()?)));
    match parsed {
        Some((min, max)) if min <= max => {
            Ok(Keep::Unbalanced { min, max, mover: args.uho_side == "mover" })
        }
        _ => bail!("--uho wants MIN:MAX in centipawns with MIN <= MAX, e.g. 80:160 (got {text:?})"),
    }
}

pub async fn run(args: &BookGenArgs) -> Result<Exit> {
    if args.chess960 {
        return chess960_book(args);
    }
    let from_lines = !args.from.is_empty();
    let lines = if from_lines { read_sources(&args.from)? } else { vec![SourceLine::startpos()] };
    let per_line = if from_lines { args.per_line } else { 1 };
    let count = args.count.unwrap_or(if from_lines { usize::MAX } else { DEFAULT_COUNT });
    let plies = args.plies.unwrap_or(if from_lines { 0 } else { DEFAULT_PLIES });
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    let e = &args.engines;
    let specs = resolve_engines(&e.engines, e.each.as_deref(), e.engines_file.as_deref())?;
    if specs.len() != 1 {
        bail!("runner book uses one engine; {} were given", specs.len());
    }
    if count == 0 || args.depth == 0 || per_line == 0 || (!from_lines && plies == 0) {
        bail!("--count, --per-line, --plies (for random walks) and --depth must be at least 1");
    }
    let concurrency = args.concurrency.unwrap_or_else(default_concurrency).max(1);
    let candidates = lines.len().saturating_mul(per_line);
    let cfg = BookGenConfig {
        count,
        lines: Arc::new(lines),
        per_line,
        plies,
        depth: args.depth,
        keep: keep(args)?,
        guard_depth: args.guard_depth,
        guard: args.guard,
        tries_per_ply: 8,
        seed: args.seed,
        concurrency,
        max_candidates: if from_lines { candidates } else { count.saturating_mul(50).max(1000) },
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    let progress = Arc::new(BookProgress::default());
    let mode = args.progress;
    let started = Instant::now();
    let display = {
        let progress = progress.clone();
        // With lines, progress counts candidates tried; for random walks, openings kept.
        let (total, unit) = if from_lines {
            (cfg.max_candidates as u64, "lines")
        } else {
            (count as u64, "openings")
        };
        tokio::spawn(async move {
            let mut bar = Progress::new(mode, total, 0).with_unit(unit);
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let accepted = progress.accepted.load(Ordering::SeqCst) as u64;
                let tried = progress.tried.load(Ordering::SeqCst);
                if from_lines {
                    bar.update(tried as u64, &format!("{accepted} kept"));
                } else {
                    bar.update(accepted.min(total), &format!("{tried} walks tried"));
                }
            }
        })
    };
    let book = generate(&specs[0], &cfg, progress.clone(), cancel.clone()).await;
    display.abort();
    let book = book?;
    let mut text = String::new();
    for e in &book {
        text.push_str(&e.epd_line()?);
        text.push('\n');
    }
    write_output(&out, text.as_bytes())?;
    errln!(
        "wrote {} openings to {} ({} candidates tried, {:.0} s){}",
        book.len(),
        out.display(),
        progress.tried.load(Ordering::SeqCst),
        started.elapsed().as_secs_f64(),
        if cancel.is_cancelled() { " — interrupted, the book is partial" } else { "" }
    );
    let short = !from_lines && book.len() < count;
    Ok(if (short || book.is_empty()) && !cancel.is_cancelled() { Exit::Error } else { Exit::Done })
}
