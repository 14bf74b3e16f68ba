//! Command-line definitions (clap derive), in option groups that other subcommands can reuse.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::openings::BookOrder;

#[derive(Parser, Debug)]
#[command(
    name = "runner",
    version,
    about = "Match runner, SPRT and tuning harness for UCI chess engines"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play a match between two engines (or the bundled engine against itself); with more
    /// engines, a gauntlet or round-robin, once per --tc.
    Match(Box<MatchArgs>),
    /// Statistics from counts: --wdl W,D,L or --penta LL,LD,DD,WD,WW.
    Stats(crate::cmd::stats::StatsArgs),
    /// Sweep engine options: each value (or grid point) plays the same baseline over the same
    /// openings, points interleaved; prints a table, writes table.md/csv, summary.json and
    /// plot.svg. --games counts games per point.
    Sweep(Box<crate::cmd::sweep::SweepArgs>),
    /// Re-print the table and redraw the plot of a results directory (sweep or match).
    Report(crate::cmd::report::ReportArgs),
    /// Combine the shards of one run (--shard K/N) into one results directory.
    Merge(crate::cmd::merge::MergeArgs),
    /// Make a balanced opening book (EPD) with an engine: random walks kept when the engine scores
    /// them near equality.
    Book(Box<crate::cmd::book::BookGenArgs>),
    /// Fit the MPC model (a, b, sigma, r per depth pair and stage) from shallow and deep
    /// searches; or, with --sample-from, draw test positions from self-play games.
    Calibrate(Box<crate::cmd::calibrate::CalibrateArgs>),
    /// Compare engine variants at fixed time (depth reached) or fixed depth (nodes, speed-up,
    /// same move, same value).
    Searchtest(Box<crate::cmd::searchtest::SearchTestArgs>),
}

/// Which engines play.
#[derive(Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// An engine: name=NAME,cmd=PATH[,arg=X]...[,dir=D][,option.NAME=VALUE]...; or name=NAME of
    /// an entry in configs/engines.toml. Give two (one plays itself; none: the bundled engine
    /// plays itself).
    #[arg(long = "engine", value_name = "SPEC")]
    pub engines: Vec<String>,
    /// Settings for every engine, e.g. option.Hash=16,option.Threads=1 (an engine's own value
    /// wins).
    #[arg(long, value_name = "SPEC")]
    pub each: Option<String>,
    /// Engine definitions file [default: configs/engines.toml when present].
    #[arg(long, value_name = "FILE")]
    pub engines_file: Option<PathBuf>,
}

/// How long engines think.
#[derive(Args, Debug, Clone, Default)]
#[group(id = "limit", multiple = false)]
pub struct LimitArgs {
    /// Time control in seconds: BASE+INC, MOVES/BASE+INC or BASE [default: 10+0.1]. `runner
    /// match` takes it repeated: the whole schedule is played once per time control.
    #[arg(long, value_name = "TC")]
    pub tc: Vec<String>,
    /// Fixed time per move in seconds.
    #[arg(long, value_name = "SECONDS")]
    pub st: Option<String>,
    /// Nodes per move.
    #[arg(long, value_name = "N")]
    pub nodes: Option<u64>,
    /// Depth per move.
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,
}

/// Openings.
#[derive(Args, Debug, Clone)]
pub struct BookArgs {
    /// Opening book, EPD or PGN [default: openings/default.epd, else the start position].
    #[arg(long, value_name = "FILE")]
    pub book: Option<PathBuf>,
    /// Order in which openings are used.
    #[arg(long, value_enum, default_value_t = BookOrder::Random)]
    pub book_order: BookOrder,
    /// Use at most N plies of each PGN opening.
    #[arg(long, value_name = "N")]
    pub book_plies: Option<usize>,
    /// Seed for the opening order [default: random; on --resume, the stored seed].
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Game endings decided by the runner.
#[derive(Args, Debug, Clone, Default)]
pub struct AdjudicationArgs {
    /// Draw when both scores stay within CP of zero: movenumber=N,movecount=N,score=CP.
    #[arg(long, value_name = "RULE")]
    pub draw: Option<String>,
    /// A side whose score stays at or below -CP loses: movecount=N,score=CP.
    #[arg(long, value_name = "RULE")]
    pub resign: Option<String>,
    /// Draw after N full moves by the engines (book moves not counted).
    #[arg(long, value_name = "N")]
    pub maxmoves: Option<u32>,
}

/// How a run is executed and where it is stored.
#[derive(Args, Debug, Clone, Default)]
pub struct ExecArgs {
    /// Games in the match, rounded up to whole pairs [default: 64; with --sprt: a cap of
    /// 100000].
    #[arg(long, value_name = "N")]
    pub games: Option<u64>,
    /// Games played at once [default: number of CPUs].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Results directory [default: results/<timestamp>; on --resume, the newest run there].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue the run in --out: finished games are kept, the rest are played.
    #[arg(long)]
    pub resume: bool,
    /// Play only shard K of N (game pairs with index % N == K-1); `runner merge` combines the
    /// shards. `auto/N` takes K from SHARD_INDEX, JOB_COMPLETION_INDEX (Kubernetes) or
    /// SLURM_ARRAY_TASK_ID. Needs --seed, so that every shard plays the same plan.
    #[arg(long, value_name = "K/N", requires = "seed")]
    pub shard: Option<String>,
    /// Milliseconds a clock may fall below zero before the side loses on time.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub timemargin: u64,
    /// Seconds to wait for readyok, and for bestmove under --nodes/--depth, before declaring a
    /// stall.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub stall_timeout: f64,
    /// Seconds to wait for uciok when starting an engine.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub start_timeout: f64,
    /// Log every UCI line sent and received under <out>/logs.
    #[arg(long)]
    pub debug_log: bool,
    /// Progress display: auto (bar on a terminal), plain (periodic lines), quiet.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = ["auto", "plain", "quiet"])]
    pub progress: String,
}

#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub engines: EngineArgs,
    #[command(flatten)]
    pub limit: LimitArgs,
    #[command(flatten)]
    pub book: BookArgs,
    #[command(flatten)]
    pub adjudication: AdjudicationArgs,
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Sequential test: elo0=..,elo1=..[,alpha=..,beta=..,model=logistic|normalized]; plays
    /// until a decision or the --games cap.
    #[arg(long, value_name = "SPEC")]
    pub sprt: Option<String>,
    #[command(flatten)]
    pub tournament: crate::gauntlet::plan::TournamentArgs,
}
