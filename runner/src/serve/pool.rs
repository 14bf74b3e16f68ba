//! The server's connections to PostgreSQL: one pool (deadpool-postgres) of clients of the role
//! the server connects as, made as [`crate::fleet::connect`] makes a connection (the same URL
//! forms, TLS by rustls), each checked before it is handed out again.

use anyhow::{Context, Result};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::fleet::connect::parse_target;

/// A pool of at most `size` connections to the database at `url`.
pub async fn open(url: &str, size: usize) -> Result<Pool> {
    let target = parse_target(url)?;
    let cfg = ManagerConfig { recycling_method: RecyclingMethod::Fast };
    let manager = match target.tls_connector()? {
        Some(tls) => Manager::from_config(target.pg_config().clone(), tls, cfg),
        None => Manager::from_config(target.pg_config().clone(), NoTls, cfg),
    };
    Pool::builder(manager)
        .max_size(size.max(1))
        .build()
        .with_context(|| format!("cannot make a connection pool for {target}"))
}
