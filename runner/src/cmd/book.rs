//! `runner book`: make a balanced opening book with an engine (see [`crate::book`]).

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::book::{BookGenConfig, BookProgress, generate};
use crate::cli::BookGenArgs;
use crate::plan::engines::resolve_engines;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::worker::default_concurrency;
use crate::report::progress::{Progress, ProgressMode};
use crate::run::INTERRUPTED;

pub async fn run(args: &BookGenArgs) -> Result<u8> {
    let e = &args.engines;
    let specs = resolve_engines(&e.engines, e.each.as_deref(), e.engines_file.as_deref())?;
    if specs.len() != 1 {
        bail!("runner book uses one engine; {} were given", specs.len());
    }
    if args.count == 0 || args.plies == 0 || args.depth == 0 {
        bail!("--count, --plies and --depth must be at least 1");
    }
    let concurrency = args.concurrency.unwrap_or_else(default_concurrency).max(1);
    let cfg = BookGenConfig {
        count: args.count,
        plies: args.plies,
        depth: args.depth,
        window: args.window,
        guard_depth: args.guard_depth,
        guard: args.guard,
        tries_per_ply: 8,
        seed: args.seed,
        concurrency,
        max_candidates: args.count.saturating_mul(50).max(1000),
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    let progress = Arc::new(BookProgress::default());
    let mode = ProgressMode::parse(&args.progress);
    let started = Instant::now();
    let display = {
        let progress = progress.clone();
        let count = args.count as u64;
        tokio::spawn(async move {
            let mut bar = Progress::new(mode, count, 0).with_unit("openings");
            loop {
                tokio::time::sleep(Duration::from_millis(250)).await;
                let accepted = progress.accepted.load(Ordering::SeqCst) as u64;
                let tried = progress.tried.load(Ordering::SeqCst);
                bar.update(accepted.min(count), &format!("{tried} walks tried"));
            }
        })
    };
    let book = generate(&specs[0], &cfg, progress.clone(), cancel.clone()).await;
    display.abort();
    let book = book?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    let mut text = String::new();
    for e in &book {
        text.push_str(&e.epd_line()?);
        text.push('\n');
    }
    let mut file = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    eprintln!(
        "wrote {} openings to {} ({} walks tried, {:.0} s){}",
        book.len(),
        args.out.display(),
        progress.tried.load(Ordering::SeqCst),
        started.elapsed().as_secs_f64(),
        if cancel.is_cancelled() { " — interrupted, the book is partial" } else { "" }
    );
    Ok(if book.len() < args.count && !cancel.is_cancelled() { 1 } else { 0 })
}
