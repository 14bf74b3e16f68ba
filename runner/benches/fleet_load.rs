//! The fleet queue's load benchmark (issue 26, "Performance"): the queue alone, no engines.
//!
//! For each worker count it starts a throwaway PostgreSQL cluster (`e2e::pg::TempPg`: Unix
//! socket, **fsync on**, `synchronous_commit` on, `max_connections` set explicitly), runs
//! `schema::init`, submits one synthetic match run, and lets N synthetic workers (tokio tasks,
//! each with its own connection like a worker process, each registered as a worker) loop
//! claim 1 pair -> report it for a fixed time, through the queue's calls a worker's request
//! runs on the server (the registration under a worker key, the claim, the report and the
//! heartbeat, all the server's own statements, and the server's decision in Rust,
//! `queue::settle`). Reports carry two game records of realistic size (2-4 KB of JSON each)
//! that name the pair, the game, the pairing's engines and a result from a realistic mix: the
//! report reads the pair's result from them. The run is judged by its stored rules (an SPRT,
//! `fleet::decide::judge_config`) with bounds that do not decide within the test; after a
//! stored report the run is decided (`queue::settle::decide`) when the returned counts say a
//! decision may be due or nothing is left open, as the server does after a report.
//! Each worker sends a heartbeat for its lease every few seconds. Afterwards the database is
//! checked: every done pair has exactly two games, no game lacks a done pair, the tallies equal
//! the stored games, no pair was handed out twice, nothing a worker was told is stored is
//! missing. Then the cost of one decision is measured: the server's decision asked for by a
//! fresh worker (`queue::settle::decide_for`, what `POST /settle` runs: the worker's check, then
//! the decision's transaction) on the run with every stored pair.
//!
//! ```text
//! cargo bench -p runner --bench fleet_load -- [--workers 10,100,500] [--runs 1,100]
//!     [--seconds N] [--pairs N] [--max-connections N] [--via direct|pgbouncer] [--pool N]
//!     [--heartbeat SECONDS] [--statements] [--play-ms MS]
//! cargo bench -p runner --bench fleet_load -- --via http [--workers N,..] [--runs N,..]
//!     [--idle N] [--seconds N] [--play-ms MS]
//! cargo bench -p runner --bench fleet_load -- --shares [--seconds N] [--play-ms MS]
//! ```
//!
//! `--runs N` submits N active runs (the pairs split among them) and the workers claim from
//! any run, as a worker without `--run` does, passing the run they played last: one row per
//! worker count and run count, to compare what the claim costs with many runs (the claim
//! ranks every active run by its share). `--shares` measures how claims share the workers
//! instead (`share_bench`): three runs of throughput 100, 100 and 200 over four workers that
//! "play" each pair for `--play-ms`, and a 20-game run submitted behind a 20,000-game one.
//!
//! `--via pgbouncer` puts Debian's PgBouncer (`/usr/sbin/pgbouncer`) in transaction pooling
//! mode between the workers and the server, with `--pool` server connections.
//!
//! `--via http` puts the fleet's server between them instead (`runner serve --db`, this
//! build's binary, as a process of its own): the workers speak the worker API through the
//! worker's own HTTP client and do what `runner worker --server URL` does, heartbeats at its
//! interval and idle polls included; every request's latency is printed by kind (`http`).
//! `--idle N` adds N workers that find nothing to claim and poll as an idle worker does.
//!
//! The client (this process) and the server share the machine: on a small machine the figures
//! include the client's own CPU (JSON, the worker's SPRT look at the counts, 500 tasks).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::pg::{DBNAME, TempPg, USER};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use runner::fleet::bounded::Name;
use runner::fleet::connect::parse_target;
use runner::fleet::decide::{RunJudge, judge_config};
use runner::fleet::queue::share::Share;
use runner::fleet::queue::{self, NewRun, PairReport, Reported, people};
use runner::fleet::rights::Principal;
use runner::fleet::schema;
use serde_json::{Value, json};
use stats::GameScore;

#[path = "fleet_load/http.rs"]
mod http;
#[path = "fleet_load/kinds.rs"]
mod kinds;

/// An SPRT that a fleet of equal engines does not decide within minutes (nElo bounds 1 apart,
/// error rates 0.001: about 10^6 pairs to a decision).
const SPRT: &str = "elo0=-0.5,elo1=0.5,alpha=0.001,beta=0.001";
/// The lease each claim takes (long: no lease may expire during the test).
const LEASE: Duration = Duration::from_secs(120);
/// Pair results LL, LD, DD, WD, WW of two close engines at a fast control (per mille); half of
/// the DD bin is played as WL.
const PENTA_PERMILLE: [u32; 5] = [40, 190, 540, 190, 40];
/// The label of the run's one pairing.
const LABEL: &str = "new vs base";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Direct,
    Pgbouncer,
    /// Through `runner serve`'s worker API (`http`).
    Http,
}

#[derive(Clone, Debug)]
struct Opts {
    workers: Vec<usize>,
    /// Active runs the workers claim from.
    runs: Vec<usize>,
    /// Measure the shares instead of the load (`share_bench`).
    shares: bool,
    seconds: f64,
    pairs: Option<usize>,
    max_connections: u32,
    via: Via,
    pool: usize,
    heartbeat: f64,
    /// Load pg_stat_statements and print where the server's time went.
    statements: bool,
    /// Milliseconds each worker "plays" a pair between claim and report (uniform in 0.5x to
    /// 1.5x): 0 is a closed loop that saturates the server; more offers a chosen load.
    play_ms: f64,
    /// Workers prepare their frequent statements once per connection (`queue::Conn`); default
    /// on for direct connections, off through PgBouncer (Debian 12's 1.18 does not keep them).
    prepared: Option<bool>,
    /// With `--via http`: workers beside the N that find nothing to claim (idle polls).
    idle: usize,
    /// With `--via http`: each worker process starts (its `version` and `register`) at a
    /// seeded random moment within this many milliseconds, as machines started by people or by
    /// a launcher do; 0 (the default) starts all of them in the same instant, a burst.
    start_spread_ms: f64,
}

fn usage() -> ! {
    eprintln!(
        "usage: cargo bench -p runner --bench fleet_load -- [--workers 10,100,500] \
         [--runs 1,100] [--shares] [--seconds N] [--pairs N] [--max-connections N] [--via direct|pgbouncer|http] [--pool N] \
         [--heartbeat SECONDS] [--statements] [--play-ms MS] [--prepared on|off] [--idle N] \
         [--start-spread-ms MS]"
    );
    std::process::exit(2)
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            workers: vec![10, 100, 500],
            runs: vec![1],
            shares: false,
            seconds: 20.0,
            pairs: None,
            max_connections: 100,
            via: Via::Direct,
            pool: 20,
            heartbeat: 3.0,
            statements: false,
            play_ms: 0.0,
            prepared: None,
            idle: 0,
            start_spread_ms: 0.0,
        }
    }
}

/// A list of counts above zero (`10,100,500`), the value of `flag`; usage when it is not one.
fn counts(flag: &str, v: &str) -> Vec<usize> {
    v.split(',')
        .map(|s| s.trim().parse().ok().filter(|&n: &usize| n > 0))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_else(|| {
            eprintln!("{flag}: `{v}` is not valid");
            usage()
        })
}

fn parse_args() -> Opts {
    let mut o = Opts::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        // `cargo bench` adds `--bench` to every harness = false bench.
        if a == "--bench" {
            continue;
        }
        let mut value = || {
            args.next().unwrap_or_else(|| {
                eprintln!("{a} needs a value");
                usage()
            })
        };
        let bad = |what: &str, v: &str| -> ! {
            eprintln!("{what}: `{v}` is not valid");
            usage()
        };
        match a.as_str() {
            "--workers" => o.workers = counts("--workers", &value()),
            "--runs" => o.runs = counts("--runs", &value()),
            "--shares" => o.shares = true,
            "--seconds" => {
                let v = value();
                o.seconds =
                    v.parse().ok().filter(|&s: &f64| s > 0.0).unwrap_or_else(|| bad(&a, &v));
            }
            "--pairs" => {
                let v = value();
                o.pairs =
                    Some(v.parse().ok().filter(|&n: &usize| n > 0).unwrap_or_else(|| bad(&a, &v)));
            }
            "--max-connections" => {
                let v = value();
                o.max_connections =
                    v.parse().ok().filter(|&n: &u32| n >= 10).unwrap_or_else(|| bad(&a, &v));
            }
            "--via" => {
                let v = value();
                o.via = match v.as_str() {
                    "direct" => Via::Direct,
                    "pgbouncer" => Via::Pgbouncer,
                    "http" => Via::Http,
                    _ => bad(&a, &v),
                };
            }
            "--pool" => {
                let v = value();
                o.pool = v.parse().ok().filter(|&n: &usize| n > 0).unwrap_or_else(|| bad(&a, &v));
            }
            "--statements" => o.statements = true,
            "--idle" => {
                let v = value();
                o.idle = v.parse().ok().unwrap_or_else(|| bad(&a, &v));
            }
            "--prepared" => {
                let v = value();
                o.prepared = match v.as_str() {
                    "on" => Some(true),
                    "off" => Some(false),
                    _ => bad(&a, &v),
                };
            }
            "--play-ms" => {
                let v = value();
                o.play_ms =
                    v.parse().ok().filter(|&s: &f64| s >= 0.0).unwrap_or_else(|| bad(&a, &v));
            }
            "--start-spread-ms" => {
                let v = value();
                o.start_spread_ms =
                    v.parse().ok().filter(|&s: &f64| s >= 0.0).unwrap_or_else(|| bad(&a, &v));
            }
            "--heartbeat" => {
                let v = value();
                o.heartbeat =
                    v.parse().ok().filter(|&s: &f64| s > 0.0).unwrap_or_else(|| bad(&a, &v));
            }
            _ => {
                eprintln!("unknown argument {a}");
                usage()
            }
        }
    }
    o
}

/// What one synthetic worker measured.
#[derive(Default)]
struct WorkerOut {
    connect_error: Option<String>,
    claim: Vec<Duration>,
    report: Vec<Duration>,
    heartbeat: Vec<Duration>,
    /// Decisions after a stored report (when the counts said one may be due, or nothing was
    /// left open): the server's decision in Rust, or with `--via http` a `POST /settle`.
    settle: Vec<Duration>,
    stored: u64,
    refused: Vec<String>,
    errors: Vec<String>,
    claimed: Vec<(i64, i32, i32)>,
    lost_leases: u64,
    ran_dry: bool,
    decided: bool,
    record_bytes: u64,
}

/// Game records of realistic size: a header like `games.jsonl`'s and 40-100 moves of each side
/// with score, depth and times.
fn templates(rng: &mut ChaCha8Rng) -> Vec<Value> {
    let files = b"abcdefgh";
    (0..32)
        .map(|_| {
            let plies = rng.random_range(60..200usize);
            let sq = |rng: &mut ChaCha8Rng| {
                format!("{}{}", files[rng.random_range(0..8)] as char, rng.random_range(1..=8u8))
            };
            let moves: Vec<String> =
                (0..plies).map(|_| format!("{}{}", sq(rng), sq(rng))).collect();
            let scores: Vec<Value> =
                (0..plies - 8).map(|_| json!({"cp": rng.random_range(-300..300)})).collect();
            let depths: Vec<u32> = (0..plies - 8).map(|_| rng.random_range(6..20)).collect();
            let times: Vec<f64> = (0..plies - 8)
                .map(|_| (rng.random_range(5.0..400.0f64) * 10.0).round() / 10.0)
                .collect();
            let etimes: Vec<u64> = times.iter().map(|t| *t as u64).collect();
            json!({
                "seq": 0, "pairing": 0, "label": "new vs base", "pair": 0, "game": 0,
                "opening": 0,
                "fen": "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                "white": ENGINES.0, "black": ENGINES.1, "result": "1/2-1/2",
                "termination": "adjudication-draw", "plies": plies, "book_plies": 8,
                "moves": moves, "scores": scores, "depths": depths, "times_ms": times,
                "engine_times_ms": etimes,
                "latency": {"overhead_ms_mean": 0.4, "overhead_ms_max": 2.1,
                            "turnaround_us_mean": 180.0, "turnaround_us_max": 950},
                "duration_ms": 19873, "date": "2026.11.25",
                "plan_hash": "5f1d0c6e2b7a94c3d8e1f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6"
            })
        })
        .collect()
}

/// The run's one pairing: its first and second engine, as the game records name them.
const ENGINES: (&str, &str) = ("new", "base");

/// A pair's result: its penta index, the first engine's W-D-L and each game's first-engine
/// score (1, 0.5, 0).
fn draw_pair(rng: &mut ChaCha8Rng) -> [GameScore; 2] {
    let mut x = rng.random_range(0..1000u32);
    let mut idx = 0;
    for (i, p) in PENTA_PERMILLE.iter().enumerate() {
        if x < *p {
            idx = i;
            break;
        }
        x -= p;
    }
    use GameScore::{Draw, Loss, Win};
    let scores = match idx {
        0 => [Loss, Loss],
        1 => [Loss, Draw],
        2 if rng.random_bool(0.5) => [Win, Loss],
        2 => [Draw, Draw],
        3 => [Win, Draw],
        _ => [Win, Win],
    };
    if rng.random_bool(0.5) { [scores[1], scores[0]] } else { scores }
}

/// Game `game` of claim `c` from template `t`: it names the pair, the game and the engines (game
/// 0: the first engine has White, game 1: Black) and carries the result that gives the first
/// engine `first_score`, which is what the database reads back.
fn record(t: &Value, c: &queue::Claim, game: u8, first_score: GameScore) -> Value {
    let mut r = t.clone();
    let first_white = game == 0;
    let first_won = first_score == GameScore::Win;
    let result = if first_score == GameScore::Draw {
        "1/2-1/2"
    } else if first_won == first_white {
        "1-0"
    } else {
        "0-1"
    };
    r["seq"] = json!(c.seq);
    r["pairing"] = json!(c.pairing);
    r["pair"] = json!(c.pair);
    r["game"] = json!(game);
    r["opening"] = json!(c.opening);
    r["result"] = json!(result);
    let (white, black) = if first_white { ENGINES } else { (ENGINES.1, ENGINES.0) };
    r["white"] = json!(white);
    r["black"] = json!(black);
    r
}

/// The report of claimed pair `c` with its two game records.
fn pair_report<'a>(c: &queue::Claim, records: [&'a Value; 2]) -> PairReport<'a> {
    PairReport { run_id: c.run_id, pairing: c.pairing, pair: c.pair, token: c.token, records }
}

struct Shared {
    url: String,
    /// The worker key every synthetic worker registers under.
    key: String,
    spec: stats::SprtSpec,
    templates: Vec<Value>,
    heartbeat: Duration,
    play_ms: f64,
    prepared: bool,
}

async fn worker(
    i: usize,
    sh: Arc<Shared>,
    ready: tokio::sync::mpsc::Sender<bool>,
    mut go: tokio::sync::watch::Receiver<Option<(Instant, Instant)>>,
) -> WorkerOut {
    let mut out = WorkerOut::default();
    let Some((mut db, wid)) = connect_and_register(i, &sh, &mut out).await else {
        let _ = ready.send(false).await;
        return out;
    };
    let _ = ready.send(true).await;
    let (start, deadline) = loop {
        if let Some(t) = *go.borrow() {
            break t;
        }
        if go.changed().await.is_err() {
            return out;
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed ^ i as u64);
    // The look at the counts a report returns that says when to decide (the server's).
    let judge = RunJudge { sprt: Some(sh.spec), race: None, labels: vec![LABEL.to_string()] };
    // Heartbeats spread over the interval, as independent processes' would be.
    let mut next_hb = start + sh.heartbeat.mul_f64(rng.random_range(0.0..1.0));
    // Paced workers start spread over one play time, as independent machines would, instead of
    // all claiming in the same instant.
    if sh.play_ms > 0.0 {
        let ms = sh.play_ms * rng.random_range(0.0..1.0);
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
    // The run this worker played last (the claim keeps it there while within its share).
    let mut current: Option<i64> = None;
    while Instant::now() < deadline {
        let ask = queue::ClaimAsk { current, ..queue::ClaimAsk::new(1, LEASE) };
        let t = Instant::now();
        let claims = match queue::claim_from(&db, &wid, &ask).await {
            Ok(c) => c,
            Err(e) => {
                out.errors.push(format!("claim: {e:#}"));
                break;
            }
        };
        out.claim.push(t.elapsed());
        let Some(c) = claims.into_iter().next() else {
            out.ran_dry = true;
            break;
        };
        out.claimed.push((c.run_id, c.pairing, c.pair));
        current = Some(c.run_id);
        if Instant::now() >= next_hb {
            let t = Instant::now();
            match queue::heartbeat(&db, &wid, &[c.token], LEASE).await {
                Ok(alive) => {
                    out.heartbeat.push(t.elapsed());
                    if alive != [c.token] {
                        out.lost_leases += 1;
                    }
                }
                Err(e) => {
                    out.errors.push(format!("heartbeat: {e:#}"));
                    break;
                }
            }
            next_hb += sh.heartbeat;
        }
        if sh.play_ms > 0.0 {
            let ms = sh.play_ms * rng.random_range(0.5..1.5);
            tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
        }
        if report_pair(&mut db, &wid, &sh, &judge, &c, &mut rng, &mut out).await.is_break() {
            break;
        }
    }
    let _ = queue::worker_stopped(&db, &wid).await;
    out
}

/// Connects as a worker does, retrying a refused connection a few times with backoff (500
/// workers connecting in the same instant overflow a listen queue), and registers worker `i`;
/// `None` when it cannot (the error in `out`).
async fn connect_and_register(
    i: usize,
    sh: &Shared,
    out: &mut WorkerOut,
) -> Option<(queue::Conn, queue::WorkerId)> {
    let target = parse_target(&sh.url).expect("the bench's connection string parses");
    let mut attempt = 0;
    let db = loop {
        match target.connect().await {
            Ok(c) => match queue::Conn::open(c, sh.prepared).await {
                Ok(c) => break c,
                Err(e) => {
                    out.connect_error = Some(format!("{e:#}"));
                    return None;
                }
            },
            Err(e) if attempt == 4 => {
                out.connect_error = Some(format!("{e:#}"));
                return None;
            }
            Err(_) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
        }
    };
    match queue::register_worker(&db, &sh.key, "bench", i as i32, 1, LEASE).await {
        Ok(w) => Some((db, w)),
        Err(e) => {
            out.connect_error = Some(format!("{e:#}"));
            None
        }
    }
}

/// Draws the two games of claimed pair `c`, reports them and, as the server does after a
/// report, decides the run when a decision may be due. `Break`: the worker stops (the error in
/// `out`).
async fn report_pair(
    db: &mut queue::Conn,
    wid: &queue::WorkerId,
    sh: &Shared,
    judge: &RunJudge,
    c: &queue::Claim,
    rng: &mut ChaCha8Rng,
    out: &mut WorkerOut,
) -> ControlFlow<()> {
    let scores = draw_pair(rng);
    let n = sh.templates.len();
    let g0 = record(&sh.templates[rng.random_range(0..n)], c, 0, scores[0]);
    let g1 = record(&sh.templates[rng.random_range(0..n)], c, 1, scores[1]);
    out.record_bytes += (g0.to_string().len() + g1.to_string().len()) as u64;
    let r = pair_report(c, [&g0, &g1]);
    let t = Instant::now();
    match queue::report(&*db, wid, &r, judge.needs_all()).await {
        Ok(Reported::Stored { counts, open, .. }) => {
            out.report.push(t.elapsed());
            out.stored += 1;
            // As the server does after a stored report (the worker checked by it): decide when
            // a decision may be due.
            if judge.may_stop(&counts) || !open {
                let t = Instant::now();
                match queue::settle::decide(db, c.run_id).await {
                    Ok(s) => {
                        out.settle.push(t.elapsed());
                        if s.state != "active" || !s.stops.is_empty() {
                            out.decided = true;
                        }
                    }
                    Err(e) => {
                        out.errors.push(format!("decide: {e:#}"));
                        return ControlFlow::Break(());
                    }
                }
            }
        }
        Ok(Reported::Refused(why)) => out.refused.push(why),
        Err(e) => {
            out.errors.push(format!("report: {e:#}"));
            return ControlFlow::Break(());
        }
    }
    ControlFlow::Continue(())
}

/// CPU seconds (user + system) of the PostgreSQL server: the postmaster and its children
/// (backends, WAL writer, checkpointer, autovacuum) alive now.
fn server_cpu(pg: &TempPg) -> f64 {
    let pid_file = pg.socket_dir().join("data").join("postmaster.pid");
    let Some(master) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
    else {
        return f64::NAN;
    };
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut total = 0u64;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // Fields after the command's closing parenthesis: state ppid ... utime(14) stime(15).
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let pid: u32 = head.split(' ').next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ppid: u32 = f.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        if pid == master || ppid == master {
            let t = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            total += t(11) + t(12);
        }
    }
    total as f64 / tick
}

/// CPU seconds (user + system) of process `pid` (0 when it is gone).
fn process_cpu(pid: u32) -> f64 {
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0.0 };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (t(11) + t(12)) as f64 / tick
}

/// CPU seconds (user + system) of this process.
fn client_cpu() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn pct(v: &mut [Duration], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i].as_secs_f64() * 1000.0
}

fn mean_ms(v: &[Duration]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0 / v.len() as f64
}

/// PgBouncer in transaction pooling mode in front of `pg`, on its own socket folder.
struct Bouncer {
    child: Child,
    dir: PathBuf,
}

impl Bouncer {
    fn start(pg: &TempPg, pool: usize) -> Bouncer {
        let exe = Path::new("/usr/sbin/pgbouncer");
        assert!(
            exe.exists(),
            "PgBouncer not found (/usr/sbin/pgbouncer): install Debian's `pgbouncer` package"
        );
        let dir = std::env::temp_dir().join(format!("pgb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("PgBouncer's folder");
        let ini = format!(
            "[databases]\n{DBNAME} = host={} dbname={DBNAME}\n[pgbouncer]\n\
             listen_addr =\nlisten_port = 6432\nunix_socket_dir = {}\nauth_type = trust\n\
             auth_file = {}/users.txt\npool_mode = transaction\nmax_client_conn = 2000\n\
             default_pool_size = {pool}\nmax_db_connections = {pool}\nlisten_backlog = 4096\n\
             logfile = {}/pgbouncer.log\n\
             pidfile = {}/pgbouncer.pid\n",
            pg.socket_dir().display(),
            dir.display(),
            dir.display(),
            dir.display(),
            dir.display()
        );
        std::fs::write(dir.join("pgbouncer.ini"), ini).expect("pgbouncer.ini");
        std::fs::write(dir.join("users.txt"), format!("\"{USER}\" \"\"\n")).expect("users.txt");
        // PgBouncer refuses to run as root; the cluster's files belong to `postgres` then too.
        let root = unsafe { libc::geteuid() } == 0;
        let mut cmd = if root {
            let _ = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status();
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let child = cmd
            .arg(dir.join("pgbouncer.ini"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start pgbouncer");
        let sock = dir.join(".s.PGSQL.6432");
        for _ in 0..100 {
            if sock.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(sock.exists(), "pgbouncer did not open {}", sock.display());
        Bouncer { child, dir }
    }

    fn url(&self) -> String {
        format!("host={} port=6432 user={USER} dbname={DBNAME}", self.dir.display())
    }

    /// CPU seconds of the PgBouncer process.
    fn cpu(&self) -> f64 {
        std::fs::read_to_string(self.dir.join("pgbouncer.pid"))
            .ok()
            .and_then(|p| p.trim().parse().ok())
            .map_or(0.0, process_cpu)
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        // runuser forwards the signal to pgbouncer.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("pgbouncer.pid"))
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Row {
    workers: usize,
    runs: usize,
    connected: usize,
    reports_per_s: f64,
    claim: (f64, f64),
    report: (f64, f64),
    heartbeat: (f64, f64),
    overhead_ms: f64,
    lost: i64,
    doubled: i64,
    tallies_ok: bool,
    notes: Vec<String>,
}

async fn one(o: &Opts, n: usize, n_runs: usize) -> Row {
    let pg = start_server(o, n);
    let mut admin = parse_target(&pg.url()).unwrap().connect().await.expect("connect");
    schema::init(&mut admin).await.expect("schema::init");
    // The workers register under a key an approver issued, as a fleet's workers do.
    let key = key_add(&mut admin, "bench").await;
    let spec = stats::SprtSpec::parse(SPRT).expect("the bench's SPRT parses");
    let judge = judge_config(Some(&spec), None, 1, None);
    let runs = submit_runs(&mut admin, o, n_runs, &judge).await;
    let run = runs[0];
    pg.psql("VACUUM ANALYZE");
    let bouncer = (o.via == Via::Pgbouncer).then(|| Bouncer::start(&pg, o.pool));
    let url = bouncer.as_ref().map_or_else(|| pg.url(), Bouncer::url);
    let sh = Arc::new(Shared {
        url,
        key,
        spec,
        templates: templates(&mut ChaCha8Rng::seed_from_u64(7)),
        heartbeat: Duration::from_secs_f64(o.heartbeat),
        play_ms: o.play_ms,
        prepared: o.prepared.unwrap_or(o.via == Via::Direct),
    });
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(n);
    let (go_tx, go_rx) = tokio::sync::watch::channel(None);
    let tasks = client_threads(n, &sh, &ready_tx, &go_rx);
    drop(ready_tx);
    let mut connected = 0;
    for _ in 0..n {
        if ready_rx.recv().await == Some(true) {
            connected += 1;
        }
    }
    let bouncer_cpu = || bouncer.as_ref().map_or(0.0, Bouncer::cpu);
    let (cpu_server0, cpu_client0, cpu_bouncer0) = (server_cpu(&pg), client_cpu(), bouncer_cpu());
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(o.seconds);
    let _ = go_tx.send(Some((start, deadline)));
    tokio::time::sleep_until(deadline.into()).await;
    let cpu =
        (server_cpu(&pg) - cpu_server0, client_cpu() - cpu_client0, bouncer_cpu() - cpu_bouncer0);
    let mut outs = Vec::new();
    for t in tasks {
        let o = tokio::task::spawn_blocking(move || t.join()).await.expect("join");
        outs.extend(o.expect("a client thread panicked"));
    }
    let secs = start.elapsed().as_secs_f64();
    let mut notes = worker_notes(&outs, n_runs);
    let settle: Vec<Duration> = outs.iter().flat_map(|w| w.settle.clone()).collect();
    let stored: u64 = outs.iter().map(|w| w.stored).sum();
    let bytes: u64 = outs.iter().map(|w| w.record_bytes).sum();
    if stored > 0 {
        notes.push(format!("mean game record {} bytes", bytes / (2 * stored)));
    }
    let mut claim: Vec<Duration> = outs.iter().flat_map(|w| w.claim.clone()).collect();
    let mut report: Vec<Duration> = outs.iter().flat_map(|w| w.report.clone()).collect();
    let mut hb: Vec<Duration> = outs.iter().flat_map(|w| w.heartbeat.clone()).collect();
    let hb_total: f64 = hb.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0;
    let settle_total: f64 = settle.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0;
    notes.push(cpu_note(cpu, stored));
    let overhead_ms = if stored > 0 {
        mean_ms(&claim) + mean_ms(&report) + (hb_total + settle_total) / stored as f64
    } else {
        f64::NAN
    };

    // The database's own account, checked after every worker stopped.
    let claimed_twice = claimed_twice(&outs);
    // Every run of the database is the bench's: `$RUN` stands for all of them.
    let all_runs = runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
    let (lost, doubled, tallies_ok) =
        database_account(&pg, &all_runs, stored, claimed_twice, &mut notes);
    decision_cost(&mut admin, &sh.key, run, &mut notes).await;
    if o.statements {
        print_server_statements(&pg, n);
    }
    runs_notes(&pg, n_runs, &all_runs, &mut notes);
    drop(bouncer);
    drop(admin);
    drop(pg);
    Row {
        workers: n,
        runs: n_runs,
        connected,
        reports_per_s: stored as f64 / secs,
        claim: (pct(&mut claim, 0.5), pct(&mut claim, 0.99)),
        report: (pct(&mut report, 0.5), pct(&mut report, 0.99)),
        heartbeat: (pct(&mut hb, 0.5), pct(&mut hb, 0.99)),
        overhead_ms,
        lost,
        doubled,
        tallies_ok,
        notes,
    }
}

/// A fresh PostgreSQL for a test of `n` workers, configured (`--max-connections`, and with
/// `--statements` the statistics of statements and functions) and restarted; its settings
/// printed.
fn start_server(o: &Opts, n: usize) -> TempPg {
    let mut pg = TempPg::start_durable("load");
    pg.psql(&format!("ALTER SYSTEM SET max_connections = {}", o.max_connections));
    if o.statements {
        pg.psql("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
        // Time spent in each function too (the worker functions, the key check, the record
        // checks): pg_stat_user_functions.
        pg.psql("ALTER SYSTEM SET track_functions = 'all'");
        // Not settable by ALTER SYSTEM before the library is loaded. `track = all`: the
        // statements inside the functions are counted too.
        let conf = pg.socket_dir().join("data").join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).expect("postgresql.conf");
        text.push_str("pg_stat_statements.track_planning = on\npg_stat_statements.track = all\n");
        std::fs::write(&conf, text).expect("postgresql.conf");
    }
    pg.restart();
    if o.statements {
        pg.psql("CREATE EXTENSION pg_stat_statements");
    }
    let settings = pg.psql(
        "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE \
         name IN ('fsync', 'synchronous_commit', 'max_connections', 'wal_sync_method', \
         'shared_buffers', 'server_version', 'superuser_reserved_connections')",
    );
    eprintln!("[{n} workers] server: {settings}");
    pg
}

/// Each client thread runs its share of the `n` workers on a single-threaded runtime, one
/// thread per core (as a worker process runs its games on its own runtime); each returns its
/// workers' measures.
fn client_threads(
    n: usize,
    sh: &Arc<Shared>,
    ready_tx: &tokio::sync::mpsc::Sender<bool>,
    go_rx: &tokio::sync::watch::Receiver<Option<(Instant, Instant)>>,
) -> Vec<std::thread::JoinHandle<Vec<WorkerOut>>> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(n);
    (0..threads)
        .map(|t| {
            let (sh, ready_tx, go_rx) = (sh.clone(), ready_tx.clone(), go_rx.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                let local = tokio::task::LocalSet::new();
                local.block_on(&rt, async move {
                    let hs: Vec<_> = (t..n)
                        .step_by(threads)
                        .map(|i| {
                            tokio::task::spawn_local(worker(
                                i,
                                sh.clone(),
                                ready_tx.clone(),
                                go_rx.clone(),
                            ))
                        })
                        .collect();
                    let mut outs = Vec::new();
                    for h in hs {
                        outs.push(h.await.expect("a worker task panicked"));
                    }
                    outs
                })
            })
        })
        .collect()
}

/// The notes on what the workers met: connection errors, errors, refusals, decisions, lost
/// leases, a run that ran dry or was decided (`n_runs` runs).
fn worker_notes(outs: &[WorkerOut], n_runs: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let conn_errors: Vec<&String> = outs.iter().filter_map(|w| w.connect_error.as_ref()).collect();
    if let Some(e) = conn_errors.first() {
        notes.push(format!("{} workers could not connect: {e}", conn_errors.len()));
    }
    let errors: Vec<&String> = outs.iter().flat_map(|w| &w.errors).collect();
    if let Some(e) = errors.first() {
        notes.push(format!("{} workers stopped on an error, first: {e}", errors.len()));
    }
    let refused: usize = outs.iter().map(|w| w.refused.len()).sum();
    if refused > 0 {
        notes.push(format!("{refused} reports refused"));
    }
    let lost_leases: u64 = outs.iter().map(|w| w.lost_leases).sum();
    let settles: usize = outs.iter().map(|w| w.settle.len()).sum();
    let mut settle: Vec<Duration> = outs.iter().flat_map(|w| w.settle.clone()).collect();
    notes.push(format!(
        "{settles} decisions during the test (p50 / p99 {:.1} / {:.1} ms)",
        pct(&mut settle, 0.5),
        pct(&mut settle, 0.99)
    ));
    if lost_leases > 0 {
        notes.push(format!("{lost_leases} heartbeats found a lease lost"));
    }
    if outs.iter().any(|w| w.ran_dry) {
        notes.push("the run ran out of pairs: give more --pairs".into());
    }
    if outs.iter().any(|w| w.decided) {
        // With one run, its end ends the work; with many, the workers go on with the others
        // (`the runs are ...` below says how many ended).
        if n_runs == 1 {
            notes.push("the run was decided during the test: figures invalid".into());
        } else {
            notes.push("runs ended during the test; the workers went on with the others".into());
        }
    }
    notes
}

/// The database's own account of runs `all_runs`, checked after every worker stopped, against
/// the `stored` reports and the pairs `claimed_twice`: pairs lost, pairs doubled, and whether
/// the tallies agree with the games (a note when not).
fn database_account(
    pg: &TempPg,
    all_runs: &str,
    stored: u64,
    claimed_twice: i64,
    notes: &mut Vec<String>,
) -> (i64, i64, bool) {
    let q = |sql: &str| -> i64 {
        let s = pg.psql(&sql.replace("run_id = $RUN", &format!("run_id IN ({all_runs})")));
        s.parse().unwrap_or_else(|_| panic!("{sql}: {s}"))
    };
    let done = q("SELECT count(*) FROM pairs WHERE run_id = $RUN AND state = 'done'");
    let leased = q("SELECT count(*) FROM pairs WHERE run_id = $RUN AND state = 'leased'");
    let bad_done = q("SELECT count(*) FROM (SELECT p.pair FROM pairs p LEFT JOIN games g \
         ON g.run_id = p.run_id AND g.pairing = p.pairing AND g.pair = p.pair \
         WHERE p.run_id = $RUN AND p.state = 'done' GROUP BY p.run_id, p.pairing, p.pair \
         HAVING count(g.id) <> 2) x");
    let orphans = q("SELECT count(*) FROM games g WHERE g.run_id = $RUN AND NOT EXISTS \
         (SELECT 1 FROM pairs p WHERE p.run_id = g.run_id AND p.pairing = g.pairing \
          AND p.pair = g.pair AND p.state = 'done')");
    let lost = (stored as i64 - done).max(0) + leased;
    let doubled = bad_done + orphans + claimed_twice + (done - stored as i64).max(0);
    let tallies = pg.psql(&format!(
        "SELECT coalesce(sum(ll + ld + dd + wd + ww), 0) || ' ' || coalesce(sum(wins), 0) || ' ' \
         || coalesce(sum(draws), 0) || ' ' || coalesce(sum(losses), 0) FROM tallies \
         WHERE run_id IN ({all_runs})"
    ));
    let games = pg.psql(&format!(
        "SELECT count(DISTINCT (run_id, pairing, pair)) || ' ' || count(*) FILTER (WHERE (game = 0 AND \
         record->>'result' = '1-0') OR (game = 1 AND record->>'result' = '0-1')) || ' ' || \
         count(*) FILTER (WHERE record->>'result' = '1/2-1/2') || ' ' || count(*) FILTER \
         (WHERE (game = 0 AND record->>'result' = '0-1') OR (game = 1 AND \
         record->>'result' = '1-0')) FROM games WHERE run_id IN ({all_runs})"
    ));
    let tallies_ok = tallies == games;
    if !tallies_ok {
        notes.push(format!("tallies (pairs W D L) {tallies} != games {games}"));
    }
    (lost, doubled, tallies_ok)
}

/// What one decision costs on run `run` as it stands (every stored pair counted): a fresh
/// worker (registered with `key`) asks, with nothing else running, and the server's Rust
/// decision answers (`decide_for`: the worker's check, then a transaction that locks the run,
/// reads every pairing's counts and whether pairs are open); the figure goes to `notes`.
async fn decision_cost(
    admin: &mut tokio_postgres::Client,
    key: &str,
    run: i64,
    notes: &mut Vec<String>,
) {
    let probe = queue::register_worker(admin, key, "probe", 0, 1, LEASE)
        .await
        .expect("register the probe worker");
    let mut decide = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let s = queue::settle::decide_for(admin, &probe, run).await.expect("decide");
        decide.push(t.elapsed());
        if s.state != "active" || !s.stops.is_empty() {
            notes.push(
                "the run was already decided at the probe's decision: no decision figure".into(),
            );
            break;
        }
    }
    notes.push(format!(
        "one decision (the server's, decide_for, on the run afterwards, idle, 20 calls): \
         p50 {:.2} ms",
        pct(&mut decide, 0.5)
    ));
    let _ = queue::worker_stopped(admin, &probe).await;
}

/// With `--statements`: the server's time by function and by statement.
fn print_server_statements(pg: &TempPg, n: usize) {
    let funcs = pg.psql(
        "SELECT string_agg(format('%s calls, total %s ms, self %s ms per call: %s', calls, \
           round((total_time / calls)::numeric, 3), round((self_time / calls)::numeric, 3), \
           funcname), E'\\n' ORDER BY total_time DESC) \
         FROM pg_stat_user_functions WHERE calls > 50",
    );
    println!("[{n} workers] functions by server time:\n{funcs}");
    let top = pg.psql(
        "SELECT string_agg(format('%s calls, %s plans, exec %s ms, plan %s ms, wal %s B: %s', \
           calls, plans, \
           round((total_exec_time / calls)::numeric, 3), \
           round((total_plan_time / calls)::numeric, 3), wal_bytes / calls, \
           left(regexp_replace(query, '\\s+', ' ', 'g'), 150)), E'\\n' \
           ORDER BY total_exec_time + total_plan_time DESC) \
         FROM (SELECT * FROM pg_stat_statements WHERE calls > 50 \
           ORDER BY total_exec_time + total_plan_time DESC LIMIT 20) s",
    );
    println!("[{n} workers] statements by server time:\n{top}");
}

/// The bench's `n_runs` runs, submitted: each gets its part of the pairs (`--pairs`, or
/// enough for `--seconds`), and enough not to run dry when claims favour it.
async fn submit_runs(
    admin: &mut tokio_postgres::Client,
    o: &Opts,
    n_runs: usize,
    judge: &Value,
) -> Vec<i64> {
    let pairs = o.pairs.unwrap_or((2000.0 * o.seconds) as usize + 10_000);
    let per_run = pairs / n_runs + 1000;
    let jobs: Vec<(i32, i32, i32)> = (0..per_run as i32).map(|p| (0, p, p % 500)).collect();
    let mut runs = Vec::new();
    for _ in 0..n_runs {
        runs.push(submit(admin, judge, &jobs).await);
    }
    runs
}

/// The CPU seconds of the server, the clients and PgBouncer (`cpu`) per report of `stored`,
/// with the machine's load average.
fn cpu_note(cpu: (f64, f64, f64), stored: u64) -> String {
    format!(
        "CPU per report: server {:.2} ms, client {:.2} ms, PgBouncer {:.2} ms \
         (machine load average {})",
        cpu.0 * 1000.0 / stored as f64,
        cpu.1 * 1000.0 / stored as f64,
        cpu.2 * 1000.0 / stored as f64,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split(' ')
            .next()
            .unwrap_or("?")
    )
}

/// How many claims the workers got of a pair another claim had already given.
fn claimed_twice(outs: &[WorkerOut]) -> i64 {
    let mut keys: Vec<(i64, i32, i32)> = outs.iter().flat_map(|w| w.claimed.clone()).collect();
    let claimed = keys.len();
    keys.sort_unstable();
    keys.dedup();
    (claimed - keys.len()) as i64
}

/// The runs' states when more than one or not the one active run, and with several runs how
/// evenly they were served: pairs done per run (equal throughputs: the claim should spread
/// them).
fn runs_notes(pg: &TempPg, n_runs: usize, all_runs: &str, notes: &mut Vec<String>) {
    let state = pg.psql(
        "SELECT string_agg(n || ' ' || state, ', ' ORDER BY state) \
         FROM (SELECT state, count(*) AS n FROM runs GROUP BY state) s",
    );
    if n_runs > 1 || state != "1 active" {
        notes.push(format!("the runs are {state}"));
    }
    if n_runs > 1 {
        let spread = pg.psql(&format!(
            "SELECT min(n) || ' / ' || percentile_disc(0.5) WITHIN GROUP (ORDER BY n) || ' / ' || \
               max(n) FROM (SELECT r.id, count(p.*) FILTER (WHERE p.state = 'done') AS n \
               FROM runs r LEFT JOIN pairs p ON p.run_id = r.id WHERE r.id IN ({all_runs}) \
               GROUP BY r.id) x"
        ));
        notes.push(format!("pairs done per run, min / median / max: {spread}"));
    }
}

fn main() {
    let o = parse_args();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    if o.shares {
        rt.block_on(share_bench(&o));
        return;
    }
    if o.via == Via::Http {
        http::main(&o, &rt);
        return;
    }
    let via = match o.via {
        Via::Direct => "direct connections".to_string(),
        Via::Pgbouncer => format!("PgBouncer transaction pooling, {} server connections", o.pool),
        Via::Http => unreachable!("--via http has its own main"),
    };
    println!(
        "fleet queue load test: {} s per row, {via}, max_connections={}, fsync=on, \
         synchronous_commit=on, heartbeat every {} s, claim 1 pair -> play {} ms -> report it, \
         prepared statements {}",
        o.seconds,
        o.max_connections,
        o.heartbeat,
        o.play_ms,
        if o.prepared.unwrap_or(o.via == Via::Direct) { "on" } else { "off" }
    );
    let mut rows = Vec::new();
    for &n in &o.workers {
        for &r in &o.runs {
            let row = rt.block_on(one(&o, n, r));
            rows.push(row);
        }
    }
    println!();
    println!(
        "| workers | runs | connected | reports/s | claim p50 / p99 ms | report p50 / p99 ms | \
         heartbeat p50 / p99 ms | overhead ms/pair | pairs lost | pairs doubled | tallies = games |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.0} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} / {:.1} | {:.2} | {} | {} | {} |",
            r.workers,
            r.runs,
            r.connected,
            r.reports_per_s,
            r.claim.0,
            r.claim.1,
            r.report.0,
            r.report.1,
            r.heartbeat.0,
            r.heartbeat.1,
            r.overhead_ms,
            r.lost,
            r.doubled,
            if r.tallies_ok { "yes" } else { "NO" }
        );
    }
    for r in &rows {
        for n in &r.notes {
            println!("{} workers, {} run(s): {n}", r.workers, r.runs);
        }
    }
    if rows.iter().any(|r| r.lost != 0 || r.doubled != 0 || !r.tallies_ok) {
        eprintln!("FAILED: pairs lost or doubled, or tallies differ from the games");
        std::process::exit(1);
    }
}

/// Who the bench acts as: an approver (its runs are active at once).
fn approver() -> Principal {
    Principal::User { name: "bench".into(), approver: true }
}

/// A worker key named `name`, issued by the bench's approver.
async fn key_add(admin: &mut tokio_postgres::Client, name: &str) -> String {
    let name = Name::new(name).expect("a key's name");
    people::key_add(admin, &approver(), &name).await.expect("key_add")
}

/// Submits one synthetic match run of `jobs` (as an approver: active at once); returns its id.
async fn submit(
    admin: &mut tokio_postgres::Client,
    judge: &Value,
    jobs: &[(i32, i32, i32)],
) -> i64 {
    let sub = json!({"bench": "fleet_load"});
    let labels = [LABEL.to_string()];
    let engines = [(ENGINES.0.to_string(), ENGINES.1.to_string())];
    let (run, pending) = queue::submit::submit(
        admin,
        &approver(),
        &NewRun {
            kind: "match",
            submission: &sub,
            plan_hash: "bench",
            judge,
            labels: &labels,
            engines: &engines,
            jobs,
            theta: None,
            draws: &[],
            refusal_limit: 3,
        },
        Share::default(),
        &[],
    )
    .await
    .expect("submit");
    assert!(!pending, "the bench's run waits for approval: it must be submitted by an approver");
    run
}

/// A claim a share worker made: when it was sent, and the run it returned.
struct Claimed {
    sent: Instant,
    run: i64,
    stored_at: Option<Instant>,
}

/// A worker of the share measurement: claims one pair at a time passing the run it played
/// last, "plays" it for `play_ms` (uniform in 0.5x to 1.5x, seeded), reports it, until `stop`.
async fn share_worker(
    url: String,
    key: String,
    i: usize,
    play_ms: f64,
    stop: Instant,
) -> Vec<Claimed> {
    let c = parse_target(&url).expect("url").connect().await.expect("connect");
    let db = queue::Conn::open(c, true).await.expect("session");
    let w = queue::register_worker(&db, &key, "share", i as i32, 1, LEASE).await.expect("register");
    let mut rng = ChaCha8Rng::seed_from_u64(0x5a4e ^ i as u64);
    let tpl = templates(&mut ChaCha8Rng::seed_from_u64(7));
    let mut current = None;
    let mut out = Vec::new();
    while Instant::now() < stop {
        let sent = Instant::now();
        let ask = queue::ClaimAsk { current, ..queue::ClaimAsk::new(1, LEASE) };
        let claims = queue::claim_from(&db, &w, &ask).await.expect("claim");
        let Some(c) = claims.into_iter().next() else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        current = Some(c.run_id);
        let ms = play_ms * rng.random_range(0.5..1.5);
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
        let scores = draw_pair(&mut rng);
        let g0 = record(&tpl[0], &c, 0, scores[0]);
        let g1 = record(&tpl[1], &c, 1, scores[1]);
        let r = pair_report(&c, [&g0, &g1]);
        let stored = matches!(
            queue::report(&db, &w, &r, false).await.expect("report"),
            Reported::Stored { .. }
        );
        out.push(Claimed { sent, run: c.run_id, stored_at: stored.then(Instant::now) });
    }
    let _ = queue::worker_stopped(&db, &w).await;
    out
}

/// `--shares`: (1) three runs of throughput 100, 100, 200 over four workers for `--seconds`:
/// pairs per hour of each after the first quarter of the time, against 1:1:2; (2) a 20-game
/// run submitted while four workers play a 20,000-game one: which run the first claim sent
/// after the submission returned.
async fn share_bench(o: &Opts) {
    let play_ms = if o.play_ms > 0.0 { o.play_ms } else { 200.0 };
    println!(
        "fleet share measurement: four workers, claim 1 pair -> play {play_ms} ms (0.5x-1.5x) -> \
         report; {} s",
        o.seconds
    );
    let pg = TempPg::start_durable("shares");
    let mut admin = parse_target(&pg.url()).unwrap().connect().await.expect("connect");
    schema::init(&mut admin).await.expect("schema::init");
    let key = key_add(&mut admin, "share").await;
    let none = json!({});
    let big: Vec<(i32, i32, i32)> = (0..10_000).map(|p| (0, p, p % 500)).collect();
    let mut runs = Vec::new();
    for t in [100, 100, 200] {
        let run = submit(&mut admin, &none, &big).await;
        let ch = queue::share::Change { throughput: Some(t), ..Default::default() };
        people::modify(&mut admin, &approver(), run, ch).await.expect("modify");
        runs.push(run);
    }
    let start = Instant::now();
    let stop = start + Duration::from_secs_f64(o.seconds);
    let hs: Vec<_> = (0..4)
        .map(|i| tokio::spawn(share_worker(pg.url(), key.clone(), i, play_ms, stop)))
        .collect();
    let mut claims = Vec::new();
    for h in hs {
        claims.extend(h.await.expect("share worker"));
    }
    let warm = start + Duration::from_secs_f64(o.seconds / 4.0);
    let span = stop.saturating_duration_since(warm).as_secs_f64() / 3600.0;
    let per_hour: Vec<f64> = runs
        .iter()
        .map(|r| {
            let n = claims
                .iter()
                .filter(|c| c.run == *r && c.stored_at.is_some_and(|t| t >= warm && t <= stop))
                .count();
            n as f64 / span
        })
        .collect();
    let unit = per_hour.iter().sum::<f64>() / 4.0;
    println!(
        "| run | throughput | pairs/h after the first {:.0} s | share of 1:1:2 (1.00 = exact) |",
        o.seconds / 4.0
    );
    println!("|---:|---:|---:|---:|");
    for (i, (r, t)) in runs.iter().zip([1.0, 1.0, 2.0]).enumerate() {
        println!(
            "| {r} | {} | {:.0} | {:.3} |",
            [100, 100, 200][i],
            per_hour[i],
            per_hour[i] / (unit * t)
        );
    }
    let worst = per_hour
        .iter()
        .zip([1.0, 1.0, 2.0])
        .map(|(p, t)| (p / (unit * t) - 1.0).abs())
        .fold(0.0, f64::max);
    println!("largest deviation from 1:1:2: {:.1} %", worst * 100.0);
    for r in &runs {
        let _ = people::cancel(&mut admin, &approver(), *r).await;
    }

    // (2) A small run behind a large one.
    let large = submit(&mut admin, &none, &big).await;
    let small_jobs: Vec<(i32, i32, i32)> = (0..10).map(|p| (0, p, p)).collect();
    let stop = Instant::now() + Duration::from_secs_f64(o.seconds.min(20.0));
    let hs: Vec<_> = (0..4)
        .map(|i| tokio::spawn(share_worker(pg.url(), key.clone(), 10 + i, play_ms, stop)))
        .collect();
    // Let the workers settle on the large run for a few pairs each.
    tokio::time::sleep(Duration::from_secs_f64(play_ms * 5.0 / 1000.0)).await;
    let small = submit(&mut admin, &none, &small_jobs).await;
    let submitted = Instant::now();
    let mut claims = Vec::new();
    for h in hs {
        claims.extend(h.await.expect("share worker"));
    }
    claims.sort_by_key(|c| c.sent);
    let before = claims.iter().filter(|c| c.sent < submitted && c.run == large).count();
    match claims.iter().find(|c| c.sent > submitted) {
        Some(c) => println!(
            "20-game run {small} submitted after {before} claims of 20,000-game run {large}: \
             the first claim sent after it returned run {} ({}), {:.0} ms after the submission",
            c.run,
            if c.run == small { "the small run" } else { "NOT the small run" },
            c.sent.duration_since(submitted).as_secs_f64() * 1000.0
        ),
        None => println!("no claim after the small run's submission: give more --seconds"),
    }
    let small_done = claims.iter().filter(|c| c.run == small && c.stored_at.is_some()).count();
    println!("the small run's pairs stored during the test: {small_done} of 10");
}
