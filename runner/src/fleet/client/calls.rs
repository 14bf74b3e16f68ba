//! The worker API's calls, one method each, taking and giving the queue's own types (so the
//! worker's loop does not tell the server from the database).

use std::time::Duration;

use anyhow::{Result, bail};
use reqwest::Method;
use serde_json::Value;

use super::{Auth, Passing, WorkerClient};
use crate::fleet::api::{self, *};
use crate::fleet::queue::builds::EngineLoad;
use crate::fleet::queue::{
    self, ArtifactRow, ClaimAsk, Machine, PairReport, Reported, RunRow, Settled, Waiting, WorkerId,
};

impl WorkerClient {
    /// What the server speaks; `Err` for good when the answer is not a runner server's or the
    /// server refuses this worker's protocol.
    pub async fn version(&self) -> Result<Version> {
        let v: Version = self.json::<(), _>(Method::GET, "/version", Auth::None, None).await?;
        if v.min_protocol > api::PROTOCOL {
            bail!(
                "the server at {} accepts worker protocol {} and later, this worker speaks {}: \
                 upgrade the runner on this machine",
                self.base,
                v.min_protocol,
                api::PROTOCOL
            );
        }
        Ok(v)
    }

    pub async fn register(
        &self,
        m: &Machine,
        pid: i32,
        concurrency: i32,
        lease: Duration,
    ) -> Result<WorkerId> {
        let req = RegisterRequest {
            host: m.host.clone(),
            pid,
            concurrency: concurrency.into(),
            lease_secs: lease.as_secs_f64(),
            version: env!("CARGO_PKG_VERSION").into(),
            cpu: m.cpu.clone(),
            cores: m.cores,
        };
        let r: Result<Registered> =
            self.json(Method::POST, "/register", Auth::Key(self.key()?), Some(&req)).await;
        let r = r.map_err(|e| {
            // Not a runner server at all (a wrong URL): say so now rather than retry for ever.
            let foreign = e
                .chain()
                .find_map(|c| c.downcast_ref::<Passing>().and_then(|p| p.foreign_status))
                .filter(|s| !(*s == 408 || *s == 429 || *s >= 500));
            match foreign {
                Some(_) => e.context(format!("{} is not a runner server", self.base)),
                None => e,
            }
        })?;
        Ok(WorkerId::new(r.worker, r.secret, r.key_name))
    }

    pub async fn stopped(&self, w: &WorkerId) -> Result<()> {
        let _: Done = self.json(Method::POST, "/stopped", Auth::Worker(w), Some(&Done {})).await?;
        Ok(())
    }

    pub async fn run(&self, w: &WorkerId, run: i64) -> Result<Option<RunRow>> {
        let path = format!("/run/{run}");
        match self.json::<(), RunBody>(Method::GET, &path, Auth::Worker(w), None).await {
            Ok(r) => Ok(Some(r.into())),
            Err(e) if is_code(&e, Code::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn claim(&self, w: &WorkerId, ask: &ClaimAsk) -> Result<Vec<queue::Claim>> {
        let req = ClaimRequest::from(ask);
        let c: Claimed = self.json(Method::POST, "/claim", Auth::Worker(w), Some(&req)).await?;
        Ok(c.claims.into_iter().map(Into::into).collect())
    }

    pub async fn heartbeat(
        &self,
        w: &WorkerId,
        tokens: &[i64],
        lease: Duration,
    ) -> Result<Vec<i64>> {
        let req = HeartbeatRequest { tokens: tokens.to_vec(), lease_secs: lease.as_secs_f64() };
        let a: Alive = self.json(Method::POST, "/heartbeat", Auth::Worker(w), Some(&req)).await?;
        Ok(a.tokens)
    }

    pub async fn release(&self, w: &WorkerId, tokens: &[i64]) -> Result<i64> {
        let req = ReleaseRequest { tokens: tokens.to_vec() };
        let r: Released = self.json(Method::POST, "/release", Auth::Worker(w), Some(&req)).await?;
        Ok(r.released)
    }

    pub async fn refuse(
        &self,
        w: &WorkerId,
        run: i64,
        reason: &str,
        tokens: &[i64],
    ) -> Result<String> {
        let req = RefuseRequest { run, reason: one_line(reason), tokens: tokens.to_vec() };
        let s: RunState = self.json(Method::POST, "/refuse", Auth::Worker(w), Some(&req)).await?;
        Ok(s.state)
    }

    pub async fn incident(&self, w: &WorkerId, c: &queue::Claim, what: &str) -> Result<()> {
        let req = IncidentRequest { pair: c.into(), what: one_line(what) };
        let _: Done = self.json(Method::POST, "/incident", Auth::Worker(w), Some(&req)).await?;
        Ok(())
    }

    pub async fn report(&self, w: &WorkerId, r: &PairReport<'_>, all: bool) -> Result<Reported> {
        let req = ReportRequest {
            pair: PairRef { run: r.run_id, pairing: r.pairing, pair: r.pair, token: r.token },
            records: [r.records[0].clone(), r.records[1].clone()],
            all,
        };
        let a: ReportAnswer =
            self.json(Method::POST, "/report", Auth::Worker(w), Some(&req)).await?;
        Ok(a.into())
    }

    pub async fn settle(&self, w: &WorkerId, run: i64) -> Result<Settled> {
        let req = SettleRequest { run };
        let a: SettleAnswer =
            self.json(Method::POST, "/settle", Auth::Worker(w), Some(&req)).await?;
        Ok(a.into())
    }

    pub async fn iteration(&self, w: &WorkerId, c: &queue::Claim) -> Result<Option<Value>> {
        let req = IterationRequest { pair: c.into() };
        let a: IterationAnswer =
            self.json(Method::POST, "/iteration", Auth::Worker(w), Some(&req)).await?;
        Ok(a.iteration)
    }

    pub async fn outstanding(
        &self,
        w: &WorkerId,
        only: Option<i64>,
        skip: &[i64],
    ) -> Result<Waiting> {
        let req = OutstandingRequest { only, skip: skip.to_vec() };
        let a: Outstanding =
            self.json(Method::POST, "/outstanding", Auth::Worker(w), Some(&req)).await?;
        let secs = |s: Option<f64>, max: f64| {
            s.filter(|s| s.is_finite()).map(|s| Duration::from_secs_f64(s.clamp(0.0, max)))
        };
        Ok(Waiting {
            runs: a.runs,
            soonest: secs(a.soonest_secs, 3600.0),
            // The server's word, within the bounds any server may give.
            poll: secs(a.poll_secs, 300.0).map(|p| p.max(Duration::from_secs(1))),
        })
    }

    pub async fn engine_loaded(&self, w: &WorkerId, run: i64, e: &EngineLoad) -> Result<()> {
        let mut req = EngineLoadedRequest::of(run, e);
        req.error = req.error.map(|s| one_line(&s));
        let _: Done =
            self.json(Method::POST, "/engine-loaded", Auth::Worker(w), Some(&req)).await?;
        Ok(())
    }

    pub async fn artifacts(&self, w: &WorkerId, run: i64) -> Result<Vec<ArtifactRow>> {
        let path = format!("/run/{run}/artifacts");
        let a: Artifacts = self.json::<(), _>(Method::GET, &path, Auth::Worker(w), None).await?;
        Ok(a.artifacts.into_iter().map(Into::into).collect())
    }

    pub async fn chunk(&self, w: &WorkerId, sha: &str, n: i32) -> Result<Vec<u8>> {
        self.bytes(&format!("/artifact/{sha}/chunk/{n}"), w).await
    }
}

/// Whether `e` is this server's refusal with `code`.
pub fn is_code(e: &anyhow::Error, code: Code) -> bool {
    e.chain().any(|c| c.downcast_ref::<super::Refusal>().is_some_and(|r| r.0.code == code))
}

/// A reason as the API takes it: one line (control characters become spaces), at most
/// [`api::bounds::REASON_MAX`] characters.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .take(api::bounds::REASON_MAX)
        .collect()
}
