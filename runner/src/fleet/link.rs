//! A worker's link to the database: one connection, shared by its slots and its heartbeat,
//! reconnected after a failure; the rule that tells a passing fault (the server restarts, the
//! network drops, too many connections, a statement that timed out) from a lasting one (a
//! statement the server refuses), read from the error's type and SQLSTATE, never its text; and
//! [`Link::call`], the one way a worker runs a statement: with a deadline, and retried after a
//! passing fault with jittered backoff until it succeeds, fails for good, or the caller gives up.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::Mutex;
use tokio_postgres::Client;

use super::connect::DbTarget;
use super::queue::Conn;
use crate::play::cancel::Cancel;

/// Waits between attempts after a passing fault: 0.5 s doubling up to this, each with up to
/// half again of random jitter (so that hundreds of workers cut off by one restart do not come
/// back in lockstep).
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The longest a statement (or a connection) may take before the worker gives up on the
/// connection and makes a new one. A claim, report or heartbeat takes milliseconds; this is
/// for a server that stopped answering without closing the connection.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(20);

/// The longest a stopping worker waits for each of its last statements (giving its leases back,
/// saying it stopped). Both are courtesies (a lease expires anyway), and a signal must not wait
/// for a database that stopped answering.
pub const PARTING_TIMEOUT: Duration = Duration::from_secs(5);

/// A statement that did not answer within its deadline.
#[derive(Debug)]
pub struct TimedOut(pub Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the database did not answer within {} s", self.0.as_secs_f64())
    }
}

impl std::error::Error for TimedOut {}

/// The shared connection (with its prepared statements, made again with it). A statement holds
/// the connection it started on (an `Arc`), so statements of the worker's slots and its
/// heartbeat are pipelined on it rather than queued behind one another.
pub struct Link {
    target: DbTarget,
    client: Mutex<Option<Arc<Conn>>>,
    timeout: Duration,
}

/// Whether an error is worth retrying: a deadline that passed, no server-side error (connection
/// closed, I/O), or a server error of the classes that pass: connection exceptions (08),
/// operator intervention (57: shutdown, restart, cannot connect now), insufficient resources
/// (53: too many connections), transaction rollbacks (40: deadlock, serialization).
/// Whether the driver's error `pg` passes: no answer from the server, or a connection,
/// operator, resource or serialization class SQLSTATE.
fn passing_pg(pg: &tokio_postgres::Error) -> bool {
    match pg.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            ["08", "57", "53", "40"].iter().any(|c| code.starts_with(c))
        }
    }
}

pub fn is_transient(e: &anyhow::Error) -> bool {
    for cause in e.chain() {
        // The worker API's client sorts its own failures (`fleet::client`).
        if cause.downcast_ref::<super::client::Passing>().is_some() {
            return true;
        }
        if cause.downcast_ref::<super::client::Refusal>().is_some() {
            return false;
        }
        if cause.downcast_ref::<TimedOut>().is_some() {
            return true;
        }
        if let Some(c) = cause.downcast_ref::<super::connect::ConnectError>() {
            return passing_pg(c.driver());
        }
        if let Some(pg) = cause.downcast_ref::<tokio_postgres::Error>() {
            return passing_pg(pg);
        }
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
    }
    false
}

/// A connected client made ready for the queue ([`Conn::open`]); the error keeps the driver's
/// cause, so [`is_transient`] still sees a server that went away.
async fn open(target: &DbTarget, client: Client) -> Result<Conn> {
    Conn::open(client, target.prepared_statements())
        .await
        .with_context(|| format!("cannot set up the connection to {target}"))
}

impl Link {
    /// A link that connects at its first use, whose statements have deadline `timeout`
    /// ([`STATEMENT_TIMEOUT`] but in tests).
    pub fn with_timeout(target: DbTarget, timeout: Duration) -> Link {
        Link { target, client: Mutex::new(None), timeout }
    }

    pub fn target(&self) -> &DbTarget {
        &self.target
    }

    /// The connection, made again if it was dropped or closed.
    async fn get(&self) -> Result<Arc<Conn>> {
        let mut g = self.client.lock().await;
        if let Some(c) = g.as_ref().filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        *g = None;
        let client = self.target.connect().await?;
        let c = Arc::new(open(&self.target, client).await?);
        *g = Some(c.clone());
        Ok(c)
    }

    /// Drops connection `c` after a failure on it (the next call connects again); a newer
    /// connection made meanwhile is kept.
    async fn drop_conn(&self, c: &Arc<Conn>) {
        let mut g = self.client.lock().await;
        if g.as_ref().is_some_and(|now| Arc::ptr_eq(now, c)) {
            *g = None;
        }
    }

    /// One attempt of `f` on the connection, within the deadline (the connection too); after a
    /// failure the connection is dropped (the next attempt connects again).
    pub async fn once<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(Arc<Conn>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.once_within(self.timeout, f).await
    }

    /// [`Link::once`] for a worker that is stopping: within [`PARTING_TIMEOUT`] when that is
    /// shorter than the statement deadline.
    pub async fn parting<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(Arc<Conn>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.once_within(PARTING_TIMEOUT.min(self.timeout), f).await
    }

    async fn once_within<T, F, Fut>(&self, limit: Duration, f: F) -> Result<T>
    where
        F: FnOnce(Arc<Conn>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let conn = match tokio::time::timeout(limit, self.get()).await {
            Ok(c) => c?,
            Err(_) => return Err(anyhow::Error::new(TimedOut(limit))),
        };
        match tokio::time::timeout(limit, f(conn.clone())).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                if is_transient(&e) {
                    self.drop_conn(&conn).await;
                }
                Err(e)
            }
            Err(_) => {
                // Its statement is still on the connection, whose state is unknown.
                self.drop_conn(&conn).await;
                Err(anyhow::Error::new(TimedOut(limit)))
            }
        }
    }

    /// `f` until it succeeds or fails for good: a passing fault prints one warning naming
    /// `what` (the first time) and is retried after [`backoff`]; `give_up` (a signal, a lost
    /// lease) ends the retries with an error.
    pub async fn call<T, F, Fut>(&self, what: &str, give_up: &Cancel, mut f: F) -> Result<T>
    where
        F: FnMut(Arc<Conn>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut n = 0;
        loop {
            let r = tokio::select! {
                biased;
                _ = give_up.cancelled() => return Err(anyhow::anyhow!("{what}: stopped")),
                r = self.once(&mut f) => r,
            };
            match r {
                Ok(v) => return Ok(v),
                Err(e) if is_transient(&e) && !give_up.is_cancelled() => {
                    if n == 0 {
                        errln!("warning: {what}: {e:#}; retrying");
                    }
                    sleep_or_cancel(backoff(n), give_up).await;
                    n += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// The wait before attempt `n` (from 0): 0.5 s doubling up to [`MAX_BACKOFF`], plus up to half
/// of it again at random.
pub fn backoff(n: u32) -> Duration {
    let base = Duration::from_millis(500u64.saturating_mul(1 << n.min(5))).min(MAX_BACKOFF);
    base.mul_f64(1.0 + 0.5 * rand::random::<f64>())
}

/// Sleeps `d`, or less when `cancel` fires.
pub async fn sleep_or_cancel(d: Duration, cancel: &Cancel) {
    tokio::select! {
        _ = tokio::time::sleep(d) => {}
        _ = cancel.cancelled() => {}
    }
}

/// Connects for a one-shot command (status, cancel, submit, ...), retrying a passing fault
/// (too many connections, a restarting server) with [`backoff`] for up to `patience`.
pub async fn connect_patiently(target: &DbTarget, patience: Duration) -> Result<Client> {
    let start = std::time::Instant::now();
    let mut n = 0;
    loop {
        match target.connect().await {
            Ok(c) => return Ok(c),
            Err(e) if is_transient(&e) && start.elapsed() < patience => {
                if n == 0 {
                    errln!("warning: {e:#}; retrying for up to {} s", patience.as_secs());
                }
                tokio::time::sleep(backoff(n)).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}
