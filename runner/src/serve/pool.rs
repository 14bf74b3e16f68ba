//! The server's pool of database connections (deadpool-postgres), through which the worker API
//! calls the queue: at most `size` connections; a request that finds them all busy waits at
//! most [`WAIT`], then is answered 503 with `Retry-After` (never queued without bound).

use std::time::Duration;

use anyhow::{Context, Result};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::fleet::connect::parse_target;

/// The longest a request waits for a free connection.
pub const WAIT: Duration = Duration::from_secs(2);

/// The longest a new connection may take to open.
const CREATE: Duration = Duration::from_secs(10);

/// A pool of at most `size` connections to the database at `url` (a libpq URL or key=value
/// string, TLS as `--db` takes it). Connections open at first use: a server that starts while
/// its database restarts answers 503 until the database is back.
pub async fn open(url: &str, size: usize) -> Result<Pool> {
    let target = parse_target(url)?;
    let config = target.config().clone();
    let mc = ManagerConfig { recycling_method: RecyclingMethod::Fast };
    let manager = match target.tls()? {
        None => Manager::from_config(config, NoTls, mc),
        Some(tls) => {
            let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
            Manager::from_config(config, tls, mc)
        }
    };
    Pool::builder(manager)
        .max_size(size.max(1))
        .wait_timeout(Some(WAIT))
        .create_timeout(Some(CREATE))
        .recycle_timeout(Some(CREATE))
        .runtime(Runtime::Tokio1)
        .build()
        .with_context(|| format!("cannot make a connection pool for {target}"))
}
