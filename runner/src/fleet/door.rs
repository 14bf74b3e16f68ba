//! How a worker calls the fleet's server (`runner worker --server URL`, its one way to the
//! queue): each [`WorkerClient`] method is one attempt within a deadline; [`WorkerClient::call`]
//! retries an attempt that failed passingly ([`is_transient`]) with jittered backoff, never
//! sooner than the server's `Retry-After`, and [`WorkerClient::parting`] is the short last
//! attempt of a stopping worker.

use std::future::Future;
use std::time::Duration;

use anyhow::Result;

use super::client::{WorkerClient, retry_after};
use super::link::{PARTING_TIMEOUT, TimedOut, backoff, is_transient, sleep_or_cancel};
use crate::play::cancel::Cancel;

impl std::fmt::Display for WorkerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server {}", self.base())
    }
}

impl WorkerClient {
    /// `f` until it succeeds or fails for good: a passing fault prints one warning naming
    /// `what` (the first time) and is retried after [`backoff`] (or the server's
    /// `Retry-After`, if longer); `give_up` (a signal, a lost lease) ends the retries.
    pub async fn call<'a, T, F, Fut>(&'a self, what: &str, give_up: &Cancel, mut f: F) -> Result<T>
    where
        F: FnMut(&'a WorkerClient) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut n = 0;
        loop {
            let r = tokio::select! {
                biased;
                _ = give_up.cancelled() => return Err(anyhow::anyhow!("{what}: stopped")),
                r = f(self) => r,
            };
            match r {
                Ok(v) => return Ok(v),
                Err(e) if is_transient(&e) && !give_up.is_cancelled() => {
                    if n == 0 {
                        errln!("warning: {what}: {e:#}; retrying");
                    }
                    sleep_or_cancel(self.wait(n, &e), give_up).await;
                    n += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The wait before attempt `n + 1` after error `e`.
    pub fn wait(&self, n: u32, e: &anyhow::Error) -> Duration {
        let b = backoff(n);
        retry_after(e).map_or(b, |r| r.max(b))
    }

    /// `f` once, within [`PARTING_TIMEOUT`] (a stopping worker's courtesies).
    pub async fn parting<'a, T, F, Fut>(&'a self, f: F) -> Result<T>
    where
        F: FnOnce(&'a WorkerClient) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        match tokio::time::timeout(PARTING_TIMEOUT, f(self)).await {
            Ok(r) => r,
            Err(_) => Err(anyhow::Error::new(TimedOut(PARTING_TIMEOUT))),
        }
    }
}
