//! `runner worker`: serves the fleet's runs from the database until there is no work left (or,
//! with `--wait`, until a signal).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::cli::WorkerArgs;
use crate::exit::Exit;
use crate::fleet::connect::{db_url, parse_target};
use crate::fleet::link::Link;
use crate::fleet::schema;
use crate::fleet::serve::load_run;
use crate::fleet::worker::{WorkerOptions, run_worker};
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::worker::default_concurrency;

/// What a worker prints when a signal stops it.
const STOPPING: &str =
    "stopping: games in flight are dropped and their pairs given back to the queue";

/// `runner worker`. Returns the process exit code.
pub async fn run(args: &WorkerArgs) -> Result<Exit> {
    let target = parse_target(&db_url(args.db.as_deref())?)?;
    let client = target.connect().await?;
    schema::check(&client).await?;
    let link = Arc::new(Link::new(target, client).await?);
    let opts = WorkerOptions {
        run: args.run,
        concurrency: args.concurrency.unwrap_or_else(default_concurrency),
        lease: Duration::from_secs_f64(args.lease),
        wait: args.wait,
    };
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), STOPPING);
    let log_dir = args.log_dir.clone();
    let load = move |row: &crate::fleet::queue::RunRow| load_run(row, log_dir.as_deref());
    let tally = run_worker(link, &opts, &load, cancel.clone()).await?;
    errln!(
        "worker done: {} pair(s) stored, {} refused, {} stopped",
        tally.stored,
        tally.refused,
        tally.stopped
    );
    Ok(Exit::done_unless(cancel.is_cancelled()))
}
