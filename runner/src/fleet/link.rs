//! The rule that tells a passing fault (a server or database that restarts, the network
//! drops, too many connections, a request or statement that timed out) from a lasting one (a
//! typed refusal, a statement the database refuses), read from the error's type and SQLSTATE,
//! never its text; the jittered backoff between attempts; and the patient connection of a
//! one-shot command. The worker's retries over HTTP are [`super::door`]'s.

use std::time::Duration;

use anyhow::Result;
use tokio_postgres::Client;

use super::connect::DbTarget;
use crate::play::cancel::Cancel;

/// Waits between attempts after a passing fault: 0.5 s doubling up to this, each with up to
/// half again of random jitter (so that hundreds of workers cut off by one restart do not come
/// back in lockstep).
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The longest a worker's request (or its connection) may take before the worker gives up on
/// the connection and tries again. A claim, report or heartbeat takes milliseconds; this is
/// for a server that stopped answering without closing the connection.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(20);

/// The longest a stopping worker waits for each of its last requests (giving its leases back,
/// saying it stopped). Both are courtesies (a lease expires anyway), and a signal must not wait
/// for a server that stopped answering.
pub const PARTING_TIMEOUT: Duration = Duration::from_secs(5);

/// A request (or statement) that got no answer within its deadline.
#[derive(Debug)]
pub struct TimedOut(pub Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server did not answer within {} s", self.0.as_secs_f64())
    }
}

impl std::error::Error for TimedOut {}

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
