//! A worker's link to the database: one connection, shared by its slots and its heartbeat,
//! reconnected after a failure, with the rule that tells a passing fault (the server restarts,
//! the network drops, too many connections) from a lasting one (a statement the server refuses).

use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::Client;

use super::connect::DbTarget;
use super::queue::Conn;

/// Waits between attempts after a passing fault: 0.5 s doubling up to this.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The shared connection (with its prepared statements, made again with it).
pub struct Link {
    target: DbTarget,
    client: Mutex<Option<Conn>>,
}

/// Whether an error is worth retrying: no server-side error (connection closed, I/O, timeout), or
/// a server error of the classes that pass: connection exceptions (08), operator intervention
/// (57: shutdown, restart), insufficient resources (53), transaction rollbacks (40: deadlock,
/// serialization).
pub fn is_transient(e: &anyhow::Error) -> bool {
    for cause in e.chain() {
        if let Some(pg) = cause.downcast_ref::<tokio_postgres::Error>() {
            return match pg.as_db_error() {
                None => true,
                Some(db) => {
                    let code = db.code().code();
                    ["08", "57", "53", "40"].iter().any(|c| code.starts_with(c))
                }
            };
        }
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
    }
    // Errors of ours (a connect that timed out is reported by the driver, above).
    e.to_string().contains("cannot connect to the database")
}

/// A connected client made ready for the queue ([`Conn::open`]); the error keeps the driver's
/// cause, so [`is_transient`] still sees a server that went away.
async fn open(target: &DbTarget, client: Client) -> Result<Conn> {
    Conn::open(client, target.prepared_statements())
        .await
        .with_context(|| format!("cannot set up the connection to {target}"))
}

impl Link {
    pub async fn new(target: DbTarget, client: Client) -> Result<Link> {
        let conn = open(&target, client).await?;
        Ok(Link { target, client: Mutex::new(Some(conn)) })
    }

    pub fn target(&self) -> &DbTarget {
        &self.target
    }

    /// The connection, made again if it was dropped or closed.
    pub async fn get(&self) -> Result<ClientGuard<'_>> {
        let mut g = self.client.lock().await;
        if g.as_ref().is_none_or(|c| c.is_closed()) {
            *g = None;
            let client = self.target.connect().await?;
            *g = Some(open(&self.target, client).await?);
        }
        Ok(ClientGuard(g))
    }

    /// Drops the connection after a failure (the next [`Link::get`] connects again).
    pub async fn reset(&self) {
        *self.client.lock().await = None;
    }
}

/// A locked, connected client.
pub struct ClientGuard<'a>(MutexGuard<'a, Option<Conn>>);

impl ClientGuard<'_> {
    pub fn client(&mut self) -> &mut Conn {
        self.0.as_mut().expect("ClientGuard holds a client")
    }

    /// Drops the connection (a failure was seen on it).
    pub fn reset(mut self) {
        *self.0 = None;
    }
}

/// The wait before attempt `n` (from 0).
pub fn backoff(n: u32) -> Duration {
    Duration::from_millis(500u64.saturating_mul(1 << n.min(5))).min(MAX_BACKOFF)
}
