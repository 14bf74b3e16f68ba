//! The worker's one way to the queue, whichever it is: the database itself through [`Link`]
//! (`runner worker --db URL`), or `runner serve`'s worker API through [`WorkerClient`]
//! (`runner worker --server URL`). Each method is one attempt within a deadline; [`Door::call`]
//! retries an attempt that failed passingly ([`is_transient`]) with jittered backoff, never
//! sooner than a server's `Retry-After`, and [`Door::parting`] is the short last attempt of a
//! stopping worker.

use std::future::Future;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use super::client::{WorkerClient, retry_after};
use super::link::{Link, PARTING_TIMEOUT, TimedOut, backoff, is_transient, sleep_or_cancel};
use super::queue::builds::{EngineLoad, engine_loaded};
use super::queue::{
    self, ArtifactRow, Claim, Machine, PairReport, Reported, RunRow, Settled, Waiting, WorkerId,
};
use crate::play::cancel::Cancel;

/// The database or the server. (One per worker process: the variants' sizes do not matter.)
#[allow(clippy::large_enum_variant)]
pub enum Door {
    Db(Link),
    Http(WorkerClient),
}

impl std::fmt::Display for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Door::Db(l) => write!(f, "database {}", l.target()),
            Door::Http(c) => write!(f, "server {}", c.base()),
        }
    }
}

impl Door {
    /// `f` until it succeeds or fails for good: a passing fault prints one warning naming
    /// `what` (the first time) and is retried after [`backoff`] (or the server's
    /// `Retry-After`, if longer); `give_up` (a signal, a lost lease) ends the retries.
    pub async fn call<'a, T, F, Fut>(&'a self, what: &str, give_up: &Cancel, mut f: F) -> Result<T>
    where
        F: FnMut(&'a Door) -> Fut,
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
        F: FnOnce(&'a Door) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        match tokio::time::timeout(PARTING_TIMEOUT, f(self)).await {
            Ok(r) => r,
            Err(_) => Err(anyhow::Error::new(TimedOut(PARTING_TIMEOUT))),
        }
    }

    pub async fn register(
        &self,
        key: Option<&str>,
        m: &Machine,
        pid: i32,
        concurrency: i32,
        lease: Duration,
    ) -> Result<WorkerId> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move {
                    queue::register_machine(&c, key, m, pid, concurrency, lease).await
                })
                .await
            }
            Door::Http(h) => h.register(m, pid, concurrency, lease).await,
        }
    }

    pub async fn stopped(&self, w: &WorkerId) -> Result<()> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::worker_stopped(&c, w).await }).await,
            Door::Http(h) => h.stopped(w).await,
        }
    }

    pub async fn run(&self, w: &WorkerId, run: i64) -> Result<Option<RunRow>> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::run(&c, run).await }).await,
            Door::Http(h) => h.run(w, run).await,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn claim(
        &self,
        w: &WorkerId,
        only: Option<i64>,
        skip: &[i64],
        current: Option<i64>,
        n: i64,
        lease: Duration,
        window: i64,
    ) -> Result<Vec<Claim>> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move {
                    queue::claim_from(&*c, w, only, skip, current, n, lease, window).await
                })
                .await
            }
            Door::Http(h) => h.claim(w, only, skip, current, n, lease, window).await,
        }
    }

    pub async fn heartbeat(
        &self,
        w: &WorkerId,
        tokens: &[i64],
        lease: Duration,
    ) -> Result<Vec<i64>> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move { queue::heartbeat(&*c, w, tokens, lease).await }).await
            }
            Door::Http(h) => h.heartbeat(w, tokens, lease).await,
        }
    }

    pub async fn release(&self, w: &WorkerId, tokens: &[i64]) -> Result<i64> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::release(&c, w, tokens).await }).await,
            Door::Http(h) => h.release(w, tokens).await,
        }
    }

    pub async fn refuse(
        &self,
        w: &WorkerId,
        run: i64,
        why: &str,
        tokens: &[i64],
    ) -> Result<String> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move { queue::refuse(&c, w, run, why, tokens).await }).await
            }
            Door::Http(h) => h.refuse(w, run, why, tokens).await,
        }
    }

    pub async fn incident(&self, w: &WorkerId, claim: &Claim, what: &str) -> Result<()> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move { queue::incident(&c, w, claim, what).await }).await
            }
            Door::Http(h) => h.incident(w, claim, what).await,
        }
    }

    pub async fn report(&self, w: &WorkerId, r: &PairReport<'_>, all: bool) -> Result<Reported> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::report(&*c, w, r, all).await }).await,
            Door::Http(h) => h.report(w, r, all).await,
        }
    }

    pub async fn settle(&self, w: &WorkerId, run: i64) -> Result<Settled> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::settle(&*c, w, run).await }).await,
            Door::Http(h) => h.settle(w, run).await,
        }
    }

    pub async fn iteration(&self, w: &WorkerId, claim: &Claim) -> Result<Option<Value>> {
        match self {
            Door::Db(l) => l.once(|c| async move { queue::iteration(&c, w, claim).await }).await,
            Door::Http(h) => h.iteration(w, claim).await,
        }
    }

    pub async fn outstanding(
        &self,
        w: &WorkerId,
        only: Option<i64>,
        skip: &[i64],
    ) -> Result<Waiting> {
        match self {
            Door::Db(l) => {
                let id = w.id;
                l.once(|c| async move { queue::outstanding(&c, id, only, skip).await }).await
            }
            Door::Http(h) => h.outstanding(w, only, skip).await,
        }
    }

    pub async fn engine_loaded(&self, w: &WorkerId, run: i64, e: &EngineLoad) -> Result<()> {
        match self {
            Door::Db(l) => l.once(|c| async move { engine_loaded(&**c, w, run, e).await }).await,
            Door::Http(h) => h.engine_loaded(w, run, e).await,
        }
    }

    pub async fn artifacts(&self, w: &WorkerId, run: i64) -> Result<Vec<ArtifactRow>> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move { queue::worker_artifacts(&**c, w, run).await }).await
            }
            Door::Http(h) => h.artifacts(w, run).await,
        }
    }

    pub async fn chunk(&self, w: &WorkerId, sha: &str, n: i32) -> Result<Vec<u8>> {
        match self {
            Door::Db(l) => {
                l.once(|c| async move { queue::artifact_chunk(&**c, w, sha, n).await }).await
            }
            Door::Http(h) => h.chunk(w, sha, n).await,
        }
    }
}
