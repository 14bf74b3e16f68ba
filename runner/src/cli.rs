//! Command-line definitions (clap derive) and nothing else: the option groups that several
//! subcommands flatten (engines, limits, book, adjudication, execution), and each subcommand's
//! arguments. The layers interpret the values; `cmd/` wires them. Uses the value types of `plan`
//! and `play` only.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use stats::{Penta, SprtSpec, Wdl};

use crate::plan::openings::BookOrder;
use crate::plan::positions::DEFAULT_POSITIONS;
use crate::plan::tournament::Tournament;
use crate::plan::variant::Variant;
use crate::play::probe::ScoreMode;
use crate::play::worker::default_concurrency;

/// `--progress`: how progress is shown (`report/progress.rs` draws it).
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProgressMode {
    /// A bar when stderr is a terminal, else plain lines.
    #[default]
    Auto,
    /// Periodic lines (CI logs).
    Plain,
    /// Nothing but warnings and the final report.
    Quiet,
}

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
    Stats(StatsArgs),
    /// Sweep engine options: each value (or grid point) plays the same baseline over the same
    /// openings, points interleaved; prints a table, writes table.md/csv, summary.json and
    /// plot.svg. --games counts games per point.
    Sweep(Box<SweepArgs>),
    /// SPSA tuning of UCI options (fishtest's format and gains): each iteration plays one game
    /// pair between the engine at theta + c_k*Delta and at theta - c_k*Delta; writes tune.json,
    /// tune.csv, tune.md and tune.svg. --games N plays N/2 iterations.
    Tune(Box<TuneArgs>),
    /// Re-print the table and redraw the plot of a results directory (sweep or match); --html
    /// writes the run's page, DIR/report.html, instead.
    Report(ReportArgs),
    /// Combine the shards of one run (--shard K/N) into one results directory.
    Merge(MergeArgs),
    /// Make a balanced opening book (EPD) with an engine: random walks kept when the engine scores
    /// them near equality.
    Book(Box<BookGenArgs>),
    /// Fit the MPC model (a, b, sigma, r per depth pair and stage) from shallow and deep
    /// searches; or, with --sample-from, draw test positions from self-play games.
    Calibrate(Box<CalibrateArgs>),
    /// Compare engine variants at fixed time (depth reached) or fixed depth (nodes, speed-up,
    /// same move, same value).
    Searchtest(Box<SearchTestArgs>),
    /// A fleet worker: claims game pairs of submitted runs from the fleet's server (--server,
    /// under its key), plays them and reports each pair; ends when no run it serves has a pair
    /// left (--wait: stays for more).
    Worker(WorkerArgs),
    /// The fleet's PostgreSQL database: `runner db init` creates or migrates its schema.
    Db(DbArgs),
    /// Store a match, sweep or tuning run in the fleet's database for workers to play (checked
    /// as the local command checks it, before any game); prints `run ID` last.
    Submit(Box<SubmitArgs>),
    /// Write a fleet run's games as an ordinary results folder (tables, plot, report.html).
    Pull(PullArgs),
    /// The fleet's runs: state, games, W-D-L, pentanomial, Elo, SPRT, workers, pairs per hour.
    Status(StatusArgs),
    /// Stop a fleet run (its owner or an approver): workers stop its games and claim nothing
    /// more of it.
    Cancel(CancelArgs),
    /// Change a fleet run's priority, throughput or games per pairing (its owner or an
    /// approver; a priority above 0 needs an approver).
    Modify(ModifyArgs),
    /// Let a pending fleet run start (approvers only: a run submitted by a role that is not an
    /// approver waits for this).
    Approve(ApproveArgs),
    /// Take back every pair a worker key stored in a fleet run (its games and counts) and hand
    /// the pairs out again; the run is decided anew (its owner or an approver).
    Purge(PurgeArgs),
    /// Worker keys (approvers): `add NAME` issues one (printed once), `revoke NAME` shuts its
    /// workers out, `list` shows them.
    WorkerKey(WorkerKeyArgs),
    /// The fleet's workers: key, host, CPU, cores, concurrency, version, state (alive, lost,
    /// stopped, blocked), last heartbeat, runs served, pairs per hour, games, crashes, time
    /// losses, refusals.
    Workers(WorkersArgs),
    /// Remove a finished fleet run and its games (its owner or an approver): one pulled since
    /// it ended, or any finished one with --force; an active run must be cancelled first.
    Delete(DeleteArgs),
    /// Delete the stored engine artifacts no fleet run names (approvers only).
    Gc(GcArgs),
    /// A fastchess command line (single-dash options): prints the `runner match` command it
    /// means, then runs it; options the runner lacks are refused one line each (exit 2).
    Fastchess(FastchessArgs),
    /// An HTTP server of every run's page: the run folders under --results and, with --db, the
    /// fleet's runs and workers, live; with --db also the fleet's one door, the workers' API
    /// and the people's (login, actions, tokens). Binds to localhost unless told.
    Serve(ServeArgs),
    /// The server's people, on the server's machine (the database's own URL): add a user and
    /// print their API token, set a password for the web page, disable a user, issue or
    /// revoke tokens.
    User(UserArgs),
}

/// `runner user` arguments.
#[derive(Args, Debug, Clone)]
pub struct UserArgs {
    #[command(subcommand)]
    pub action: UserAction,
}

#[derive(Subcommand, Debug, Clone)]
pub enum UserAction {
    /// Add a user; prints their API token alone on the last line (only its hash is stored).
    Add(UserAddArgs),
    /// Set the user's password for the web page, read from standard input (its first line).
    Passwd(UserNameArgs),
    /// Disable a user: their tokens and sessions are refused from now on; their runs stay.
    Disable(UserNameArgs),
    /// Issue the user another API token; prints it alone on the last line.
    Token(UserNameArgs),
    /// Revoke every API token of the user.
    Revoke(UserNameArgs),
}

#[derive(Args, Debug, Clone)]
pub struct UserAddArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// The user's name: letters, digits and . _ @ - (a run submitted before by the PostgreSQL
    /// role of that name is theirs).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The user approves runs and manages worker keys.
    #[arg(long)]
    pub approver: bool,
}

#[derive(Args, Debug, Clone)]
pub struct UserNameArgs {
    #[command(flatten)]
    pub db: DbArg,
    #[arg(value_name = "NAME")]
    pub name: String,
}

/// `runner serve` arguments.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The fleet's database, as the role that owns its tables (the server takes workers' and
    /// people's calls; a read-only role such as fleet_reader serves the pages only); default:
    /// RUNNER_DB when set, else no fleet
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// The folder whose run folders are listed
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results: PathBuf,
    /// Address and port to listen on (port 0: a free one, printed first); a port alone is
    /// 127.0.0.1:PORT
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", value_parser = parse_bind)]
    pub bind: std::net::SocketAddr,
    /// Serve HTTPS with this certificate chain (PEM; with --tls-key)
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Reading needs a login too (pages, API, events); without it anyone who reaches the
    /// server reads every run
    #[arg(long)]
    pub private: bool,
    /// The address people reach the server at; https://... (a TLS proxy in front) makes the
    /// session cookie Secure
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// A reverse proxy's address, whose X-Forwarded-For names the client (for login limits);
    /// repeat for several
    #[arg(long = "trusted-proxy", value_name = "IP")]
    pub trusted_proxy: Vec<std::net::IpAddr>,
    /// How often an idle worker asks for work, in seconds (workers follow the server's word;
    /// a bigger fleet may want it longer)
    #[arg(long, value_name = "SECS", default_value_t = 2, value_parser = whole::<u32, 1, 300>)]
    pub worker_poll: u32,
}

/// `runner fastchess` arguments: fastchess's own, then after `--` runner match options.
#[derive(Args, Debug, Clone)]
pub struct FastchessArgs {
    /// fastchess options, e.g. -engine cmd=X name=Y -each tc=10+0.1 -rounds 100; after `--`,
    /// runner match options passed as they are (-- --out DIR). -help lists what maps to what.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub args: Vec<String>,
}

/// `--db URL`: the fleet's database (libpq URL or key=value string), else `RUNNER_DB`.
#[derive(Args, Debug, Clone)]
pub struct DbArg {
    /// PostgreSQL connection string (postgresql://user@host/db?sslmode=verify-full, or
    /// host=/socket/dir dbname=fleet); default: the RUNNER_DB environment variable
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
}

/// Where a person's fleet command goes: the fleet's server (`--server`, or RUNNER_SERVER, with
/// a user's token), or the database itself (`--db`, or RUNNER_DB: the operator's way, on the
/// database's side).
#[derive(Args, Debug, Clone, Default)]
pub struct FleetDoorArg {
    /// PostgreSQL connection string (the operator's way, on the database's side); default: the
    /// RUNNER_DB environment variable when RUNNER_SERVER is not set
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    pub db: Option<String>,
    /// The fleet's server (https://fleet.example.org); default: the RUNNER_SERVER environment
    /// variable
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// A file holding the user's API token, as `runner user add` printed it (mode 0600);
    /// default: the RUNNER_TOKEN environment variable
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The CA certificate (PEM) that signed the server's (a private CA; default: Mozilla's roots)
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
}

/// `runner db` arguments.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    #[command(subcommand)]
    pub action: DbAction,
}

#[derive(Subcommand, Debug, Clone)]
pub enum DbAction {
    /// Create the schema (a new database at this runner's version), or migrate an existing one
    /// (adding only: `--contract` then drops what older runners needed).
    Init(DbInitArgs),
}

/// `runner db init` arguments.
#[derive(Args, Debug, Clone)]
pub struct DbInitArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Also drop the database functions runners of earlier versions call (schema version 7; a
    /// new database is made without them), once every server and worker runs this version
    /// (refused while an older runner is connected)
    #[arg(long)]
    pub contract: bool,
}

/// `runner submit` arguments.
#[derive(Args, Debug, Clone)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    #[command(flatten)]
    pub share: ShareArgs,
    #[command(subcommand)]
    pub what: SubmitWhat,
}

/// A fleet run's priority and throughput (`runner submit`).
#[derive(Args, Debug, Clone)]
pub struct ShareArgs {
    /// Claims serve the highest priority present first (-1000..=1000; above 0 needs an
    /// approver)
    #[arg(long, value_name = "P", default_value_t = 0, global = true,
          value_parser = clap::value_parser!(i32).range(-1000..=1000), allow_negative_numbers = true)]
    pub priority: i32,
    /// The run's weight among the runs of its priority (1..=1000; 100 is the default share; an
    /// owner's throughput is split among their runs of that priority)
    #[arg(long, value_name = "T", default_value_t = 100, global = true,
          value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub throughput: i32,
}

/// `runner modify` arguments.
#[derive(Args, Debug, Clone)]
pub struct ModifyArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run's id.
    #[arg(value_name = "RUN")]
    pub run: i64,
    /// New priority (-1000..=1000; above 0 needs an approver)
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(i32).range(-1000..=1000),
          allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// New throughput (1..=1000)
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub throughput: Option<i32>,
    /// Games per pairing, within the schedule the run was submitted with: pending pairs past
    /// it are skipped, pairs skipped by an earlier --games below it are played again
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub games: Option<u32>,
}

/// What `runner submit` stores: the arguments of the local command.
#[derive(Subcommand, Debug, Clone)]
pub enum SubmitWhat {
    /// A match, gauntlet or round-robin (`runner match`'s arguments).
    Match(Box<MatchArgs>),
    /// A sweep (`runner sweep`'s arguments).
    Sweep(Box<SweepArgs>),
    /// A tuning run (`runner tune`'s arguments).
    Tune(Box<TuneArgs>),
}

/// `runner pull` arguments.
#[derive(Args, Debug, Clone)]
pub struct PullArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run's id (as `runner submit` printed it).
    #[arg(value_name = "RUN")]
    pub run: i64,
    /// The results folder to write: new, empty, or an earlier pull of the same run.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `runner status` arguments.
#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// One run's id (default: the newest runs).
    #[arg(value_name = "RUN")]
    pub run: Option<i64>,
}

/// `runner approve` arguments.
#[derive(Args, Debug, Clone)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run to approve.
    #[arg(value_name = "RUN")]
    pub run: i64,
    /// Approve without asking (scripts): the engines are printed all the same. Without it, the
    /// question is asked on a terminal, and a standard input that is not one is refused.
    #[arg(long)]
    pub yes: bool,
}

/// `runner workers` arguments.
#[derive(Args, Debug, Clone)]
pub struct WorkersArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// Every worker that ever registered (default: those alive, and those seen in the last
    /// hour or lost within a day).
    #[arg(long)]
    pub all: bool,
}

/// `runner delete` arguments.
#[derive(Args, Debug, Clone)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run's id.
    #[arg(value_name = "RUN")]
    pub run: i64,
    /// Delete it though it was not pulled since it ended (its games are lost).
    #[arg(long)]
    pub force: bool,
}

/// `runner purge` arguments.
#[derive(Args, Debug, Clone)]
pub struct PurgeArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run's id.
    #[arg(value_name = "RUN")]
    pub run: i64,
    /// The worker key whose pairs are taken back (as `runner worker-key list` names it).
    #[arg(long, value_name = "NAME")]
    pub worker: String,
}

/// `runner worker-key` arguments.
#[derive(Args, Debug, Clone)]
pub struct WorkerKeyArgs {
    #[command(subcommand)]
    pub action: WorkerKeyAction,
}

#[derive(Subcommand, Debug, Clone)]
pub enum WorkerKeyAction {
    /// Issue a key for one worker machine (or one contributor); the key is printed once.
    Add(KeyNameArgs),
    /// Revoke a key: its workers' next call fails and their leased pairs go back to the queue.
    Revoke(KeyNameArgs),
    /// Every key: who issued it, when, revoked or not, its workers and pairs.
    List(FleetDoorArg),
}

/// A worker key's name.
#[derive(Args, Debug, Clone)]
pub struct KeyNameArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The key's name (a machine's or a contributor's).
    #[arg(value_name = "NAME")]
    pub name: String,
}

/// `runner gc` arguments.
#[derive(Args, Debug, Clone)]
pub struct GcArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// Keep unnamed artifacts uploaded less than this many seconds ago (a submission may be
    /// about to name them).
    #[arg(long, value_name = "SECONDS", default_value_t = 3600.0)]
    pub min_age: f64,
}

/// `runner cancel` arguments.
#[derive(Args, Debug, Clone)]
pub struct CancelArgs {
    #[command(flatten)]
    pub db: FleetDoorArg,
    /// The run's id.
    #[arg(value_name = "RUN")]
    pub run: i64,
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

/// How long engines think. A clock (`--tc` or `--st`) may be given with `--nodes` and `--depth`
/// caps (`go wtime .. nodes N`); `--engine ...,tc=,st=,nodes=,depth=` replace them per engine.
#[derive(Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Time control in seconds: BASE+INC, MOVES/BASE+INC or BASE [default: 10+0.1]. `runner
    /// match` takes it repeated: the whole schedule is played once per time control.
    #[arg(long, value_name = "TC")]
    pub tc: Vec<String>,
    /// Fixed time per move in seconds.
    #[arg(long, value_name = "SECONDS", conflicts_with = "tc")]
    pub st: Option<String>,
    /// Nodes per move (1 to 10^12); with --tc or --st, a cap beside the clock.
    #[arg(long, value_name = "N", value_parser = whole::<u64, 1, MAX_NODES>)]
    pub nodes: Option<u64>,
    /// Depth per move; with a clock or --nodes, a cap beside it.
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,
}

/// Openings.
#[derive(Args, Debug, Clone)]
pub struct BookArgs {
    /// Opening book, EPD or PGN; `startpos`: the start position alone [default: the built-in
    /// openings/default.epd, wherever the runner is started].
    #[arg(long, value_name = "FILE|startpos")]
    pub book: Option<PathBuf>,
    /// Order in which openings are used.
    #[arg(long, value_enum, default_value_t = BookOrder::Random)]
    pub book_order: BookOrder,
    /// Use at most N plies of each PGN opening (1 to 1000).
    #[arg(long, value_name = "N", value_parser = whole::<usize, 1, MAX_PLIES>)]
    pub book_plies: Option<usize>,
    /// Seed for the opening order [default: random; on --resume, the stored seed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Chess variant: standard, or fischerandom (alias chess960: Chess960 castling rights in the
    /// book, UCI_Chess960 sent to every engine).
    #[arg(long, value_enum, default_value_t = Variant::Standard)]
    pub variant: Variant,
    /// Games per opening: 2 (a pair, colours reversed), 1 (every opening once, colours
    /// alternating; statistics then trinomial), or an even N.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = whole::<u32, 1, 1000>)]
    pub repeat: u32,
    /// No colour swap: the first engine of each pairing plays White in every game (statistics
    /// then trinomial).
    #[arg(long)]
    pub noswap: bool,
    /// Colours reversed: the first engine plays Black where it would play White.
    #[arg(long)]
    pub reverse: bool,
    /// The first opening used, 1-based (in book order, or in the seeded random order).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole::<usize, 1, MAX_POSITIONS>)]
    pub book_start: usize,
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
    /// Draw after N full moves by the engines (book moves not counted; 1 to 10000).
    #[arg(long, value_name = "N", value_parser = whole::<u32, 1, MAX_MOVES>)]
    pub maxmoves: Option<u32>,
    /// Syzygy tablebase adjudication: the folders of the tables, colon-separated. A game ends
    /// as soon as the tables know its result (WDL tables needed; DTZ tables optional).
    #[arg(long, value_name = "PATH[:PATH...]")]
    pub tb: Option<String>,
    /// With --tb: only positions of at most N pieces, kings included [default: the largest
    /// tables found at --tb].
    #[arg(long, value_name = "N", requires = "tb", value_parser = whole::<u32, 3, 7>)]
    pub tbpieces: Option<u32>,
    /// With --tb: adjudicate as if there were no fifty-move rule (cursed wins are wins).
    #[arg(long, requires = "tb")]
    pub tbignore50: bool,
    /// With --tb: which results end a game.
    #[arg(long, value_name = "WHICH", requires = "tb", value_enum)]
    pub tbadjudicate: Option<crate::plan::adjudication::TbAdjudicate>,
}

/// How a run is executed and where it is stored.
#[derive(Args, Debug, Clone, Default)]
pub struct ExecArgs {
    /// Send an engine's options even when it does not declare them (for engines that accept
    /// undeclared ones); otherwise an undeclared option stops the run before any game, naming
    /// the closest declared one.
    #[arg(long)]
    pub allow_unknown_options: bool,
    /// Games in the match, rounded up to whole pairs [default: 64; with --sprt: a cap of
    /// 100000].
    #[arg(long, value_name = "N")]
    pub games: Option<u64>,
    /// Games played at once [default: number of CPUs].
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// Pin each concurrency slot to its own CPU, both engines of a game on it (Linux): the
    /// CPUs as a list (0,2,4-7), or all this process may use when none is given. Without
    /// --concurrency, one slot per CPU given.
    #[arg(long, value_name = "CPUS", num_args = 0..=1, default_missing_value = "")]
    pub affinity: Option<String>,
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
    #[arg(long, value_name = "MS", default_value_t = crate::plan::time_control::DEFAULT_TIMEMARGIN_MS)]
    pub timemargin: u64,
    /// Stop the run when one engine loses N games in a row by its own fault (crash, stall,
    /// disconnect, garbage output, illegal move); 0: never stop. Time forfeits do not count.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub fault_limit: u32,
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
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Also write every game, as it ends, to this PGN file (fastchess's -pgnout):
    /// file=PATH[,append=true|false][,notation=san|lan|uci][,nodes=true][,seldepth=true]
    /// [,nps=true][,hashfull=true][,pv=true][,timeleft=true][,latency=true][,min=true].
    #[arg(long, value_name = "SPEC")]
    pub pgnout: Option<String>,
    /// Also append the final position of every game, as it ends, to this EPD file.
    #[arg(long, value_name = "FILE")]
    pub epdout: Option<PathBuf>,
    /// The PGN Event tag [default: "runner match" (or sweep, ...)].
    #[arg(long, value_name = "NAME")]
    pub event: Option<String>,
    /// The PGN Site tag [default: "?"].
    #[arg(long, value_name = "NAME")]
    pub site: Option<String>,
    /// Lines for scripts on stdout: runner (the runner's own output), or the lines cutechess-cli
    /// or fastchess print (score, Elo, SPRT); the progress display stays on stderr.
    #[arg(long, value_name = "STYLE", default_value = "runner", value_parser = ["runner", "cutechess", "fastchess"])]
    pub output: String,
    /// With --output cutechess|fastchess: the Elo and SPRT lines every N games (0: at the end
    /// only).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub ratinginterval: u64,
    /// With --output cutechess|fastchess: the "Score of" line every N games (0: at the end only).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub scoreinterval: u64,
    /// Milliseconds each game slot waits after a game before starting the next (at most an
    /// hour).
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = whole::<u64, 0, MAX_MOVETIME_MS>)]
    pub wait: u64,
}

/// The option groups of a run: `runner match` and `runner sweep`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
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
}

#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Sequential test: elo0=..,elo1=..[,alpha=..,beta=..,model=logistic|normalized]; plays
    /// until a decision or the --games cap.
    #[arg(long, value_name = "SPEC")]
    pub sprt: Option<String>,
    #[command(flatten)]
    pub tournament: TournamentArgs,
}

/// Arguments of `runner stats`.
#[derive(Args, Debug, Clone, PartialEq)]
#[command(group(ArgGroup::new("counts").required(true).multiple(true).args(["wdl", "penta"])))]
pub struct StatsArgs {
    /// Game counts of the first engine: wins,draws,losses (e.g. 30,20,14)
    #[arg(long, value_name = "W,D,L", value_parser = parse_wdl, allow_hyphen_values = true)]
    pub wdl: Option<Wdl>,

    /// Game-pair counts by pair score 0, 1/2, 1, 3/2, 2: LL,LD,DD,WD,WW (DD includes WL pairs)
    #[arg(long, value_name = "LL,LD,DD,WD,WW", value_parser = parse_penta, allow_hyphen_values = true)]
    pub penta: Option<Penta>,

    /// Evaluate an SPRT: elo0=..,elo1=..[,alpha=0.05][,beta=0.05][,model=normalized|logistic]
    #[arg(long, value_name = "SPEC", value_parser = parse_sprt, allow_hyphen_values = true)]
    pub sprt: Option<SprtSpec>,

    /// Fixed-sample test: assume at least this fraction of draws (variance (1-D)/4 per game)
    /// instead of the observed draw ratio; in [0, 1)
    #[arg(long, value_name = "D", value_parser = parse_draws_floor, allow_hyphen_values = true)]
    pub draws_floor: Option<f64>,

    /// Print one JSON object instead of the table
    #[arg(long)]
    pub json: bool,
}

fn parse_counts<const N: usize>(s: &str, names: &str) -> Result<[u64; N], String> {
    let fields: Vec<&str> = s.split(',').map(str::trim).collect();
    if fields.len() != N {
        return Err(format!("expected {N} comma-separated counts {names}, got {}", fields.len()));
    }
    let mut out = [0u64; N];
    for (slot, field) in out.iter_mut().zip(&fields) {
        *slot = field
            .parse()
            .map_err(|_| format!("counts must be non-negative integers, got {field:?}"))?;
    }
    Ok(out)
}

fn parse_wdl(s: &str) -> Result<Wdl, String> {
    let [wins, draws, losses] = parse_counts::<3>(s, "W,D,L")?;
    let w = Wdl { wins, draws, losses };
    w.check().map_err(|e| e.to_string())?;
    Ok(w)
}

fn parse_penta(s: &str) -> Result<Penta, String> {
    let [ll, ld, dd, wd, ww] = parse_counts::<5>(s, "LL,LD,DD,WD,WW")?;
    let p = Penta { ll, ld, dd, wd, ww };
    p.check().map_err(|e| e.to_string())?;
    Ok(p)
}

fn parse_sprt(s: &str) -> Result<SprtSpec, String> {
    SprtSpec::parse(s).map_err(|e| e.to_string())
}

fn parse_draws_floor(s: &str) -> Result<f64, String> {
    let d: f64 = s.trim().parse().map_err(|_| format!("expected a number in [0, 1), got {s:?}"))?;
    stats::fixed_sample::check_draws_floor(d).map_err(|e| e.to_string())?;
    Ok(d)
}

/// Most games (or engine processes) at once: four per CPU, at least 16. A slot of a match runs
/// two engine processes, each with its pipes and logs; far more than the CPUs only slows every
/// game down and, past the open-file limit, fails engine starts.
pub fn max_concurrency() -> usize {
    (4 * default_concurrency()).max(16)
}

/// `--bind`: `ADDR:PORT`, or a port alone on localhost.
fn parse_bind(s: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = s.trim().parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.trim().parse().map_err(|_| {
        format!(
            "expected ADDRESS:PORT or a port, e.g. 8091 (127.0.0.1:8091), 0.0.0.0:8091 or \
             [::1]:8091, got {s:?}"
        )
    })
}

fn parse_concurrency(s: &str) -> Result<usize, String> {
    let n: usize =
        s.trim().parse().map_err(|_| format!("expected a whole number of games, got {s:?}"))?;
    let max = max_concurrency();
    match n {
        0 => Err("must be at least 1".into()),
        n if n > max => {
            Err(format!("{n} is more than {max} (at most 4 per CPU, and 16 on any machine)"))
        }
        n => Ok(n),
    }
}

/// Caps of whole-number flags: beyond them a value is a typo, not a plan (and products of them,
/// such as plies from moves or candidates from lines, stay far from overflow).
pub const MAX_NODES: u64 = 1_000_000_000_000;
pub const MAX_MOVES: u64 = 10_000;
pub const MAX_PLIES: u64 = 1_000;
pub const MAX_COUNT: u64 = 1_000_000;
pub const MAX_PER_LINE: u64 = 1_000;
pub const MAX_POSITIONS: u64 = 10_000_000;
pub const MAX_MOVETIME_MS: u64 = 3_600_000;

/// A whole number from `LO` to `HI` (clap's one-line refusal names the range).
fn whole<T: TryFrom<u64>, const LO: u64, const HI: u64>(s: &str) -> Result<T, String> {
    let range = || format!("expected a whole number from {LO} to {HI}, got {s:?}");
    let n: u64 = s.trim().parse().map_err(|_| range())?;
    if !(LO..=HI).contains(&n) {
        return Err(range());
    }
    T::try_from(n).map_err(|_| range())
}

/// Largest `--anchor-elo` magnitude: ratings are differences of a few thousand at most, and
/// the anchor shifts all of them.
pub const MAX_ANCHOR_ELO: f64 = 100_000.0;

fn parse_anchor_elo(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| format!("expected a number, got {s:?}"))?;
    if !x.is_finite() || x.abs() > MAX_ANCHOR_ELO {
        return Err(format!("{s} is not a rating between -{MAX_ANCHOR_ELO} and {MAX_ANCHOR_ELO}"));
    }
    Ok(x)
}

/// `runner sweep` arguments. `--values`/`--range` belong to the `--param` before them.
#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// A UCI option to sweep (repeat for a grid). Without --values/--range, t_mid and t_end take
    /// the seed's ranges (0.8:1.3:0.1 and 0.5:1.3:0.1).
    #[arg(long = "param", value_name = "NAME", required = true)]
    pub params: Vec<String>,
    /// Values of the --param before it, comma-separated (sent verbatim with setoption).
    #[arg(long = "values", value_name = "V1,V2,...", allow_hyphen_values = true)]
    pub values: Vec<String>,
    /// Values of the --param before it: LO:HI:STEP in exact decimal steps, HI included.
    #[arg(long = "range", value_name = "LO:HI:STEP", allow_hyphen_values = true)]
    pub ranges: Vec<String>,
    /// An option set on the swept engine at every point (not on the baseline).
    #[arg(long = "fixed", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub fixed: Vec<String>,
    /// The opponent of every point: options over the swept engine (MPC=false or
    /// option.MPC=false,...) or an engine spec (name=..,cmd=..). Default: the bundled engine
    /// with MPC=false; any other engine with its default options.
    #[arg(long, value_name = "SPEC|OPTIONS")]
    pub baseline: Option<String>,
    /// (--games counts games per point.)
    #[command(flatten)]
    pub run: RunArgs,
    /// An SPRT per point: elo0=..,elo1=..[,alpha,beta,model]; each point plays until its
    /// decision or the --games cap.
    #[arg(long, value_name = "SPEC")]
    pub sprt: Option<String>,
    /// Racing: stop giving games to a point once it is significantly worse than the current
    /// best (one-sided z test on pair scores, Bonferroni over the active points).
    #[arg(long)]
    pub adaptive: bool,
    /// Level of the racing test.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub adaptive_alpha: f64,
    /// Game pairs a point plays before racing may drop it (1 to 10^6).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = whole::<u64, 1, MAX_COUNT>)]
    pub adaptive_min_pairs: u64,
    /// Family-wise level of the table's "significant" column (Holm across points).
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub alpha: f64,
    /// Assume at least this draw ratio in the fixed-sample test (the seed used 0.3).
    #[arg(long, value_name = "D")]
    pub draws_floor: Option<f64>,
}

/// `runner tune` arguments: one engine (both sides), its tuned options, and the run's groups.
#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    /// A tuned option: name,start,min,max,c_end,r_end (fishtest's format; repeat for several).
    /// `type spin` options are integers (rounded stochastically when played), others floats.
    #[arg(long = "param", value_name = "SPEC", required = true, allow_hyphen_values = true)]
    pub params: Vec<String>,
    /// fishtest's stability constant A of a_k = a/(A+k+1)^0.602 [default: 10% of the
    /// iterations].
    #[arg(long = "spsa-A", value_name = "A")]
    pub spsa_a: Option<f64>,
    /// (--engine: the one engine tuned, default the bundled engine; --games N: N/2 iterations,
    /// default 64 games.)
    #[command(flatten)]
    pub run: RunArgs,
}

/// `runner report` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// A results directory (of `runner sweep` or `runner match`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write only DIR/report.html, the run's page: one self-contained file (a live run's page
    /// reloads itself); every other file is left alone.
    #[arg(long)]
    pub html: bool,
}

/// `runner worker` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkerArgs {
    /// The fleet's server (`runner serve --db`), http:// or https://: the worker speaks only
    /// to it, under its key, and needs no database URL [default: env RUNNER_SERVER].
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Trust only the CA certificates in FILE (PEM), for a private CA [default: Mozilla's
    /// roots].
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Serve only this run.
    #[arg(long, value_name = "ID")]
    pub run: Option<i64>,
    /// Game pairs played at once [default: CPUs, up to 4 per CPU].
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// Seconds a claimed pair stays this worker's without a heartbeat (renewed every quarter of
    /// it, at most every 2 s); a dead worker's pairs go to others after it.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = lease_secs)]
    pub lease: f64,
    /// Stay when there is no work, for runs submitted later.
    #[arg(long)]
    pub wait: bool,
    /// Keep the engines' stderr logs under DIR/run-ID/ [default: not kept].
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// The file holding this worker's key (issued by `runner worker-key add`) [default: env
    /// RUNNER_WORKER_KEY].
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// Run submitted engines whose command lies inside DIR (repeatable). Without it, a worker
    /// runs only the engines of its own catalog (the built-ins and configs/engines.toml) by name.
    #[arg(long, value_name = "DIR")]
    pub trust: Vec<PathBuf>,
    /// This worker's engine catalog instead of configs/engines.toml.
    #[arg(long, value_name = "FILE")]
    pub engines_file: Option<PathBuf>,
    /// This worker's Syzygy tables (folders, colon-separated): runs with tablebase
    /// adjudication are served only with them, and refused without.
    #[arg(long, value_name = "PATH[:PATH...]")]
    pub tb: Option<String>,
    /// Seconds a request to the server may take before the worker drops its connection and
    /// tries again [default: 20]. Hidden: the tests of a server that stops answering shorten it
    /// (and lengthen it, to show that a signal does not wait for it).
    #[arg(long, value_name = "SECONDS", value_parser = lease_secs, hide = true)]
    pub statement_timeout: Option<f64>,
    /// A tuning run's iterations this worker's claims hand out beyond those applied [default:
    /// 16]. Hidden: with 1 on every worker the iterations are played one after another, so a
    /// test's tuning run ends at the same values whatever the timing.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=1000), hide = true)]
    pub tune_in_flight: Option<i64>,
    /// Where fetched engine artifacts are kept [default: $XDG_CACHE_HOME/runner/artifacts, else
    /// ~/.cache/runner/artifacts].
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// The artifact cache's cap in MiB: past it, the least recently used artifacts are removed.
    #[arg(long, value_name = "MB", default_value_t = 2048)]
    pub cache_max_mb: u64,
    /// Never fetch engine artifacts: run only the engines of this worker's catalog and the
    /// commands under --trust, as a worker of an older fleet did.
    #[arg(long)]
    pub no_artifacts: bool,
    /// Seconds a build of an engine from source may take before the worker stops it and
    /// refuses the run.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0, value_parser = lease_secs)]
    pub build_timeout: f64,
    /// Run the engines and builds of submitted runs unboxed, as this worker's user, on a
    /// machine that cannot box them (no bwrap, no user namespaces). Without it such a worker
    /// runs only its own catalog's engines.
    #[arg(long)]
    pub no_box: bool,
    /// Let boxed builds use the network (a build that downloads its dependencies); engines
    /// never have it.
    #[arg(long)]
    pub build_net: bool,
    /// Hide PATH (a folder or file: a password file, an environment file of a service) from
    /// boxed engines and builds too (repeatable). The worker's home, cache, logs, key file,
    /// /run and /tmp are hidden always.
    #[arg(long, value_name = "PATH")]
    pub box_hide: Vec<PathBuf>,
    /// Show PATH (a folder or file) read-only to boxed engines and builds although it lies in
    /// a hidden folder (repeatable): tables or books under a home, the program a wrapper script
    /// starts. Refused when it holds the worker's key file, cache or logs.
    #[arg(long, value_name = "PATH")]
    pub box_show: Vec<PathBuf>,
}

fn lease_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err("a number of seconds from 1 to 86400".into()),
    }
}

/// `runner merge` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Results directories of shards of one run (or earlier partial merges), in any order.
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The new directory for the merged results.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct BookGenArgs {
    #[command(flatten)]
    pub engines: EngineArgs,
    /// Write the Chess960 start positions instead (no engine; numbered 0-959 as the standard
    /// table, 518 being the usual start): all 960, or --count of them drawn with --seed.
    #[arg(long)]
    pub chess960: bool,
    /// Openings wanted [default: 4000 random walks; with --from, every line kept; with
    /// --chess960, all 960].
    #[arg(long, value_parser = whole::<usize, 1, MAX_COUNT>)]
    pub count: Option<usize>,
    /// Start from these opening lines instead of random walks: a .tsv (with a header naming a
    /// `pgn` or `moves` column, and `eco`, `name`: lichess's chess-openings layout), .pgn or .epd
    /// file, or a directory of them. Repeatable.
    #[arg(long, value_name = "FILE|DIR")]
    pub from: Vec<PathBuf>,
    /// Candidates per --from line, each extended by its own random moves (needs --plies longer
    /// than the line).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole::<usize, 1, MAX_PER_LINE>)]
    pub per_line: usize,
    /// Extend each opening with random sane moves to this many plies [default: 8 for random
    /// walks; with --from, 0: the lines as they are; at most 1000].
    #[arg(long, value_parser = whole::<usize, 0, MAX_PLIES>)]
    pub plies: Option<usize>,
    /// Depth of the search that scores each finished opening.
    #[arg(long, default_value_t = 8)]
    pub depth: u32,
    /// Keep an opening when its score is within +-CP of equality.
    #[arg(long, value_name = "CP", default_value_t = 60)]
    pub window: i32,
    /// Keep unbalanced openings instead (as fishtest's UHO books): White ahead by MIN..MAX cp
    /// (see --uho-side).
    #[arg(long, value_name = "MIN:MAX")]
    pub uho: Option<String>,
    /// Who is ahead in --uho: white, or mover (the side to move).
    #[arg(long, default_value = "white", value_parser = ["white", "mover"])]
    pub uho_side: String,
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
    #[arg(long, value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// Output EPD file [default: openings/default.epd; with --chess960, openings/chess960.epd].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Progress display: auto, plain or quiet.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
}

#[derive(Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// Engine: `name=X,cmd=PATH[,arg=A][,option.NAME=V]...` or a name from configs/engines.toml
    /// (default: the bundled engine). Its `MPC` option, when it has one, is switched off.
    #[arg(long, value_name = "SPEC")]
    pub engine: Option<String>,
    /// Positions to search: EPD (one per line) or PGN (the end of each game's mainline).
    #[arg(long, value_name = "FILE", default_value = DEFAULT_POSITIONS)]
    pub positions: PathBuf,
    /// Use only the first N positions of the file.
    #[arg(long, value_name = "N", value_parser = whole::<usize, 1, MAX_POSITIONS>)]
    pub limit: Option<usize>,
    /// Depth pairs SHALLOW:DEEP to fit.
    #[arg(long, value_name = "LIST", default_value = "2:6,3:7,4:8,3:9,4:10")]
    pub pairs: String,
    /// Fit only points whose shallow score is within +-CP (the seed used 300).
    #[arg(long, value_name = "CP", default_value_t = 300)]
    pub max_abs: i32,
    /// How each depth's score is read: from one iterative-deepening search (its per-depth info
    /// lines), or from a separate search per depth.
    #[arg(long, value_enum, default_value = "iterative")]
    pub mode: ScoreMode,
    /// Output directory (default results/calibrate-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Engine processes searching at once (default: number of CPUs).
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// A search taking longer than this is a fault: the position is skipped.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub timeout: f64,
    /// Continue a stopped run in --out (positions already searched are kept).
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Instead of calibrating: draw positions from a runner games.jsonl ...
    #[arg(long, value_name = "GAMES_JSONL", requires = "write_positions")]
    pub sample_from: Option<PathBuf>,
    /// ... and write them to this EPD file.
    #[arg(long, value_name = "FILE", requires = "sample_from")]
    pub write_positions: Option<PathBuf>,
    /// Number of positions to draw (half middlegame, half endgame when there are enough).
    #[arg(long, value_name = "N", default_value_t = 3000, value_parser = whole::<usize, 1, MAX_COUNT>)]
    pub sample_count: usize,
    /// Seed of the draw.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Plies skipped at the start of every game.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub skip_plies: usize,
}

#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("search_limit").required(true).args(["movetime", "depth", "nodes"])))]
pub struct SearchTestArgs {
    /// Engine: `name=X,cmd=PATH[,option.NAME=V]...` or a name from configs/engines.toml
    /// (default: the bundled engine).
    #[arg(long, value_name = "SPEC")]
    pub engine: Option<String>,
    /// A variant `NAME:OPT=V[,OPT=V]...` (at least two; the first is the base of comparisons),
    /// e.g. --variant base:MPC=false --variant mpc:MPC=true.
    #[arg(long = "variant", value_name = "NAME:OPT=V,...", required = true)]
    pub variants: Vec<String>,
    /// Positions: EPD or PGN.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_POSITIONS)]
    pub positions: PathBuf,
    /// Use the first N positions (0 = all; the seed's depth test used about 300); with
    /// --positions-from, the number drawn.
    #[arg(long, value_name = "N", default_value_t = 300, value_parser = whole::<usize, 0, MAX_POSITIONS>)]
    pub limit: usize,
    /// Positions drawn from a results folder's games (its games.jsonl, or a games.jsonl path):
    /// half middlegame, half endgame by the seed's stage rule, seeded (--seed); written to
    /// positions.epd in --out.
    #[arg(long, value_name = "DIR", conflicts_with = "positions")]
    pub positions_from: Option<PathBuf>,
    /// Seed of the --positions-from draw.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Plies skipped at the start of every game for --positions-from.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub skip_plies: usize,
    /// Fixed time per position (milliseconds, at most an hour): measures depth reached.
    #[arg(long, value_name = "MS", value_parser = whole::<u64, 1, MAX_MOVETIME_MS>)]
    pub movetime: Option<u64>,
    /// Fixed depth: measures nodes, speed-up, same move, same value.
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// Fixed nodes per search (the same budget for every variant, exact on a busy machine).
    #[arg(long, value_name = "N", value_parser = whole::<u64, 1, { u64::MAX }>)]
    pub nodes: Option<u64>,
    /// Score each variant's move with an oracle engine: `SPEC[,depth=N|nodes=N|movetime=MS]`,
    /// SPEC an engine spec or name; alone (`--oracle` or `--oracle depth=10`): Debian's
    /// stockfish; default limit depth 12.
    #[arg(long, value_name = "SPEC", num_args = 0..=1, default_missing_value = "")]
    pub oracle: Option<String>,
    /// The oracle's evaluation cache (JSONL, appended; shared by runs).
    #[arg(long, value_name = "FILE", default_value = "results/oracle-cache.jsonl")]
    pub oracle_cache: PathBuf,
    /// Output directory (default results/searchtest-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Engine processes searching at once (default: number of CPUs).
    #[arg(long, value_name = "N", value_parser = parse_concurrency)]
    pub concurrency: Option<usize>,
    /// A search running this much longer than asked is a fault: the position is skipped.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub timeout: f64,
}

/// `runner match` options for more than two engines.
#[derive(Args, Debug, Clone, Default)]
pub struct TournamentArgs {
    /// With more than two --engine: gauntlet (the first engine(s) against each of the others) or
    /// round-robin (everyone against everyone).
    #[arg(long, value_enum, default_value_t = Tournament::Gauntlet)]
    pub tournament: Tournament,
    /// Gauntlet: the first N engines are the ones under test; each plays every other engine
    /// (the engines under test do not play each other).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub gauntlet_seats: usize,
    /// The engine whose rating is fixed in the ratings table [default: the first engine].
    #[arg(long, value_name = "NAME")]
    pub anchor: Option<String>,
    /// The anchor's rating.
    #[arg(
        long,
        value_name = "ELO",
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_parser = parse_anchor_elo
    )]
    pub anchor_elo: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clap's refusal of `args` (after `runner`), or a panic when they parse.
    fn refused(args: &[&str]) -> String {
        let args = std::iter::once("runner").chain(args.iter().copied());
        match Cli::try_parse_from(args) {
            Ok(c) => panic!("{args:?} parsed: {c:?}", args = c.command),
            Err(e) => e.to_string(),
        }
    }

    /// Each (flag, value) with `head` is refused naming the flag and the range.
    fn all_refused(head: &[&str], cases: &[(&str, &str)]) {
        for (flag, value) in cases {
            let mut args = head.to_vec();
            args.extend([*flag, *value]);
            let e = refused(&args);
            assert!(e.contains(flag) && e.contains("expected a whole number from"), "{e}");
            assert_eq!(e.lines().next().map(|l| l.starts_with("error: ")), Some(true), "{e}");
        }
    }

    /// The numeric flags of a run.
    #[test]
    fn run_flags_out_of_range_are_refused() {
        let big = "18446744073709551616";
        all_refused(
            &["match"],
            &[
                ("--nodes", "0"),
                ("--nodes", "18446744073709551615"),
                ("--maxmoves", "0"),
                ("--maxmoves", "4294967295"),
                ("--book-plies", "0"),
                ("--book-plies", big),
            ],
        );
        let sweep = ["sweep", "--param", "Hash", "--values", "1,2", "--adaptive"];
        all_refused(&sweep, &[("--adaptive-min-pairs", "0"), ("--adaptive-min-pairs", big)]);
        assert!(
            Cli::try_parse_from(["runner", "match", "--nodes", "1", "--maxmoves", "10"]).is_ok()
        );
    }

    /// `runner book`'s counts.
    #[test]
    fn book_flags_out_of_range_are_refused() {
        all_refused(
            &["book"],
            &[
                ("--count", "0"),
                ("--count", "10000000000"),
                ("--per-line", "0"),
                ("--per-line", "1000000000000"),
                ("--plies", "1000000"),
            ],
        );
    }

    /// Calibrate's and searchtest's counts and times; their --concurrency is capped
    /// as a match's.
    #[test]
    fn tool_flags_out_of_range_are_refused() {
        all_refused(
            &["calibrate"],
            &[("--sample-count", "0"), ("--sample-count", "1e9"), ("--limit", "0")],
        );
        let st = ["searchtest", "--variant", "a:MPC=false", "--variant", "b:MPC=true"];
        all_refused(
            &st,
            &[("--movetime", "0"), ("--movetime", "86400000000"), ("--limit", "100000000000")],
        );
        for tool in [&["calibrate"][..], &st] {
            let mut args = tool.to_vec();
            args.extend(["--concurrency", "100000"]);
            assert!(refused(&args).contains("100000 is more than"));
        }
    }

    /// `runner serve --bind 8091` listens on 127.0.0.1:8091; a bad address says what it takes.
    #[test]
    fn a_bare_port_binds_localhost() {
        assert_eq!(parse_bind("8091"), Ok("127.0.0.1:8091".parse().unwrap()));
        assert_eq!(parse_bind("0.0.0.0:80"), Ok("0.0.0.0:80".parse().unwrap()));
        assert_eq!(parse_bind("[::1]:8091"), Ok("[::1]:8091".parse().unwrap()));
        let e = refused(&["serve", "--bind", "localhost:x"]);
        assert!(e.contains("e.g. 8091 (127.0.0.1:8091)"), "{e}");
    }
}
