//! `runner book`: make a balanced opening book with an engine (see [`crate::book_gen`]).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::book_gen::{BookGenConfig, BookProgress, generate};
use crate::cancel::Cancel;
use crate::cli::EngineArgs;
use crate::cmd::match_cmd::{install_signal_handlers, resolve_engines};
use crate::progress::{Progress, ProgressMode};

#[derive(Args, Debug, Clone)]
pub struct BookGenArgs {
    #[command(flatten)]
    pub engines: EngineArgs,
    /// Openings wanted.
    #[arg(long, default_value_t = 4000)]
    pub count: usize,
    /// Plies of each random walk from the start position.
    #[arg(long, default_value_t = 8)]
    pub plies: usize,
    /// Depth of the search that scores each finished walk.
    #[arg(long, default_value_t = 8)]
    pub depth: u32,
    /// Keep a walk when its score is within +-CP of equality.
    #[arg(long, value_name = "CP", default_value_t = 60)]
    pub window: i32,
    /// Depth of the sanity search after each random move.
    #[arg(long, default_value_t = 4)]
    pub guard_depth: u32,
    /// Refuse a random move that leaves its side worse than -CP.
    #[arg(long, value_name = "CP", default_value_t = 120)]
    pub guard: i32,
    /// Seed of the random walks.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Engine processes at once [default: number of CPUs].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Output EPD file.
    #[arg(long, default_value = "openings/default.epd")]
    pub out: PathBuf,
    /// Progress display: auto, plain or quiet.
    #[arg(long, default_value = "auto", value_parser = ["auto", "plain", "quiet"])]
    pub progress: String,
}

pub async fn run(args: &BookGenArgs) -> Result<u8> {
    let specs = resolve_engines(&args.engines)?;
    if specs.len() != 1 {
        bail!("runner book uses one engine; {} were given", specs.len());
    }
    if args.count == 0 || args.plies == 0 || args.depth == 0 {
        bail!("--count, --plies and --depth must be at least 1");
    }
    let concurrency = args
        .concurrency
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
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
    install_signal_handlers(cancel.clone());
    let progress = Arc::new(BookProgress::default());
    let mode = match args.progress.as_str() {
        "plain" => ProgressMode::Plain,
        "quiet" => ProgressMode::Quiet,
        _ => ProgressMode::Auto,
    };
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
