//! `runner worker`: claims game pairs from the queue, plays them with the play layer, reports
//! each finished pair, renews its leases, and stops a pair at once when its lease is lost (the run
//! was decided or cancelled, or the lease expired and another worker took the pair).
//!
//! A worker is one of many, on anybody's machine, and one bad run or one bad answer must not
//! stop it: a run it cannot play (an engine that does not start or is not trusted here, a
//! binary of another hash, the fault limit reached) is refused in one line, recorded by the
//! server with the reason, its pairs given back, and the worker goes on with the other runs;
//! a report the server refuses for a reason other than a lost lease is recorded as an
//! incident and the pair given back. Every request has a deadline ([`super::link`]); a
//! server that is away is retried with jittered backoff, and a finished pair is kept in
//! memory and reported again until it is stored or refused. Loading a run (hashing and
//! benching its engines) runs off the loop that renews the leases. Without `--wait` the worker
//! ends when no run it serves has a pair left (it waits out the leases of workers that may have
//! died, and plays their pairs).
//!
//! [`state`] is the loop (claim, load, play, beat, idle); [`task`] plays and reports one pair.

mod state;
mod task;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use super::client::WorkerClient;
use super::decide::RunJudge;
use super::pair::RunSpec;
use super::queue::{self, RunRow, WorkerId};
use crate::play::cancel::Cancel;

/// How long an idle worker waits before it asks for work again, unless the server says
/// otherwise (`runner serve --worker-poll`).
pub const IDLE_POLL: Duration = Duration::from_secs(2);

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
    /// A tuning run's iterations handed out beyond those applied (`queue::TUNE_IN_FLIGHT`).
    pub tune_in_flight: i64,
}

/// What the worker needs to serve a run.
pub struct Served {
    pub spec: Arc<RunSpec>,
    pub judge: RunJudge,
    /// `--fault-limit`: games in a row one engine may lose by its own fault on this worker
    /// before it refuses the run (0: never).
    pub fault_limit: u32,
}

/// Loads a run for this worker: its plan, openings, engines resolved, trusted and checked on
/// this machine (the worker fetches the run's artifacts under its own id). `Err` is the line saying why the worker refuses the run. Called off the async
/// loop (it hashes binaries and runs their `bench`).
pub type LoadRun = Arc<dyn Fn(&RunRow, &WorkerId) -> Result<Served, String> + Send + Sync>;

/// Counts of what a worker did (printed at its end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub stored: u64,
    pub refused: u64,
    pub stopped: u64,
    /// Reports the server refused for another reason than a lost lease (recorded).
    pub incidents: u64,
    /// Runs this worker refused.
    pub runs_refused: u64,
}

/// Runs a worker until its work is done, `cancel` (a signal) stops it, or a lasting fault.
pub async fn run_worker(
    link: Arc<WorkerClient>,
    opts: &WorkerOptions,
    load: LoadRun,
    cancel: Cancel,
) -> Result<Tally> {
    let machine = this_machine();
    let host = machine.host.clone();
    let pid = std::process::id() as i32;
    let (conc, lease) = (opts.concurrency as i32, opts.lease);
    // A server (or its database) that is away at start is waited for, as a running worker waits.
    let id = link
        .call("registering the worker", &cancel, |d| d.register(&machine, pid, conc, lease))
        .await?;
    if let Some(run) = opts.run {
        let row = link.call("reading the run", &cancel, |d| d.run(&id, run)).await?;
        match row {
            None => {
                stop(&link, &id).await;
                bail!("no run {run} in the database");
            }
            Some(r) if r.state != "active" => {
                errln!("run {run} is {}: nothing to play", r.state);
                stop(&link, &id).await;
                return Ok(Tally::default());
            }
            Some(_) => {}
        }
    }
    errln!(
        "worker {} on {host} (pid {pid}, key {}): concurrency {}, lease {} s, {}",
        id.id,
        id.key_name,
        opts.concurrency,
        opts.lease.as_secs_f64(),
        link
    );
    let result = state::Worker::new(link.clone(), id.clone(), opts, load, cancel).serve().await;
    stop(&link, &id).await;
    result
}

async fn stop(link: &WorkerClient, id: &WorkerId) {
    let _ = link.parting(|d| d.stopped(id)).await;
}

/// What this machine is: host name, CPU model, the CPUs this process may use.
fn this_machine() -> queue::Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| cpu_model(&s));
    let cores = std::thread::available_parallelism().ok().and_then(|n| i32::try_from(n.get()).ok());
    queue::Machine { host: hostname(), cpu, cores, version: None }
}

/// The CPU model /proc/cpuinfo names: "model name" (x86), else "cpu model" or "Hardware" (some
/// ARM and MIPS kernels); None when it names none.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "cpu model", "Hardware"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
            (k.trim() == *key && !v.is_empty()).then_some(v)
        })
    })
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Where a worker keeps engine logs: `--log-dir`'s folder for run `run`.
pub fn run_log_dir(base: &std::path::Path, run: i64) -> PathBuf {
    base.join(format!("run-{run}"))
}

#[cfg(test)]
mod tests {
    use super::cpu_model;

    #[test]
    fn the_cpu_model_is_read_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD  Ryzen 9 7950X 16-Core Processor\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("AMD Ryzen 9 7950X 16-Core Processor"));
        assert_eq!(cpu_model("processor : 0\nHardware : BCM2835\n").as_deref(), Some("BCM2835"));
        assert_eq!(cpu_model("processor : 0\nmodel name :\n"), None);
        assert_eq!(cpu_model(""), None);
    }
}
