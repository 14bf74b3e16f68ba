//! `--via http`: the same load through the fleet's server. For each row it starts the throwaway
//! cluster as the direct bench does, `runner serve --db URL --bind 127.0.0.1:0` (this build's
//! own binary, a process of its own, as production runs it: its own runtime, its pool of
//! `serve::POOL_SIZE` connections, its limits), and N synthetic worker processes: tokio tasks,
//! each with its own `WorkerClient` (the worker's HTTP client, its own keep-alive connections)
//! each doing what `runner worker --server URL` does with one slot
//! (`fleet/worker/state.rs`): `GET /version`, register under the worker key, then claim 1 pair,
//! "play" it for `--play-ms` while the loop renews its lease every 2 s (the worker's beat:
//! lease / 4 within 0.2-2 s, lease 30 s as `runner worker` has by default), report it (again
//! after a passing failure, with the worker's waits), settle when the worker's look at the
//! counts says so; with nothing to claim, an idle poll (`/outstanding`) and, every lease / 4,
//! an idle heartbeat, then a wait of 0.2-2 s. `--idle N` adds N workers that skip every run
//! (as a worker that refused them, with `--wait`): they only poll. Every request is timed
//! ([`super::kinds`]); afterwards the database is checked as in the direct bench.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use runner::fleet::client::WorkerClient;
use runner::fleet::connect::parse_target;
use runner::fleet::decide::{RunJudge, judge_config};
use runner::fleet::link::{STATEMENT_TIMEOUT, is_transient};
use runner::fleet::queue::{self, Claim, Machine, Reported, WorkerId};
use runner::fleet::schema;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::kinds::{Kind, Lat};
use super::{
    LABEL, Opts, SPRT, WorkerOut, claimed_twice, client_cpu, database_account, decision_cost,
    draw_pair, key_add, pair_report, print_server_statements, process_cpu, record, runs_notes,
    server_cpu, start_server, submit_runs, templates, worker_notes,
};

/// The lease a worker asks for: `runner worker`'s default `--lease`.
const LEASE: Duration = Duration::from_secs(30);

/// Attempts of a retried request before the bench gives up on it (a worker retries for ever).
const ATTEMPTS: u32 = 12;

/// How often a worker renews the leases it holds: as `fleet/worker/state.rs` beats.
fn beat_every(lease: Duration) -> Duration {
    lease.div_f64(4.0).clamp(Duration::from_millis(200), Duration::from_secs(2))
}

/// `runner serve --db` in a process of its own, on a free port of 127.0.0.1.
struct Server {
    child: Child,
    /// Kept open: the server may print more, and a closed pipe would fail its writes.
    _stdout: BufReader<ChildStdout>,
    base: String,
    dir: PathBuf,
}

impl Server {
    fn start(pg: &e2e::pg::TempPg) -> Server {
        let dir = std::env::temp_dir().join(format!("fleet-http-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // An empty results folder: the server lists no local run (and says nothing of it).
        std::fs::create_dir_all(dir.join("no-results")).expect("the server's folder");
        let log = std::fs::File::create(dir.join("server.log")).expect("server.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_runner"))
            .args(["serve", "--db", &pg.url(), "--bind", "127.0.0.1:0", "--results"])
            .arg(dir.join("no-results"))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("cannot start runner serve");
        let mut stdout = BufReader::new(child.stdout.take().expect("the server's stdout"));
        let mut first = String::new();
        let _ = stdout.read_line(&mut first);
        // "serving http://127.0.0.1:PORT/ (results ...)"
        let Some(base) = first.split_whitespace().nth(1).filter(|u| u.starts_with("http://"))
        else {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            panic!("runner serve did not start: {first:?}\n{log}");
        };
        let base = base.trim_end_matches('/').to_string();
        Server { child, _stdout: stdout, base, dir }
    }

    /// CPU seconds of the server process (all its threads).
    fn cpu(&self) -> f64 {
        process_cpu(self.child.id())
    }

    /// What the server wrote to its standard error.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Shared {
    base: String,
    key: String,
    spec: stats::SprtSpec,
    templates: Vec<Value>,
    play_ms: f64,
    /// `--start-spread-ms`.
    start_spread_ms: f64,
    /// The bench's runs (an idle worker skips them all).
    runs: Vec<i64>,
}

/// What one synthetic worker measured: the direct bench's account, every request by kind,
/// and when each report was stored.
#[derive(Default)]
struct Out {
    base: WorkerOut,
    lat: Lat,
    stored_at: Vec<Instant>,
    /// One of the `--idle` workers.
    idle: bool,
}

/// One attempt of `fut`, timed as `kind`.
async fn once<T>(lat: &mut Lat, kind: Kind, fut: impl Future<Output = Result<T>>) -> Result<T> {
    let t = Instant::now();
    let r = fut.await;
    lat.push(kind, t.elapsed(), r.as_ref().err().map(|e| format!("{e:#}")));
    r
}

/// `f` until it succeeds or fails for good, as `WorkerClient::call` retries it (a passing failure
/// waits `WorkerClient::wait`: backoff, never less than the server's `Retry-After`), each attempt
/// timed as `kind`; at most [`ATTEMPTS`].
async fn retried<T, F, Fut>(door: &WorkerClient, lat: &mut Lat, kind: Kind, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut n = 0;
    loop {
        match once(lat, kind, f()).await {
            Ok(v) => return Ok(v),
            Err(e) if is_transient(&e) && n + 1 < ATTEMPTS => {
                tokio::time::sleep(door.wait(n, &e)).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A worker process's client, made before the workers start: on a fleet each worker makes its
/// own on its own machine, so the CPU it takes (the TLS roots, the resolver) is no part of the
/// server's answer. Made in the task, 250 clients on one client thread would delay the polling
/// of the requests already sent, and that delay would be timed as the server's.
fn worker_client(sh: &Shared) -> Result<WorkerClient> {
    WorkerClient::new(&sh.base, None, Some(sh.key.clone()), STATEMENT_TIMEOUT)
}

/// A worker process's start: the server's version, its registration. `None` when it cannot
/// (the error in `out`).
async fn start_worker(
    i: usize,
    client: Result<WorkerClient>,
    out: &mut Out,
) -> Option<(Arc<WorkerClient>, WorkerId)> {
    let door = match client {
        Ok(c) => c,
        Err(e) => {
            out.base.connect_error = Some(format!("{e:#}"));
            return None;
        }
    };
    let client = &door;
    if let Err(e) = retried(&door, &mut out.lat, Kind::Version, move || client.version()).await {
        out.base.connect_error = Some(format!("version: {e:#}"));
        return None;
    }
    let m = &Machine { host: format!("bench-{i}"), cores: Some(1), ..Machine::default() };
    let (d, pid) = (&door, i as i32 + 1);
    let registered =
        retried(&door, &mut out.lat, Kind::Register, move || d.register(m, pid, 1, LEASE)).await;
    match registered {
        Ok(w) => Some((Arc::new(door), w)),
        Err(e) => {
            out.base.connect_error = Some(format!("register: {e:#}"));
            None
        }
    }
}

/// What a pair task did.
#[derive(Default)]
struct PairOut {
    lat: Lat,
    stored_at: Option<Instant>,
    refused: Option<String>,
    error: Option<String>,
    decided: bool,
}

/// One claimed pair, as `fleet/worker/task.rs` plays it: `play`, then the report (again after
/// a passing failure), then a settle when the worker's look at the counts says so.
async fn pair_task(
    door: Arc<WorkerClient>,
    wid: WorkerId,
    c: Claim,
    records: [Value; 2],
    play: Duration,
    judge: Arc<RunJudge>,
) -> PairOut {
    let mut p = PairOut::default();
    tokio::time::sleep(play).await;
    let r = pair_report(&c, [&records[0], &records[1]]);
    let all = judge.needs_all();
    let (door, wid, r) = (&*door, &wid, &r);
    match retried(door, &mut p.lat, Kind::Report, move || door.report(wid, r, all)).await {
        Ok(Reported::Stored { counts, open, .. }) => {
            p.stored_at = Some(Instant::now());
            if judge.may_stop(&counts) || !open {
                let run = c.run_id;
                match retried(door, &mut p.lat, Kind::Settle, move || door.settle(wid, run)).await {
                    Ok(s) => p.decided = s.state != "active" || !s.stops.is_empty(),
                    Err(e) => p.error = Some(format!("settle: {e:#}")),
                }
            }
        }
        Ok(Reported::Refused(why)) => p.refused = Some(why),
        Err(e) => p.error = Some(format!("report: {e:#}")),
    }
    p
}

/// The start and the end of the measured time, sent to every worker at once.
type Go = watch::Receiver<Option<(Instant, Instant)>>;

async fn worker(
    i: usize,
    client: Result<WorkerClient>,
    sh: Arc<Shared>,
    idle: bool,
    ready: mpsc::Sender<bool>,
    mut go: Go,
) -> Out {
    let mut out = Out { idle, ..Out::default() };
    if sh.start_spread_ms > 0.0 {
        let mut rng = ChaCha8Rng::seed_from_u64(0x57a7 ^ i as u64);
        let ms = sh.start_spread_ms * rng.random_range(0.0..1.0);
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
    let Some((door, wid)) = start_worker(i, client, &mut out).await else {
        let _ = ready.send(false).await;
        return out;
    };
    let _ = ready.send(true).await;
    let (_, deadline) = loop {
        if let Some(t) = *go.borrow() {
            break t;
        }
        if go.changed().await.is_err() {
            return out;
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed ^ i as u64);
    let judge =
        Arc::new(RunJudge { sprt: Some(sh.spec), race: None, labels: vec![LABEL.to_string()] });
    let mut beat = tokio::time::interval(beat_every(LEASE));
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Paced workers start spread over one play time, as independent machines would.
    if sh.play_ms > 0.0 {
        let ms = sh.play_ms * rng.random_range(0.0..1.0);
        tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
    }
    let skip = if idle { sh.runs.clone() } else { Vec::new() };
    let mut ask = queue::ClaimAsk { skip, ..queue::ClaimAsk::new(1, LEASE) };
    let mut idle_beat: Option<Instant> = None;
    while Instant::now() < deadline {
        let t = Instant::now();
        let r = door.claim(&wid, &ask).await;
        let took = t.elapsed();
        let claims = match r {
            Ok(c) => {
                out.lat.push(if c.is_empty() { Kind::ClaimEmpty } else { Kind::Claim }, took, None);
                c
            }
            Err(e) => {
                out.lat.push(Kind::Claim, took, Some(format!("{e:#}")));
                if !is_transient(&e) {
                    out.base.errors.push(format!("claim: {e:#}"));
                    break;
                }
                tokio::time::sleep(door.wait(2, &e)).await;
                continue;
            }
        };
        let Some(c) = claims.into_iter().next() else {
            out.base.ran_dry |= !idle;
            idle_poll(&door, &wid, &ask.skip, &mut idle_beat, deadline, &mut out).await;
            continue;
        };
        ask.current = Some(c.run_id);
        in_flight(&door, &wid, c, &sh, &judge, &mut beat, &mut rng, &mut out).await;
    }
    let _ = once(&mut out.lat, Kind::Stopped, door.stopped(&wid)).await;
    out.base.settle = out.lat.took(Kind::Settle).to_vec();
    out
}

/// Claimed pair `c` in flight: its task plays and reports it while the loop renews its lease
/// at every beat, as the worker's loop does (the task runs beside the loop).
#[allow(clippy::too_many_arguments)]
async fn in_flight(
    door: &Arc<WorkerClient>,
    wid: &WorkerId,
    c: Claim,
    sh: &Shared,
    judge: &Arc<RunJudge>,
    beat: &mut tokio::time::Interval,
    rng: &mut ChaCha8Rng,
    out: &mut Out,
) {
    out.base.claimed.push((c.run_id, c.pairing, c.pair));
    let scores = draw_pair(rng);
    let n = sh.templates.len();
    let g0 = record(&sh.templates[rng.random_range(0..n)], &c, 0, scores[0]);
    let g1 = record(&sh.templates[rng.random_range(0..n)], &c, 1, scores[1]);
    out.base.record_bytes += (g0.to_string().len() + g1.to_string().len()) as u64;
    let play = if sh.play_ms > 0.0 {
        Duration::from_secs_f64(sh.play_ms * rng.random_range(0.5..1.5) / 1000.0)
    } else {
        Duration::ZERO
    };
    let token = c.token;
    // A heartbeat sent while the report is on its way may find the pair already stored (its
    // lease ended with the report): lost only when the report was not stored.
    let mut lost = false;
    let mut task = tokio::task::spawn_local(pair_task(
        door.clone(),
        wid.clone(),
        c,
        [g0, g1],
        play,
        judge.clone(),
    ));
    let p = loop {
        tokio::select! {
            biased;
            p = &mut task => break p.expect("a pair task panicked"),
            _ = beat.tick() => {
                match once(&mut out.lat, Kind::Heartbeat, door.heartbeat(wid, &[token], LEASE)).await {
                    Ok(alive) if !alive.contains(&token) => lost = true,
                    Ok(_) => {}
                    Err(e) if !is_transient(&e) => out.base.errors.push(format!("heartbeat: {e:#}")),
                    Err(_) => {}
                }
            }
        }
    };
    out.lat.merge(p.lat);
    if lost && p.stored_at.is_none() {
        out.base.lost_leases += 1;
    }
    if let Some(t) = p.stored_at {
        out.base.stored += 1;
        out.stored_at.push(t);
    }
    out.base.refused.extend(p.refused);
    out.base.errors.extend(p.error);
    out.base.decided |= p.decided;
}

/// Nothing to claim: what an idle worker does (`Worker::idle`): the runs' outstanding work,
/// an idle heartbeat every lease / 4, then a wait of the soonest lease's end within 0.2-2 s
/// (cut at the deadline).
async fn idle_poll(
    door: &WorkerClient,
    wid: &WorkerId,
    skip: &[i64],
    idle_beat: &mut Option<Instant>,
    deadline: Instant,
    out: &mut Out,
) {
    let soonest = match once(&mut out.lat, Kind::IdlePoll, door.outstanding(wid, None, skip)).await
    {
        Ok(w) => w.soonest,
        Err(e) => {
            if !is_transient(&e) {
                out.base.errors.push(format!("outstanding: {e:#}"));
            }
            tokio::time::sleep(
                door.wait(2, &e).min(deadline.saturating_duration_since(Instant::now())),
            )
            .await;
            return;
        }
    };
    if idle_beat.is_none_or(|t| t.elapsed() >= LEASE.div_f64(4.0)) {
        *idle_beat = Some(Instant::now());
        let _ = once(&mut out.lat, Kind::IdleBeat, door.heartbeat(wid, &[], LEASE)).await;
    }
    let wait = soonest
        .unwrap_or(Duration::from_secs(2))
        .clamp(Duration::from_millis(200), Duration::from_secs(2));
    tokio::time::sleep(wait.min(deadline.saturating_duration_since(Instant::now()))).await;
}

/// One client thread per core, each a single-threaded runtime running its share of the
/// `total` workers (the last `total - busy` are idle ones); each returns its workers' measures.
fn client_threads(
    total: usize,
    busy: usize,
    sh: &Arc<Shared>,
    ready: &mpsc::Sender<bool>,
    go: &Go,
) -> Vec<std::thread::JoinHandle<Vec<Out>>> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(total);
    let made = Arc::new(std::sync::Barrier::new(threads));
    (0..threads)
        .map(|t| {
            let (sh, ready, go, made) = (sh.clone(), ready.clone(), go.clone(), made.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                let local = tokio::task::LocalSet::new();
                let clients: Vec<_> = {
                    let _in = rt.enter();
                    (t..total).step_by(threads).map(|i| (i, worker_client(&sh))).collect()
                };
                // Every thread's clients are made before any worker starts.
                made.wait();
                local.block_on(&rt, async move {
                    let hs: Vec<_> = clients
                        .into_iter()
                        .map(|(i, c)| {
                            let w = worker(i, c, sh.clone(), i >= busy, ready.clone(), go.clone());
                            tokio::task::spawn_local(w)
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

/// One row's figures.
struct Row {
    workers: usize,
    idle: usize,
    runs: usize,
    play_ms: f64,
    connected: usize,
    stored: u64,
    /// Reports stored per second after the first 1.5 play times (all of the time in a closed
    /// loop).
    rate: f64,
    /// What the busy workers offer: one pair per play + claim + report.
    offered: f64,
    lat: Lat,
    /// CPU ms per stored report: PostgreSQL, the server process, this process.
    cpu: (f64, f64, f64),
    lost: i64,
    doubled: i64,
    tallies_ok: bool,
    notes: Vec<String>,
}

async fn one(o: &Opts, n: usize, n_runs: usize) -> Row {
    let pg = start_server(o, n);
    let mut admin = parse_target(&pg.url()).unwrap().connect().await.expect("connect");
    schema::init(&mut admin).await.expect("schema::init");
    let key = key_add(&mut admin, "bench").await;
    let spec = stats::SprtSpec::parse(SPRT).expect("the bench's SPRT parses");
    let judge = judge_config(Some(&spec), None, 1, None);
    let runs = submit_runs(&mut admin, o, n_runs, &judge).await;
    pg.psql("VACUUM ANALYZE");
    let server = Server::start(&pg);
    let sh = Arc::new(Shared {
        base: server.base.clone(),
        key: key.clone(),
        spec,
        templates: templates(&mut ChaCha8Rng::seed_from_u64(7)),
        play_ms: o.play_ms,
        start_spread_ms: o.start_spread_ms,
        runs: runs.clone(),
    });
    let total = n + o.idle;
    let overflows0 = listen_overflows();
    let (ready_tx, mut ready_rx) = mpsc::channel(total);
    let (go_tx, go_rx) = watch::channel(None);
    let threads = client_threads(total, n, &sh, &ready_tx, &go_rx);
    drop(ready_tx);
    let mut connected = 0;
    for _ in 0..total {
        if ready_rx.recv().await == Some(true) {
            connected += 1;
        }
    }
    let overflows1 = listen_overflows();
    let cpu0 = (server_cpu(&pg), server.cpu(), client_cpu());
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(o.seconds);
    let _ = go_tx.send(Some((start, deadline)));
    let mut outs = Vec::new();
    for t in threads {
        let o = tokio::task::spawn_blocking(move || t.join()).await.expect("join");
        outs.extend(o.expect("a client thread panicked"));
    }
    let cpu = (server_cpu(&pg) - cpu0.0, server.cpu() - cpu0.1, client_cpu() - cpu0.2);
    let overflows2 = listen_overflows();
    let (lat, stored_at, bases, busy) = merge(outs);
    let mut notes = worker_notes(&bases, n_runs);
    let stored: u64 = bases.iter().map(|w| w.stored).sum();
    let bytes: u64 = bases.iter().map(|w| w.record_bytes).sum();
    if stored > 0 {
        notes.push(format!("mean game record {} bytes", bytes / (2 * stored)));
    }
    // Reports stored after the first 1.5 play times (the workers start spread over one), per
    // second; what the busy workers offer: one pair per play + claim + report (a closed loop
    // offers what it gets).
    let from = start + Duration::from_secs_f64(1.5 * o.play_ms / 1000.0).min(deadline - start);
    let in_window = stored_at.iter().filter(|t| **t >= from && **t <= deadline).count();
    let rate = in_window as f64 / (deadline - from).as_secs_f64();
    let per_pair =
        o.play_ms / 1000.0 + (lat.mean_ms(Kind::Claim) + lat.mean_ms(Kind::Report)) / 1000.0;
    let offered = if o.play_ms > 0.0 { busy as f64 / per_pair } else { f64::NAN };
    let per = |s: f64| if stored > 0 { s * 1000.0 / stored as f64 } else { f64::NAN };
    let cpu = (per(cpu.0), per(cpu.1), per(cpu.2));
    notes.push(format!(
        "{stored} reports stored in all ({in_window} in the measured {:.1} s); machine load \
         average {}",
        (deadline - from).as_secs_f64(),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    ));
    server_notes(&server.log(), &mut notes);
    notes.push(format!(
        "listen queue overflows (the machine's TcpExt ListenOverflows; each connection dropped \
         so waits for a SYN retransmit, 1 s the first time): {} while the workers started, {} \
         during the test",
        overflows1 - overflows0,
        overflows2 - overflows1
    ));
    let claimed_twice = claimed_twice(&bases);
    let all_runs = runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
    let (lost, doubled, tallies_ok) =
        database_account(&pg, &all_runs, stored, claimed_twice, &mut notes);
    decision_cost(&mut admin, &key, runs[0], &mut notes).await;
    if o.statements {
        print_server_statements(&pg, n);
    }
    runs_notes(&pg, n_runs, &all_runs, &mut notes);
    drop((server, admin, pg));
    Row {
        workers: n,
        idle: o.idle,
        runs: n_runs,
        play_ms: o.play_ms,
        connected,
        stored,
        rate,
        offered,
        lat,
        cpu,
        lost,
        doubled,
        tallies_ok,
        notes,
    }
}

/// The workers' measures merged: every request, when each report was stored, the direct
/// bench's account of each worker, and how many busy (not `--idle`) workers started.
fn merge(outs: Vec<Out>) -> (Lat, Vec<Instant>, Vec<WorkerOut>, usize) {
    let busy = outs.iter().filter(|w| !w.idle && w.base.connect_error.is_none()).count();
    let (mut lat, mut stored_at, mut bases) = (Lat::default(), Vec::new(), Vec::new());
    for w in outs {
        lat.merge(w.lat);
        stored_at.extend(w.stored_at);
        bases.push(w.base);
    }
    (lat, stored_at, bases, busy)
}

/// The machine's count of connections dropped because a listen queue was full
/// (`/proc/net/netstat`, TcpExt ListenOverflows; every listener of the machine).
fn listen_overflows() -> i64 {
    let text = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let mut tcp_ext = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (tcp_ext.next(), tcp_ext.next()) else { return 0 };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "ListenOverflows")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// The server's standard error, when it said anything: how many lines, and the first few.
fn server_notes(log: &str, notes: &mut Vec<String>) {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return;
    }
    notes.push(format!("the server wrote {} lines to its standard error, first:", lines.len()));
    notes.extend(lines.iter().take(3).map(|l| format!("  {l}")));
}

/// `--via http`: one row per worker count and run count, each with its requests by kind, then
/// the summary.
pub fn main(o: &Opts, rt: &tokio::runtime::Runtime) {
    println!(
        "fleet load through the server's HTTP API: {} s per row, runner serve --db (pool of {} \
         connections, {} worker requests in flight at most), max_connections={}, fsync=on, \
         synchronous_commit=on, lease {} s renewed every {} s, claim 1 pair -> play {} ms -> \
         report it; {} idle workers beside; workers start {}",
        o.seconds,
        runner::serve::POOL_SIZE,
        runner::serve::api::WORKER_IN_FLIGHT,
        o.max_connections,
        LEASE.as_secs(),
        beat_every(LEASE).as_secs_f64(),
        o.play_ms,
        o.idle,
        if o.start_spread_ms > 0.0 {
            format!("spread over {} ms", o.start_spread_ms)
        } else {
            "all in the same instant".to_string()
        }
    );
    let mut rows = Vec::new();
    for &n in &o.workers {
        for &r in &o.runs {
            let mut row = rt.block_on(one(o, n, r));
            row.lat.print(&format!(
                "{} workers (+{} idle), {} run(s), play {} ms: every request by kind",
                row.workers, row.idle, row.runs, row.play_ms
            ));
            rows.push(row);
        }
    }
    summary(&mut rows);
    if rows.iter().any(|r| r.lost != 0 || r.doubled != 0 || !r.tallies_ok) {
        eprintln!("FAILED: pairs lost or doubled, or tallies differ from the games");
        std::process::exit(1);
    }
}

fn summary(rows: &mut [Row]) {
    println!();
    println!(
        "| workers (+idle) | runs | play ms | connected | offered/s | reports/s | claim p50 / p99 \
         ms | report p50 / p99 ms | heartbeat p50 / p99 ms | idle poll p50 / p99 ms | register \
         p99 ms | failed requests | CPU ms/report PG / serve / client | lost / doubled / \
         tallies = games |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for r in rows.iter_mut() {
        let q = |lat: &mut Lat, k| {
            let (p50, p99, _) = lat.quantiles(k);
            if p50.is_nan() { "-".to_string() } else { format!("{p50:.1} / {p99:.1}") }
        };
        println!(
            "| {} (+{}) | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {:.1} | {} | {:.2} / \
             {:.2} / {:.2} | {} / {} / {} |",
            r.workers,
            r.idle,
            r.runs,
            r.play_ms,
            r.connected,
            if r.offered.is_nan() { "closed loop".into() } else { format!("{:.0}", r.offered) },
            r.rate,
            q(&mut r.lat, Kind::Claim),
            q(&mut r.lat, Kind::Report),
            q(&mut r.lat, Kind::Heartbeat),
            q(&mut r.lat, Kind::IdlePoll),
            r.lat.quantiles(Kind::Register).1,
            r.lat.total_failed(),
            r.cpu.0,
            r.cpu.1,
            r.cpu.2,
            r.lost,
            r.doubled,
            if r.tallies_ok { "yes" } else { "NO" }
        );
    }
    for r in rows.iter() {
        println!("{} workers, {} run(s): {} stored", r.workers, r.runs, r.stored);
        for n in &r.notes {
            println!("{} workers, {} run(s): {n}", r.workers, r.runs);
        }
    }
}
