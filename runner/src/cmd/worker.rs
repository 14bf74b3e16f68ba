//! `runner worker`: serves the fleet's runs through the fleet's server (`--server`, under the
//! worker's key) until there is no work left (or, with `--wait`, until a signal).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cli::WorkerArgs;
use crate::exit::Exit;
use crate::fleet::artifacts::cache::{Cache, default_dir};
use crate::fleet::artifacts::fetch_run_artifacts;
use crate::fleet::boxing::EngineBox;
use crate::fleet::client::WorkerClient;
use crate::fleet::client::people::{SERVER_ENV, server_from_env};
use crate::fleet::link::{STATEMENT_TIMEOUT, backoff, is_transient};
use crate::fleet::load::{LoadOptions, load_run};
use crate::fleet::source::load::{BuildOptions, build_run_engines};
use crate::fleet::worker::{LoadRun, WorkerOptions, run_worker};
use crate::play::cancel::{Cancel, cancel_on_signals_after};
use crate::play::tablebase::Tables;
use crate::play::worker::default_concurrency;

/// What a worker prints when a signal stops it.
const STOPPING: &str =
    "stopping: games in flight are dropped and their pairs given back to the queue";

/// The environment variable holding a worker's key when `--key-file` is not given.
pub const KEY_ENV: &str = "RUNNER_WORKER_KEY";

/// How long a worker waits at start for a server that is away (restarting, or its database).
const START_PATIENCE: Duration = Duration::from_secs(300);

/// `runner worker`. Returns the process exit code.
pub async fn run(args: &WorkerArgs) -> Result<Exit> {
    let key = worker_key(args)?;
    let cancel = Cancel::new();
    // `timeout`, Slurm and systemd signal the worker and its process group: one stop.
    cancel_on_signals_after(cancel.clone(), STOPPING, SIGNAL_GRACE);
    let timeout = args.statement_timeout.map_or(STATEMENT_TIMEOUT, Duration::from_secs_f64);
    let Some(key) = key else {
        bail!(
            "a worker needs a key: --key-file FILE or {KEY_ENV} (an approver issues one with \
             `runner worker-key add NAME`)"
        );
    };
    let url = server_url(args)?;
    let door = WorkerClient::new(&url, args.ca.as_deref(), Some(key), timeout)?;
    tokio::select! {
        r = patiently(|| door.version()) => { r?; }
        _ = cancel.cancelled() => return Ok(Exit::Interrupted),
    }
    let link = Arc::new(door);
    let opts = WorkerOptions {
        run: args.run,
        concurrency: args.concurrency.unwrap_or_else(default_concurrency),
        lease: Duration::from_secs_f64(args.lease),
        wait: args.wait,
        tune_in_flight: args.tune_in_flight.unwrap_or(crate::fleet::queue::TUNE_IN_FLIGHT),
    };
    let dir = match &args.cache {
        Some(d) => d.clone(),
        None => default_dir()?,
    };
    let cache = Cache::open(dir, args.cache_max_mb.saturating_mul(1 << 20))?;
    if let Some(d) = &args.log_dir {
        // Made now, so that the box can hide it.
        crate::store::files::create_dir_all(d)?;
    }
    let boxing = EngineBox::for_worker(args.no_box, &box_hidden(args, &cache.dir), &args.box_show);
    let load_opts = LoadOptions {
        log_dir: args.log_dir.clone(),
        trust: args.trust.clone(),
        engines_file: args.engines_file.clone(),
        tables: args.tb.as_deref().map(Tables::open).transpose()?,
        boxing: boxing.clone(),
    };
    let (rt, link2) = (tokio::runtime::Handle::current(), link.clone());
    let fetch = !args.no_artifacts;
    let build = BuildOptions {
        timeout: Duration::from_secs_f64(args.build_timeout),
        boxing,
        net: args.build_net,
    };
    let load: LoadRun = Arc::new(move |row, id| {
        let files = match fetch {
            true => fetch_run_artifacts(&rt, &link2, id, row.id, &cache)
                .map_err(|e| format!("cannot fetch the run's engines: {e:#}"))?,
            false => Default::default(),
        };
        let built = build_run_engines(&rt, &link2, id, row, &files, &cache, &build)?;
        load_run(row, &load_opts, &files, &built)
    });
    let tally = run_worker(link, &opts, load, cancel.clone()).await?;
    errln!(
        "worker done: {} pair(s) stored, {} refused, {} stopped, {} incident(s), {} run(s) refused",
        tally.stored,
        tally.refused,
        tally.stopped,
        tally.incidents,
        tally.runs_refused
    );
    Ok(Exit::done_unless(cancel.is_cancelled()))
}

/// Signals within this of the first are the same stop (see `cancel_on_signals_after`).
const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// `f` until it succeeds or fails for good, for up to [`START_PATIENCE`] (a server restarting).
async fn patiently<T, F, Fut>(mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let start = std::time::Instant::now();
    let mut n = 0;
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if is_transient(&e) && start.elapsed() < START_PATIENCE => {
                if n == 0 {
                    errln!("warning: {e:#}; retrying for up to {} s", START_PATIENCE.as_secs());
                }
                let wait =
                    crate::fleet::client::retry_after(&e).map_or(backoff(n), |r| r.max(backoff(n)));
                tokio::time::sleep(wait).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// What a box hides of this worker's own besides its home: its key file, cache, logs and
/// `--box-hide` paths.
fn box_hidden(args: &WorkerArgs, cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let own = [args.key_file.as_deref(), Some(cache), args.log_dir.as_deref()];
    own.into_iter().flatten().map(Into::into).chain(args.box_hide.iter().cloned()).collect()
}

/// The worker's key: `--key-file`, else `RUNNER_WORKER_KEY`, else none.
fn worker_key(args: &WorkerArgs) -> Result<Option<String>> {
    use crate::fleet::credentials::{check_kind, secret_file};
    if let Some(f) = &args.key_file {
        let key = secret_file(f, "key", "`runner worker-key add` printed it")?;
        check_kind(&key, true).with_context(|| format!("the key file {}", f.display()))?;
        return Ok(Some(key));
    }
    let key = std::env::var(KEY_ENV).ok().map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
    if let Some(k) = &key {
        check_kind(k, true).context(KEY_ENV)?;
    }
    Ok(key)
}

/// The server's URL: `--server`, else `RUNNER_SERVER`.
fn server_url(args: &WorkerArgs) -> Result<String> {
    match args.server.clone().filter(|s| !s.trim().is_empty()).or_else(server_from_env) {
        Some(url) => Ok(url),
        None => bail!(
            "no fleet server: give --server URL (or set {SERVER_ENV}); a worker speaks only to \
             the fleet's server (`runner serve --db URL`), never to its database"
        ),
    }
}
