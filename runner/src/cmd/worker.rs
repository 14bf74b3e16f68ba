//! `runner worker`: serves the fleet's runs from the database until there is no work left (or,
//! with `--wait`, until a signal).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cli::WorkerArgs;
use crate::exit::Exit;
use crate::fleet::artifacts::cache::{Cache, default_dir};
use crate::fleet::artifacts::fetch_run_artifacts;
use crate::fleet::boxing::EngineBox;
use crate::fleet::connect::{db_url, parse_target};
use crate::fleet::link::{Link, STATEMENT_TIMEOUT, connect_patiently};
use crate::fleet::load::{LoadOptions, load_run};
use crate::fleet::schema;
use crate::fleet::source::load::{BuildOptions, build_run_engines};
use crate::fleet::worker::{LoadRun, WorkerOptions, run_worker};
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::worker::default_concurrency;

/// What a worker prints when a signal stops it.
const STOPPING: &str =
    "stopping: games in flight are dropped and their pairs given back to the queue";

/// The environment variable holding a worker's key when `--key-file` is not given.
pub const KEY_ENV: &str = "RUNNER_WORKER_KEY";

/// How long a worker waits at start for a database that refuses connections (full, restarting).
const START_PATIENCE: Duration = Duration::from_secs(300);

/// `runner worker`. Returns the process exit code.
pub async fn run(args: &WorkerArgs) -> Result<Exit> {
    let target = parse_target(&db_url(args.db.as_deref())?)?;
    let key = worker_key(args)?;
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), STOPPING);
    let client = tokio::select! {
        c = connect_patiently(&target, START_PATIENCE) => c?,
        _ = cancel.cancelled() => return Ok(Exit::Interrupted),
    };
    schema::check(&client).await?;
    drop(client);
    let timeout = args.statement_timeout.map_or(STATEMENT_TIMEOUT, Duration::from_secs_f64);
    let link = Arc::new(Link::with_timeout(target, timeout));
    let opts = WorkerOptions {
        run: args.run,
        concurrency: args.concurrency.unwrap_or_else(default_concurrency),
        lease: Duration::from_secs_f64(args.lease),
        wait: args.wait,
        key,
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
    let boxing = EngineBox::for_worker(args.no_box, &box_hidden(args, &cache.dir));
    let load_opts = LoadOptions {
        log_dir: args.log_dir.clone(),
        trust: args.trust.clone(),
        engines_file: args.engines_file.clone(),
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

/// What a box hides of this worker's own besides its home: its key file, cache, logs and
/// `--box-hide` paths.
fn box_hidden(args: &WorkerArgs, cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let own = [args.key_file.as_deref(), Some(cache), args.log_dir.as_deref()];
    own.into_iter().flatten().map(Into::into).chain(args.box_hide.iter().cloned()).collect()
}

/// The worker's key: `--key-file`, else `RUNNER_WORKER_KEY`, else none.
fn worker_key(args: &WorkerArgs) -> Result<Option<String>> {
    if let Some(f) = &args.key_file {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("cannot read the key file {}", f.display()))?;
        let key = text.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            bail!(
                "the key file {} holds no key (one line, as `runner worker-key add` printed it)",
                f.display()
            );
        }
        return Ok(Some(key.to_string()));
    }
    Ok(std::env::var(KEY_ENV).ok().map(|k| k.trim().to_string()).filter(|k| !k.is_empty()))
}
