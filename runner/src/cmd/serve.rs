//! `runner serve [--db URL] [--results DIR] [--bind ADDR]`: wires the arguments to
//! [`crate::serve::serve`].

use anyhow::Result;

use crate::cli::ServeArgs;
use crate::exit::Exit;
use crate::serve::{Config, serve};

/// `runner serve`: runs until stopped. Returns the process exit code.
pub async fn run(args: &ServeArgs) -> Result<Exit> {
    let db = args.db.clone().or_else(|| std::env::var("RUNNER_DB").ok().filter(|s| !s.is_empty()));
    if !args.results.is_dir() {
        errln!(
            "note: --results {}: no such folder, so no local run is listed (until it is made; \
             give --results DIR for another)",
            args.results.display()
        );
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some((c.clone(), k.clone())),
        _ => None,
    };
    serve(Config {
        results: args.results.clone(),
        db,
        bind: args.bind,
        tls,
        private: args.private,
        public_url: args.public_url.clone(),
        trusted_proxies: args.trusted_proxy.clone(),
        worker_poll: std::time::Duration::from_secs(args.worker_poll.into()),
    })
    .await?;
    Ok(Exit::Done)
}
