//! Between the wire types and the queue's rows (`fleet::queue`), both ways.

use std::time::Duration;

use super::types::*;
use crate::fleet::queue::builds::EngineLoad;
use crate::fleet::queue::{self, ArtifactRow, PairingCounts, RunRow, Settled};

impl From<queue::Claim> for Claim {
    fn from(c: queue::Claim) -> Claim {
        Claim {
            run_id: c.run_id,
            seq: c.seq,
            pairing: c.pairing,
            pair: c.pair,
            opening: c.opening,
            token: c.token,
            attempts: c.attempts,
            spsa: c.spsa,
        }
    }
}

impl From<Claim> for queue::Claim {
    fn from(c: Claim) -> queue::Claim {
        queue::Claim {
            run_id: c.run_id,
            seq: c.seq,
            pairing: c.pairing,
            pair: c.pair,
            opening: c.opening,
            token: c.token,
            attempts: c.attempts,
            spsa: c.spsa,
        }
    }
}

impl From<ClaimRequest> for queue::ClaimAsk {
    /// The queue's claim of a validated request (a lease of 5 s to 1 h: never a panic here).
    fn from(r: ClaimRequest) -> queue::ClaimAsk {
        queue::ClaimAsk {
            only: r.only,
            skip: r.skip,
            current: r.current,
            n: r.n,
            lease: Duration::from_secs_f64(r.lease_secs),
            tune_in_flight: r.tune_in_flight,
        }
    }
}

impl From<&queue::ClaimAsk> for ClaimRequest {
    fn from(a: &queue::ClaimAsk) -> ClaimRequest {
        ClaimRequest {
            only: a.only,
            skip: a.skip.clone(),
            current: a.current,
            n: a.n,
            lease_secs: a.lease.as_secs_f64(),
            tune_in_flight: a.tune_in_flight,
        }
    }
}

impl From<&queue::Claim> for PairRef {
    fn from(c: &queue::Claim) -> PairRef {
        PairRef { run: c.run_id, pairing: c.pairing, pair: c.pair, token: c.token }
    }
}

impl From<PairRef> for queue::Claim {
    /// A claim with what a pair's reference names (the rest unused by the calls it serves).
    fn from(p: PairRef) -> queue::Claim {
        queue::Claim {
            run_id: p.run,
            seq: 0,
            pairing: p.pairing,
            pair: p.pair,
            opening: 0,
            token: p.token,
            attempts: 0,
            spsa: None,
        }
    }
}

impl From<PairingCounts> for Counts {
    fn from(c: PairingCounts) -> Counts {
        Counts {
            pairing: c.pairing,
            active: c.active,
            dropped: c.dropped,
            penta: c.penta,
            wdl: c.wdl,
        }
    }
}

impl From<Counts> for PairingCounts {
    fn from(c: Counts) -> PairingCounts {
        PairingCounts {
            pairing: c.pairing,
            active: c.active,
            dropped: c.dropped,
            penta: c.penta,
            wdl: c.wdl,
        }
    }
}

impl From<queue::Reported> for ReportAnswer {
    fn from(r: queue::Reported) -> ReportAnswer {
        match r {
            queue::Reported::Stored { counts, open, settled } => ReportAnswer::Stored {
                counts: counts.into_iter().map(Into::into).collect(),
                open,
                settled: settled.map(Into::into),
            },
            queue::Reported::Refused(why) => ReportAnswer::Refused { why },
        }
    }
}

impl From<ReportAnswer> for queue::Reported {
    fn from(r: ReportAnswer) -> queue::Reported {
        match r {
            ReportAnswer::Stored { counts, open, settled } => queue::Reported::Stored {
                counts: counts.into_iter().map(Into::into).collect(),
                open,
                settled: settled.map(Into::into),
            },
            ReportAnswer::Refused { why } => queue::Reported::Refused(why),
        }
    }
}

impl From<Settled> for SettleAnswer {
    fn from(s: Settled) -> SettleAnswer {
        SettleAnswer {
            state: s.state,
            stops: s
                .stops
                .into_iter()
                .map(|s| StopBody { pairing: s.pairing, verdict: s.verdict, why: s.why })
                .collect(),
        }
    }
}

impl From<SettleAnswer> for Settled {
    fn from(s: SettleAnswer) -> Settled {
        Settled {
            state: s.state,
            stops: s
                .stops
                .into_iter()
                .map(|s| queue::Stop {
                    pairing: s.pairing,
                    verdict: s.verdict,
                    why: s.why,
                    games: 0,
                    best: None,
                    z: None,
                })
                .collect(),
        }
    }
}

impl From<RunRow> for RunBody {
    fn from(r: RunRow) -> RunBody {
        RunBody {
            id: r.id,
            kind: r.kind,
            state: r.state,
            stop_reason: r.stop_reason,
            submission: r.submission,
            plan_hash: r.plan_hash,
            created: r.created,
            finished: r.finished,
            owner: r.owner,
            approved_by: r.approved_by,
        }
    }
}

impl From<RunBody> for RunRow {
    fn from(r: RunBody) -> RunRow {
        RunRow {
            id: r.id,
            kind: r.kind,
            state: r.state,
            stop_reason: r.stop_reason,
            submission: r.submission,
            plan_hash: r.plan_hash,
            created: r.created,
            finished: r.finished,
            owner: r.owner,
            approved_by: r.approved_by,
        }
    }
}

impl From<ArtifactRow> for Artifact {
    fn from(a: ArtifactRow) -> Artifact {
        Artifact { sha: a.sha, size: a.size, chunks: a.chunks, kind: a.kind }
    }
}

impl From<Artifact> for ArtifactRow {
    fn from(a: Artifact) -> ArtifactRow {
        ArtifactRow { sha: a.sha, size: a.size, chunks: a.chunks, kind: a.kind }
    }
}

impl EngineLoadedRequest {
    /// The request saying that `e` was loaded for run `run`.
    pub fn of(run: i64, e: &EngineLoad) -> EngineLoadedRequest {
        EngineLoadedRequest {
            run,
            engine: e.engine.clone(),
            commit: e.commit.clone(),
            build: e.build.and_then(BuildKind::of_word),
            build_secs: e.build_secs,
            nodes: e.nodes,
            nps: e.nps,
            error: e.error.clone(),
        }
    }

    /// What the queue stores.
    pub fn load(&self) -> EngineLoad {
        EngineLoad {
            engine: self.engine.clone(),
            commit: self.commit.clone(),
            build: self.build.map(BuildKind::word),
            build_secs: self.build_secs,
            nodes: self.nodes,
            nps: self.nps,
            error: self.error.clone(),
        }
    }
}
