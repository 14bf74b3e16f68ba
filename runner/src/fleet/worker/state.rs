//! The worker's loop, as a small state machine over what it holds: pairs in flight (a task
//! each), pairs claimed for a run still being loaded, runs served, runs refused. Each turn it
//! claims for its free slots, then waits for the first of: a pair task ending, a run loaded, a
//! heartbeat, a signal. With nothing held it is idle: it settles the runs it served, then ends
//! (no work left) or waits for leases of others or new runs (`--wait`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio::task::JoinSet;

use super::task::{Done, Ended, pair_task};
use super::{IDLE_POLL, LoadRun, Served, Tally, WorkerOptions};
use crate::fleet::client::WorkerClient;
use crate::fleet::link::{is_transient, sleep_or_cancel};
use crate::fleet::queue::{Claim, ClaimAsk, RunRow, Waiting, WorkerId};
use crate::play::cancel::Cancel;
use crate::play::pause::PauseWatch;
use crate::report::warnings::FaultStreaks;

/// Reports of one run the server may refuse for a lasting reason before the worker refuses
/// the run (a pair that cannot be stored would otherwise be claimed and played again forever).
const INCIDENT_LIMIT: u32 = 3;

/// A pair in flight.
struct InFlight {
    run: i64,
    cancel: Cancel,
}

/// What idling found.
enum Idle {
    /// No work left (and no `--wait`).
    Done,
    /// Waited; look again.
    Again,
}

pub(super) struct Worker<'a> {
    link: Arc<WorkerClient>,
    id: WorkerId,
    opts: &'a WorkerOptions,
    load: LoadRun,
    cancel: Cancel,
    pause: Arc<PauseWatch>,
    served: HashMap<i64, Arc<Served>>,
    /// Runs being loaded, with the pairs claimed for them meanwhile (their leases are renewed).
    loading: HashMap<i64, Vec<Claim>>,
    loads: JoinSet<(i64, Result<Served, String>)>,
    refused: Vec<i64>,
    /// Served runs with nothing open that this worker asked the server to settle.
    settled: HashSet<i64>,
    flying: HashMap<i64, InFlight>,
    tasks: JoinSet<Done>,
    /// Per run: games in a row an engine lost by its own fault on this worker.
    faults: HashMap<i64, FaultStreaks>,
    /// Per run: reports the server refused for a lasting reason (incidents).
    incidents: HashMap<i64, u32>,
    tally: Tally,
    idle_said: bool,
    /// When an idle worker last said it is alive.
    idle_beat: Option<std::time::Instant>,
    /// A lasting fault: the worker stops with it (exit 1).
    fatal: Option<String>,
    /// Whether the last heartbeat failed (one warning per streak of failures).
    beat_failing: bool,
    /// The run of the last pair started: claims keep the worker on it while it is within its
    /// share, so its engines (kept in its pools) are not started again.
    current: Option<i64>,
}

impl<'a> Worker<'a> {
    pub(super) fn new(
        link: Arc<WorkerClient>,
        id: WorkerId,
        opts: &'a WorkerOptions,
        load: LoadRun,
        cancel: Cancel,
    ) -> Worker<'a> {
        Worker {
            link,
            id,
            opts,
            load,
            cancel,
            pause: Arc::new(PauseWatch::new()),
            served: HashMap::new(),
            loading: HashMap::new(),
            loads: JoinSet::new(),
            refused: Vec::new(),
            settled: HashSet::new(),
            flying: HashMap::new(),
            tasks: JoinSet::new(),
            faults: HashMap::new(),
            incidents: HashMap::new(),
            tally: Tally::default(),
            idle_said: false,
            idle_beat: None,
            fatal: None,
            beat_failing: false,
            current: None,
        }
    }

    /// Serves until no work is left, a signal, or a lasting fault.
    pub(super) async fn serve(mut self) -> Result<Tally> {
        let ticker = self.pause.spawn_ticker();
        let result = self.turns().await;
        ticker.abort();
        self.stop().await;
        result?;
        if let Some(f) = self.fatal.take() {
            bail!("{f}");
        }
        Ok(self.tally)
    }

    async fn turns(&mut self) -> Result<()> {
        // A decision or a cancel reaches the worker within one beat.
        let beat_every =
            self.opts.lease.div_f64(4.0).clamp(Duration::from_millis(200), Duration::from_secs(2));
        let mut beat = tokio::time::interval(beat_every);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.cancel.is_cancelled() || self.fatal.is_some() {
                return Ok(());
            }
            // A signal acts at once, even while a request waits on a server that stopped
            // answering (the request's own deadline would come later).
            let cancel = self.cancel.clone();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ok(()),
                r = self.claim() => r?,
            }
            if self.flying.is_empty() && self.loading.is_empty() {
                let idle = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Ok(()),
                    r = self.idle() => r?,
                };
                match idle {
                    Idle::Done => return Ok(()),
                    Idle::Again => continue,
                }
            }
            tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Ok(()),
                Some(done) = self.tasks.join_next() => match done {
                    Ok(d) => self.on_done(d).await,
                    Err(e) => self.fatal = Some(format!("a pair task failed: {e}")),
                },
                Some(loaded) = self.loads.join_next() => match loaded {
                    Ok((run, r)) => self.on_loaded(run, r).await,
                    Err(e) => self.fatal = Some(format!("loading a run failed: {e}")),
                },
                _ = beat.tick() => {
                    let cancel = self.cancel.clone();
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return Ok(()),
                        _ = self.beat() => {}
                    }
                }
            }
        }
    }

    fn held(&self) -> usize {
        self.flying.len() + self.loading.values().map(Vec::len).sum::<usize>()
    }

    /// Claims pairs for the free slots; a pair of a run not yet served waits for its load.
    async fn claim(&mut self) -> Result<()> {
        let free = self.opts.concurrency.saturating_sub(self.held());
        if free == 0 {
            return Ok(());
        }
        let ask = ClaimAsk {
            only: self.opts.run,
            skip: self.refused.clone(),
            current: self.current.filter(|r| self.served.contains_key(r)),
            n: free as i64,
            lease: self.opts.lease,
            tune_in_flight: self.opts.tune_in_flight,
        };
        let claimed = match self.link.claim(&self.id, &ask).await {
            Ok(c) => c,
            Err(e) if is_transient(&e) => {
                errln!("warning: cannot claim work ({e:#}); retrying");
                sleep_or_cancel(self.link.wait(2, &e), &self.cancel).await;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        for c in claimed {
            self.idle_said = false;
            if let Some(s) = self.served.get(&c.run_id).cloned() {
                self.start(s, c);
            } else if let Some(waiting) = self.loading.get_mut(&c.run_id) {
                waiting.push(c);
            } else {
                self.begin_load(c).await;
            }
        }
        Ok(())
    }

    /// Reads run `c.run_id` and loads it off the loop; `c` waits for it.
    async fn begin_load(&mut self, c: Claim) {
        let run = c.run_id;
        let row: Option<RunRow> = match self.link.run(&self.id, run).await {
            Ok(r) => r,
            Err(e) => {
                errln!("warning: cannot read run {run} ({e:#}); its pair goes back");
                let _ = self.link.release(&self.id, &[c.token]).await;
                return;
            }
        };
        let Some(row) = row else { return };
        self.loading.insert(run, vec![c]);
        let (load, id) = (self.load.clone(), self.id.clone());
        self.loads.spawn(async move {
            let r = tokio::task::spawn_blocking(move || load(&row, &id))
                .await
                .unwrap_or_else(|e| Err(format!("loading it failed: {e}")));
            (run, r)
        });
    }

    async fn on_loaded(&mut self, run: i64, r: Result<Served, String>) {
        let waiting = self.loading.remove(&run).unwrap_or_default();
        match r {
            Ok(s) => {
                errln!("serving run {run}");
                let s = Arc::new(s);
                self.served.insert(run, s.clone());
                for c in waiting {
                    self.start(s.clone(), c);
                }
            }
            Err(why) => {
                let tokens: Vec<i64> = waiting.iter().map(|c| c.token).collect();
                self.refuse(run, &why, tokens).await;
            }
        }
    }

    fn start(&mut self, s: Arc<Served>, c: Claim) {
        self.current = Some(c.run_id);
        let pair_cancel = Cancel::new();
        self.flying.insert(c.token, InFlight { run: c.run_id, cancel: pair_cancel.clone() });
        self.tasks.spawn(pair_task(
            self.link.clone(),
            self.id.clone(),
            s,
            c,
            pair_cancel,
            self.cancel.clone(),
            self.pause.clone(),
        ));
    }

    async fn on_done(&mut self, d: Done) {
        if let Some(l) = &d.line {
            errln!("{l}");
        }
        self.flying.remove(&d.token);
        match d.ended {
            Ended::Stored => self.tally.stored += 1,
            Ended::Refused => self.tally.refused += 1,
            Ended::Stopped => self.tally.stopped += 1,
            Ended::Incident => self.tally.incidents += 1,
            Ended::CannotPlay => {}
        }
        let mut refuse = d.cannot_play.clone();
        if d.ended == Ended::Incident {
            let n = self.incidents.entry(d.run).or_default();
            *n += 1;
            if *n >= INCIDENT_LIMIT {
                refuse.get_or_insert(format!(
                    "the server refused {n} of its reports (recorded as incidents)"
                ));
            }
        }
        if refuse.is_none()
            && let (Some(records), Some(s)) = (&d.records, self.served.get(&d.run))
        {
            let streaks =
                self.faults.entry(d.run).or_insert_with(|| FaultStreaks::new(s.fault_limit));
            for r in records.iter() {
                if let Some(why) = streaks.on_game(r) {
                    refuse.get_or_insert(why);
                }
            }
        }
        if let Some(why) = refuse
            && !self.refused.contains(&d.run)
        {
            self.refuse(d.run, &why, vec![d.token]).await;
        }
    }

    /// Refuses run `run`: its pairs in flight stop, every lease this worker holds of it goes
    /// back, the refusal is recorded, and the worker claims no more of it.
    async fn refuse(&mut self, run: i64, why: &str, mut tokens: Vec<i64>) {
        errln!("refusing run {run}: {why}");
        for (t, f) in self.flying.iter().filter(|(_, f)| f.run == run) {
            f.cancel.cancel();
            tokens.push(*t);
        }
        self.refused.push(run);
        self.tally.runs_refused += 1;
        if let Some(s) = self.served.remove(&run) {
            for p in &s.spec.pools {
                p.shutdown_idle().await;
            }
        }
        let id = &self.id;
        let said = self
            .link
            .call("recording the refusal", &self.cancel, |d| d.refuse(id, run, why, &tokens))
            .await;
        match said {
            Ok(state) if state == "failed" => {
                errln!("run {run} failed: refused by enough workers (runner status shows why)")
            }
            Ok(_) => {}
            Err(e) => errln!("warning: the refusal of run {run} was not recorded ({e:#})"),
        }
        if self.opts.run == Some(run) {
            // The one run asked for cannot be played here: an error.
            self.fatal.get_or_insert(format!("refusing run {run}: {why}"));
        }
    }

    /// Renews the leases held; a lost one stops its pair.
    async fn beat(&mut self) {
        let mut tokens: Vec<i64> = self.flying.keys().copied().collect();
        tokens.extend(self.loading.values().flatten().map(|c| c.token));
        if tokens.is_empty() {
            return;
        }
        let (id, lease) = (&self.id, self.opts.lease);
        let held = &tokens;
        match self.link.heartbeat(id, held, lease).await {
            Ok(alive) => {
                if self.beat_failing {
                    errln!("heartbeat: the server answers again");
                }
                self.beat_failing = false;
                let alive: HashSet<i64> = alive.into_iter().collect();
                for t in tokens.iter().filter(|t| !alive.contains(t)) {
                    if let Some(f) = self.flying.get(t) {
                        f.cancel.cancel();
                    }
                    for waiting in self.loading.values_mut() {
                        if let Some(c) = waiting.iter().find(|c| c.token == *t) {
                            errln!("{} before its engines were ready", super::task::lost_line(c));
                            self.tally.stopped += 1;
                        }
                        waiting.retain(|c| c.token != *t);
                    }
                }
            }
            Err(e) => {
                if !self.beat_failing {
                    errln!(
                        "warning: heartbeat failed ({e:#}); retrying (leases last {} s)",
                        lease.as_secs_f64()
                    );
                }
                self.beat_failing = true;
                if !is_transient(&e) {
                    self.fatal.get_or_insert(format!("heartbeat: {e:#}"));
                }
            }
        }
    }

    /// Nothing held: settle the runs served, then end, or wait for leases of others or new runs.
    async fn idle(&mut self) -> Result<Idle> {
        let (id, only, skip) = (&self.id, self.opts.run, &self.refused);
        let Waiting { runs: open, soonest, poll } =
            match self.link.outstanding(id, only, skip).await {
                Ok(x) => x,
                Err(e) if is_transient(&e) => {
                    errln!("warning: cannot read the runs ({e:#}); retrying");
                    sleep_or_cancel(self.link.wait(2, &e), &self.cancel).await;
                    return Ok(Idle::Again);
                }
                Err(e) => return Err(e),
            };
        // A served run with nothing open may still be 'active' when this worker's last report
        // did not settle it (its process was stopped between the two calls, say): settle it.
        let unsettled: Vec<i64> = self
            .served
            .keys()
            .copied()
            .filter(|r| !open.contains(r) && !self.settled.contains(r))
            .collect();
        for run in unsettled {
            if self.link.settle(&self.id, run).await.is_ok() {
                self.settled.insert(run);
            }
        }
        if open.is_empty() && !self.opts.wait {
            return Ok(Idle::Done);
        }
        // An idle worker holds no lease to renew, but says it is alive (`runner workers`), as
        // often as a busy one beats at most.
        let lease = self.opts.lease;
        if self.idle_beat.is_none_or(|t| t.elapsed() >= lease.div_f64(4.0)) {
            self.idle_beat = Some(std::time::Instant::now());
            let _ = self.link.heartbeat(&self.id, &[], lease).await;
        }
        if !self.idle_said {
            self.idle_said = true;
            let runs = open.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ");
            if open.is_empty() {
                errln!("no work: waiting for new runs (--wait)");
            } else if soonest.is_some() {
                errln!("no pair free: waiting for the leases of other workers on run(s) {runs}");
            } else {
                errln!(
                    "no pair free: run(s) {runs} hand out more pairs only as results come in \
                     (a tuning run's iterations in flight are bounded)"
                );
            }
        }
        let poll = poll.unwrap_or(IDLE_POLL);
        let wait = soonest.unwrap_or(poll).clamp(Duration::from_millis(200), poll);
        sleep_or_cancel(wait, &self.cancel).await;
        Ok(Idle::Again)
    }

    /// Stopping: the games in flight end; their pairs, and those waiting for a load, go back to
    /// the queue at once.
    async fn stop(&mut self) {
        let mut tokens: Vec<i64> = Vec::new();
        for (t, f) in &self.flying {
            f.cancel.cancel();
            tokens.push(*t);
        }
        while let Some(done) = self.tasks.join_next().await {
            if let Ok(d) = done {
                match d.ended {
                    Ended::Stored => {
                        self.tally.stored += 1;
                        tokens.retain(|t| *t != d.token);
                    }
                    Ended::Refused => self.tally.refused += 1,
                    Ended::Incident => self.tally.incidents += 1,
                    Ended::Stopped | Ended::CannotPlay => self.tally.stopped += 1,
                }
                if let Some(l) = d.line.filter(|_| d.ended == Ended::Stored) {
                    errln!("{l}");
                }
            }
        }
        self.loads.abort_all();
        tokens.extend(self.loading.values().flatten().map(|c| c.token));
        if !tokens.is_empty() {
            let (id, tokens) = (&self.id, &tokens);
            let _ = self.link.parting(|d| d.release(id, tokens)).await;
        }
        for s in self.served.values() {
            for p in &s.spec.pools {
                p.shutdown_idle().await;
            }
        }
    }
}
