//! `runner worker`: claims game pairs from the queue, plays them with the play layer, reports
//! each finished pair, renews its leases, and stops a pair at once when its lease is lost (the run
//! was decided or cancelled, or the lease expired and another worker took the pair).
//!
//! One connection serves the worker's slots and its heartbeat ([`super::link`]); a database that
//! is away is retried with backoff, and a finished pair is kept in memory and reported again
//! until it is stored or refused. Without `--wait` the worker ends when no run it serves has a
//! pair left (it waits out the leases of workers that may have died, and plays their pairs).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use tokio::task::JoinSet;

use super::decide::RunJudge;
use super::link::{Link, backoff, is_transient};
use super::pair::{PairEnd, RunSpec, play_pair};
use super::queue::{self, Claim, PairReport, Reported};
use crate::plan::schedule::Job;
use crate::play::cancel::Cancel;
use crate::play::pause::PauseWatch;
use crate::store::GameRecord;
use crate::tune::spsa::{Iteration, Spsa};

/// One attempt of a statement on the shared connection, which is dropped after a failure (the
/// next attempt connects again): `db_once!(link, |c| queue::f(c, ...))`.
macro_rules! db_once {
    ($link:expr, |$c:ident| $call:expr) => {
        async {
            let mut g = $link.get().await?;
            let $c = g.client();
            let r = $call.await;
            if r.is_err() {
                g.reset();
            }
            r
        }
        .await
    };
}

/// How a worker works.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Serve only this run.
    pub run: Option<i64>,
    /// Pairs played at once.
    pub concurrency: usize,
    pub lease: Duration,
    /// Stay for new runs when there is no work.
    pub wait: bool,
}

/// What the worker needs to serve a run, or why it refuses it (one line).
pub struct Served {
    pub spec: Arc<RunSpec>,
    pub judge: RunJudge,
    pub spsa: Option<Spsa>,
}

/// Loads a run for this worker: its plan, openings, engines resolved and checked on this
/// machine. `Err` is the line saying why the worker refuses the run.
pub type LoadRun<'a> = &'a (dyn Fn(&queue::RunRow) -> Result<Served, String> + Sync);

/// A pair in flight.
struct InFlight {
    cancel: Cancel,
}

/// How a pair task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    Stored,
    Refused,
    Stopped,
    Failed,
}

/// A finished pair task: its slot is free. A line to print, and a lasting fault, if any.
struct Done {
    token: i64,
    ended: Ended,
    line: Option<String>,
    fatal: Option<String>,
}

/// Counts of what a worker did (printed at its end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub stored: u64,
    pub refused: u64,
    pub stopped: u64,
}

/// Runs a worker until its work is done, `cancel` (a signal) stops it, or a lasting fault.
pub async fn run_worker(
    link: Arc<Link>,
    opts: &WorkerOptions,
    load: LoadRun<'_>,
    cancel: Cancel,
) -> Result<Tally> {
    let host = hostname();
    let pid = std::process::id() as i32;
    let (conc, lease) = (opts.concurrency as i32, opts.lease);
    let mut n = 0;
    let worker = loop {
        match db_once!(link, |c| queue::register_worker(c, &host, pid, conc, lease)) {
            Ok(w) => break w,
            Err(e) if is_transient(&e) && !cancel.is_cancelled() => {
                if n == 0 {
                    errln!("warning: database unavailable ({e:#}); retrying");
                }
                sleep_or_cancel(backoff(n), &cancel).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    };
    errln!(
        "worker {worker} on {host} (pid {pid}): concurrency {}, lease {} s, database {}",
        opts.concurrency,
        opts.lease.as_secs_f64(),
        link.target()
    );
    let pause = Arc::new(PauseWatch::new());
    let ticker = pause.spawn_ticker();
    let result = serve(&link, worker, opts, load, &cancel, &pause).await;
    ticker.abort();
    let _ = db_once!(link, |c| queue::worker_stopped(c, worker));
    result
}

async fn serve(
    link: &Arc<Link>,
    worker: i64,
    opts: &WorkerOptions,
    load: LoadRun<'_>,
    cancel: &Cancel,
    pause: &Arc<PauseWatch>,
) -> Result<Tally> {
    let mut served: HashMap<i64, Arc<Served>> = HashMap::new();
    let mut refused: Vec<i64> = Vec::new();
    // Served runs with nothing open that this worker has settled (`complete_if_done`).
    let mut settled: Vec<i64> = Vec::new();
    let mut flying: HashMap<i64, InFlight> = HashMap::new();
    let mut tasks: JoinSet<Done> = JoinSet::new();
    let mut tally = Tally::default();
    // A decision or a cancel reaches the worker within one beat.
    let beat_every =
        opts.lease.div_f64(4.0).clamp(Duration::from_millis(200), Duration::from_secs(2));
    let mut beat = tokio::time::interval(beat_every);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut idle_said = false;
    let mut fatal: Option<String> = None;
    loop {
        if cancel.is_cancelled() || fatal.is_some() {
            break;
        }
        // Claim for the free slots.
        let free = opts.concurrency.saturating_sub(flying.len());
        let mut claimed = Vec::new();
        if free > 0 {
            match db_once!(link, |c| queue::claim(
                c,
                worker,
                opts.run,
                &refused,
                free as i64,
                opts.lease
            )) {
                Ok(c) => claimed = c,
                Err(e) if is_transient(&e) => {
                    errln!("warning: database unavailable ({e:#}); retrying");
                    sleep_or_cancel(backoff(2), cancel).await;
                }
                Err(e) => return Err(e),
            }
        }
        let mut give_back = Vec::new();
        for c in claimed {
            if refused.contains(&c.run_id) {
                give_back.push(c.token);
                continue;
            }
            let s = match served.get(&c.run_id) {
                Some(s) => s.clone(),
                None => {
                    let row = db_once!(link, |db| queue::run(db, c.run_id))?;
                    let Some(row) = row else { continue };
                    match load(&row) {
                        Ok(s) => {
                            errln!("serving run {} ({})", row.id, row.kind);
                            let s = Arc::new(s);
                            served.insert(row.id, s.clone());
                            s
                        }
                        Err(why) => {
                            if opts.run == Some(row.id) {
                                // The one run asked for cannot be served here: an error.
                                fatal.get_or_insert(format!("refusing run {}: {why}", row.id));
                            } else {
                                errln!("refusing run {}: {why}", row.id);
                            }
                            refused.push(row.id);
                            give_back.push(c.token);
                            continue;
                        }
                    }
                }
            };
            idle_said = false;
            let pair_cancel = Cancel::new();
            flying.insert(c.token, InFlight { cancel: pair_cancel.clone() });
            tasks.spawn(pair_task(
                link.clone(),
                worker,
                s,
                c,
                pair_cancel,
                cancel.clone(),
                pause.clone(),
            ));
        }
        if !give_back.is_empty() {
            let _ = db_once!(link, |db| queue::release(db, worker, &give_back));
        }
        if flying.is_empty() {
            // Nothing to play: done, or wait for leases of others (or new runs with --wait).
            let (open, soonest) =
                match db_once!(link, |db| queue::outstanding(db, opts.run, &refused)) {
                    Ok(x) => x,
                    Err(e) if is_transient(&e) => {
                        errln!("warning: database unavailable ({e:#}); retrying");
                        sleep_or_cancel(backoff(2), cancel).await;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
            // A served run with nothing open may still be 'active': its two last reports can
            // each have seen the other's pair open. Settle it once, before leaving or idling.
            for &run in served.keys() {
                if !open.contains(&run)
                    && !settled.contains(&run)
                    && db_once!(link, |db| queue::complete_if_done(db, run)).is_ok()
                {
                    settled.push(run);
                }
            }
            if open.is_empty() && !opts.wait {
                break;
            }
            if !idle_said {
                idle_said = true;
                if open.is_empty() {
                    errln!("no work: waiting for new runs (--wait)");
                } else {
                    errln!(
                        "no pair free: waiting for the leases of other workers on run(s) {}",
                        open.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
                    );
                }
            }
            for run in &open {
                let run = *run;
                let _ = db_once!(link, |db| queue::complete_if_done(db, run));
            }
            let wait = soonest
                .unwrap_or(Duration::from_secs(2))
                .clamp(Duration::from_millis(200), Duration::from_secs(2));
            sleep_or_cancel(wait, cancel).await;
            continue;
        }
        // Wait for a pair to end, a heartbeat, or a signal.
        tokio::select! {
            biased;
            _ = cancel.cancelled() => break,
            Some(done) = tasks.join_next() => {
                match done {
                    Ok(d) => {
                        if let Some(l) = d.line {
                            errln!("{l}");
                        }
                        if let Some(f) = d.fatal {
                            fatal.get_or_insert(f);
                        }
                        flying.remove(&d.token);
                        match d.ended {
                            Ended::Stored => tally.stored += 1,
                            Ended::Refused => tally.refused += 1,
                            Ended::Stopped | Ended::Failed => tally.stopped += 1,
                        }
                    }
                    Err(e) => fatal = Some(format!("a pair task failed: {e}")),
                }
            }
            _ = beat.tick() => {
                let tokens: Vec<i64> = flying.keys().copied().collect();
                if tokens.is_empty() {
                    continue;
                }
                let alive = db_once!(link, |db| queue::heartbeat(db, worker, &tokens, opts.lease));
                match alive {
                    Ok(alive) => {
                        let alive: HashSet<i64> = alive.into_iter().collect();
                        for t in tokens.iter().filter(|t| !alive.contains(t)) {
                            if let Some(f) = flying.get(t) {
                                f.cancel.cancel();
                            }
                        }
                    }
                    Err(e) if is_transient(&e) => {
                        errln!("warning: heartbeat failed ({e:#}); retrying");
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }
    // Stopping: the games in flight end; their pairs go back to the queue at once.
    for f in flying.values() {
        f.cancel.cancel();
    }
    while tasks.join_next().await.is_some() {}
    let tokens: Vec<i64> = flying.keys().copied().collect();
    if !tokens.is_empty() {
        let _ = db_once!(link, |db| queue::release(db, worker, &tokens));
    }
    for s in served.values() {
        for p in &s.spec.pools {
            p.shutdown_idle().await;
        }
    }
    if let Some(f) = fatal {
        bail!("{f}");
    }
    Ok(tally)
}

/// Plays a claimed pair and reports it (again and again while the database is away).
async fn pair_task(
    link: Arc<Link>,
    worker: i64,
    s: Arc<Served>,
    c: Claim,
    pair_cancel: Cancel,
    cancel: Cancel,
    pause: Arc<PauseWatch>,
) -> Done {
    let token = c.token;
    // Either signal stops the pair.
    let stop = Cancel::new();
    let watch = {
        let (a, b, stop) = (pair_cancel.clone(), cancel.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = a.cancelled() => {}
                _ = b.cancelled() => {}
            }
            stop.cancel();
        })
    };
    let end = play_and_report(&link, worker, &s, &c, &stop, &pause).await;
    watch.abort();
    match end {
        Ok((ended, line)) => Done { token, ended, line: Some(line), fatal: None },
        Err(e) => Done {
            token,
            ended: Ended::Failed,
            line: None,
            fatal: Some(format!("run {}: {e:#}", c.run_id)),
        },
    }
}

async fn play_and_report(
    link: &Arc<Link>,
    worker: i64,
    s: &Served,
    c: &Claim,
    stop: &Cancel,
    pause: &PauseWatch,
) -> Result<(Ended, String)> {
    let job = Job {
        seq: c.seq as usize,
        pairing: c.pairing as usize,
        pair: c.pair as usize,
        opening: c.opening as usize,
        // `runner submit` refuses --repeat 1, so a fleet pair has one opening.
        second_opening: None,
    };
    let iteration = match &s.spsa {
        Some(spsa) => match iteration_of(link, s, spsa, c, stop).await? {
            Some(it) => Some(it),
            None => return Ok((Ended::Stopped, lost_line(c))),
        },
        None => None,
    };
    let records = loop {
        match play_pair(&s.spec, job, iteration.as_ref(), stop, pause).await? {
            PairEnd::Played(r) => break r,
            PairEnd::Stopped => return Ok((Ended::Stopped, lost_line(c))),
            PairEnd::Paused(why) => {
                errln!("warning: {why}");
                continue;
            }
            PairEnd::Failed(why) => bail!("{why}"),
        }
    };
    report_pair(link, worker, s, c, &records, stop).await
}

fn lost_line(c: &Claim) -> String {
    format!(
        "run {} pair {}: stopped (lease lost, run stopped, or worker stopping)",
        c.run_id,
        c.pair + 1
    )
}

/// A tuning pair's iteration: logged when the pair was handed out before, else logged now from
/// the current theta. `None`: the lease is lost.
async fn iteration_of(
    link: &Arc<Link>,
    s: &Served,
    spsa: &Spsa,
    c: &Claim,
    stop: &Cancel,
) -> Result<Option<Iteration>> {
    let value = match &c.spsa {
        Some(v) => Some(v.clone()),
        None => {
            let mut n = 0;
            loop {
                let mut begin = |theta: &serde_json::Value| -> Result<serde_json::Value> {
                    let theta: Vec<f64> = serde_json::from_value(theta.clone())?;
                    Ok(serde_json::to_value(spsa.begin(c.pair as u64, &theta))?)
                };
                let r = db_once!(link, |db| queue::log_iteration(
                    db, c.run_id, c.pairing, c.pair, c.token, &mut begin
                ));
                match r {
                    Ok(v) => break v,
                    Err(e) if is_transient(&e) && !stop.is_cancelled() => {
                        sleep_or_cancel(backoff(n), stop).await;
                        n += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    };
    let _ = s;
    match value {
        None => Ok(None),
        Some(v) => Ok(Some(
            serde_json::from_value(v)
                .map_err(|e| anyhow!("a logged iteration does not parse: {e}"))?,
        )),
    }
}

/// Reports a played pair until it is stored or refused.
async fn report_pair(
    link: &Arc<Link>,
    worker: i64,
    s: &Served,
    c: &Claim,
    records: &[GameRecord; 2],
    stop: &Cancel,
) -> Result<(Ended, String)> {
    let values = [serde_json::to_value(&records[0])?, serde_json::to_value(&records[1])?];
    let report = PairReport {
        run_id: c.run_id,
        pairing: c.pairing,
        pair: c.pair,
        token: c.token,
        records: [&values[0], &values[1]],
        scores: [records[0].first_score(), records[1].first_score()],
    };
    let mut n = 0;
    let outcome = loop {
        let mut judge = s.judge.clone();
        let r = db_once!(link, |db| queue::report(db, worker, &report, &mut judge));
        match r {
            Ok(o) => break o,
            // A finished pair is kept and reported again while its lease may still be valid;
            // a signal gives up on it (the pair is played again elsewhere).
            Err(e) if is_transient(&e) && !stop.is_cancelled() => {
                if n == 0 {
                    errln!(
                        "warning: cannot report run {} pair {} ({e:#}); retrying",
                        c.run_id,
                        c.pair + 1
                    );
                }
                sleep_or_cancel(backoff(n), stop).await;
                n += 1;
            }
            Err(e) if is_transient(&e) => return Ok((Ended::Stopped, lost_line(c))),
            Err(e) => return Err(e),
        }
    };
    let label = s.spec.plan.pairings.get(c.pairing as usize).map_or("", |p| p.label.as_str());
    let results = format!("{} {}", records[0].result.pgn(), records[1].result.pgn());
    Ok(match outcome {
        Reported::Stored { stops, run_state } => {
            let mut line =
                format!("run {} {label} pair {}: {results} stored", c.run_id, c.pair + 1);
            for st in stops {
                line.push_str(&format!("\n{}", st.why));
            }
            if let Some(state) = run_state {
                line.push_str(&format!("\nrun {} {state}", c.run_id));
            }
            (Ended::Stored, line)
        }
        Reported::Refused(why) => (
            Ended::Refused,
            format!("run {} {label} pair {}: {results} refused: {why}", c.run_id, c.pair + 1),
        ),
    })
}

async fn sleep_or_cancel(d: Duration, cancel: &Cancel) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = cancel.cancelled() => {}
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
