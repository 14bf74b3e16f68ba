//! Requests and answers of the worker API, one type each, with their bounds. Each is also a
//! schema of the API's OpenAPI document (`serve::openapi`): its bounds are written there too
//! (`minimum`, `maximum`, `maxLength`, `maxItems`), checked against [`super::bounds`] by that
//! module's tests.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::bounds::{self as b, Checked, Invalid};

/// Why the server refused a request: typed, so that a worker tells a refusal of this server
/// (an incident when it concerns a pair) from a proxy's error page. Each is answered with its
/// HTTP status: invalid 422, unauthorized 401, forbidden 403, not_found 404, conflict 409,
/// upgrade_worker 426, too_large 413, unavailable 503 (with `Retry-After`), internal 500.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The request breaks its bounds or its shape.
    Invalid,
    /// No valid key or worker secret (revoked, stopped, or wrong).
    Unauthorized,
    /// The key may not do this.
    Forbidden,
    /// No such run, pair or artifact.
    NotFound,
    /// The request conflicts with the state stored (a run not active, a pair not this lease's).
    Conflict,
    /// The worker's protocol is older than the server accepts for new work: upgrade it.
    UpgradeWorker,
    /// The body is over the limit.
    TooLarge,
    /// The server or its database is busy or away: try again (Retry-After says when).
    Unavailable,
    /// The server failed.
    Internal,
}

impl Code {
    /// The HTTP status this refusal is answered with.
    pub fn status(self) -> u16 {
        match self {
            Code::Invalid => 422,
            Code::Unauthorized => 401,
            Code::Forbidden => 403,
            Code::NotFound => 404,
            Code::Conflict => 409,
            Code::UpgradeWorker => 426,
            Code::TooLarge => 413,
            Code::Unavailable => 503,
            Code::Internal => 500,
        }
    }

    /// Whether trying again later may succeed.
    pub fn passing(self) -> bool {
        matches!(self, Code::Unavailable | Code::Internal)
    }
}

/// The body of every refusal of the worker API (answered with the `x-runner-api` header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub code: Code,
    /// One line for a person.
    pub message: String,
}

impl From<Invalid> for ErrorBody {
    fn from(e: Invalid) -> ErrorBody {
        ErrorBody { code: Code::Invalid, message: e.0 }
    }
}

/// `POST /register` (bearer: the worker key): a worker process starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// The machine's name: not blank, no control characters.
    #[schema(min_length = 1, max_length = 200)]
    pub host: String,
    #[schema(minimum = 1, maximum = 2147483647)]
    pub pid: i32,
    /// Pairs played at once.
    #[schema(minimum = 1, maximum = 1024)]
    pub concurrency: i64,
    /// The lease asked for, in seconds.
    #[schema(minimum = 5, maximum = 3600)]
    pub lease_secs: f64,
    /// The runner's version (`CARGO_PKG_VERSION`), shown by `runner workers`.
    #[schema(min_length = 1, max_length = 200)]
    pub version: String,
    /// The CPU's model name.
    #[schema(max_length = 200)]
    pub cpu: Option<String>,
    #[schema(minimum = 1, maximum = 1048576)]
    pub cores: Option<i32>,
}

impl RegisterRequest {
    pub fn validate(&self) -> Checked {
        b::name("host", &self.host)?;
        b::within("pid", self.pid.into(), 1, i32::MAX.into())?;
        b::within("concurrency", self.concurrency, 1, b::CONCURRENCY_MAX)?;
        b::lease(self.lease_secs)?;
        b::name("version", &self.version)?;
        if let Some(c) = &self.cpu {
            b::text("cpu", c, b::NAME_MAX)?;
        }
        if let Some(n) = self.cores {
            b::within("cores", n.into(), 1, 1 << 20)?;
        }
        Ok(())
    }
}

/// The answer to a registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Registered {
    pub worker: i64,
    /// This process's secret: the bearer token of every later request.
    pub secret: String,
    pub key_name: String,
}

/// `POST /claim`: leases up to `n` pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    /// Claim from this run only.
    #[schema(minimum = 1)]
    pub only: Option<i64>,
    /// Runs not to claim from (positive ids).
    #[serde(default)]
    #[schema(max_items = 4096)]
    pub skip: Vec<i64>,
    /// The run this worker plays now: it is kept on it while that run is within its share.
    #[schema(minimum = 1)]
    pub current: Option<i64>,
    /// Pairs wanted.
    #[schema(minimum = 1, maximum = 1024)]
    pub n: i64,
    #[schema(minimum = 5, maximum = 3600)]
    pub lease_secs: f64,
    /// A tuning run's iterations handed out beyond those applied, at the most.
    #[schema(minimum = 1, maximum = 1000)]
    pub tune_in_flight: i64,
}

impl ClaimRequest {
    pub fn validate(&self) -> Checked {
        if let Some(r) = self.only {
            b::id("only", r)?;
        }
        if let Some(r) = self.current {
            b::id("current", r)?;
        }
        b::ids("skip", &self.skip)?;
        b::within("n", self.n, 1, b::CONCURRENCY_MAX)?;
        b::lease(self.lease_secs)?;
        b::within("tune_in_flight", self.tune_in_flight, 1, b::TUNE_IN_FLIGHT_MAX)
    }
}

/// A leased pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Claim {
    pub run_id: i64,
    pub seq: i32,
    pub pairing: i32,
    pub pair: i32,
    pub opening: i32,
    pub token: i64,
    pub attempts: i32,
    pub spsa: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Claimed {
    pub claims: Vec<Claim>,
}

/// `POST /heartbeat`: renews the leases named (none: the worker says it is alive).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatRequest {
    /// The leases to renew (positive ids).
    #[schema(max_items = 4096)]
    pub tokens: Vec<i64>,
    #[schema(minimum = 5, maximum = 3600)]
    pub lease_secs: f64,
}

impl HeartbeatRequest {
    pub fn validate(&self) -> Checked {
        b::ids("tokens", &self.tokens)?;
        b::lease(self.lease_secs)
    }
}

/// The leases still this worker's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Alive {
    pub tokens: Vec<i64>,
}

/// `POST /release`: gives leases back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseRequest {
    /// The leases given back (positive ids).
    #[schema(max_items = 4096)]
    pub tokens: Vec<i64>,
}

impl ReleaseRequest {
    pub fn validate(&self) -> Checked {
        b::ids("tokens", &self.tokens)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Released {
    pub released: i64,
}

/// `POST /refuse`: this worker cannot play run `run`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefuseRequest {
    #[schema(minimum = 1)]
    pub run: i64,
    /// One line (tabs allowed, no other control characters).
    #[schema(max_length = 2000)]
    pub reason: String,
    /// The run's leases this worker gives back (positive ids).
    #[schema(max_items = 4096)]
    pub tokens: Vec<i64>,
}

impl RefuseRequest {
    pub fn validate(&self) -> Checked {
        b::id("run", self.run)?;
        b::text("reason", &self.reason, b::REASON_MAX)?;
        b::ids("tokens", &self.tokens)
    }
}

/// The run's state after a refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(as = RunStateAfter)]
pub struct RunState {
    pub state: String,
}

/// A pair this worker holds, by its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairRef {
    #[schema(minimum = 1)]
    pub run: i64,
    #[schema(minimum = 0)]
    pub pairing: i32,
    #[schema(minimum = 0)]
    pub pair: i32,
    /// The lease.
    #[schema(minimum = 1)]
    pub token: i64,
}

impl PairRef {
    pub fn validate(&self) -> Checked {
        b::id("run", self.run)?;
        b::index("pairing", self.pairing)?;
        b::index("pair", self.pair)?;
        b::id("token", self.token)
    }
}

/// `POST /incident`: a pair this worker holds could not be stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IncidentRequest {
    pub pair: PairRef,
    /// One line (tabs allowed, no other control characters).
    #[schema(max_length = 2000)]
    pub what: String,
}

impl IncidentRequest {
    pub fn validate(&self) -> Checked {
        self.pair.validate()?;
        b::text("what", &self.what, b::REASON_MAX)
    }
}

/// `POST /report`: a finished pair, its two game records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRequest {
    pub pair: PairRef,
    /// The pair's two game records (objects, as `games.jsonl` holds them).
    #[schema(min_items = 2, max_items = 2)]
    pub records: [Value; 2],
    /// Answer every pairing's counts (a racing sweep's judge compares them).
    #[serde(default)]
    pub all: bool,
}

impl ReportRequest {
    pub fn validate(&self) -> Checked {
        self.pair.validate()?;
        if self.records.iter().any(|r| !r.is_object()) {
            return Err(Invalid("records: each must be a game record (an object)".into()));
        }
        Ok(())
    }
}

/// Counts of one pairing (`queue::PairingCounts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Counts {
    pub pairing: i32,
    pub active: bool,
    pub dropped: bool,
    /// Pairs from the worst (LL) to the best (WW).
    #[schema(min_items = 5, max_items = 5)]
    pub penta: [i64; 5],
    /// Wins, draws, losses.
    #[schema(min_items = 3, max_items = 3)]
    pub wdl: [i64; 3],
}

/// How a report ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ReportAnswer {
    /// Stored (also the answer to a replay of a report stored already under the same lease),
    /// with the decision the server took after it, if it took one (servers before it left that
    /// to the worker: `POST /settle`).
    Stored {
        counts: Vec<Counts>,
        open: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settled: Option<SettleAnswer>,
    },
    /// Not stored: why.
    Refused { why: String },
}

/// `POST /settle`: asks the server to decide run `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettleRequest {
    #[schema(minimum = 1)]
    pub run: i64,
}

impl SettleRequest {
    pub fn validate(&self) -> Checked {
        b::id("run", self.run)
    }
}

/// A pairing stopped by a decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StopBody {
    pub pairing: i32,
    pub verdict: String,
    pub why: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SettleAnswer {
    pub state: String,
    pub stops: Vec<StopBody>,
}

/// `POST /iteration`: a tuning pair's iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IterationRequest {
    pub pair: PairRef,
}

impl IterationRequest {
    pub fn validate(&self) -> Checked {
        self.pair.validate()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IterationAnswer {
    /// None: the lease is lost.
    pub iteration: Option<Value>,
}

/// How an engine was built on the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BuildKind {
    Built,
    Cached,
    Failed,
}

impl BuildKind {
    pub fn word(self) -> &'static str {
        match self {
            BuildKind::Built => "built",
            BuildKind::Cached => "cached",
            BuildKind::Failed => "failed",
        }
    }

    pub fn of_word(w: &str) -> Option<BuildKind> {
        [BuildKind::Built, BuildKind::Cached, BuildKind::Failed].into_iter().find(|k| k.word() == w)
    }
}

/// `POST /engine-loaded`: an engine this worker loaded for a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EngineLoadedRequest {
    #[schema(minimum = 1)]
    pub run: i64,
    /// The engine's name in the run.
    #[schema(min_length = 1, max_length = 200)]
    pub engine: String,
    #[schema(min_length = 1, max_length = 200)]
    pub commit: Option<String>,
    pub build: Option<BuildKind>,
    /// Seconds the build took.
    #[schema(minimum = 0, maximum = 604800)]
    pub build_secs: Option<f64>,
    #[schema(minimum = 0)]
    pub nodes: Option<i64>,
    #[schema(minimum = 0)]
    pub nps: Option<i64>,
    /// Why it failed to load or build.
    #[schema(max_length = 2000)]
    pub error: Option<String>,
}

impl EngineLoadedRequest {
    pub fn validate(&self) -> Checked {
        b::id("run", self.run)?;
        b::name("engine", &self.engine)?;
        if let Some(c) = &self.commit {
            b::name("commit", c)?;
        }
        if let Some(s) = self.build_secs {
            b::finite("build_secs", s, 0.0, b::BUILD_SECS_MAX)?;
        }
        for (f, v) in [("nodes", self.nodes), ("nps", self.nps)] {
            if let Some(v) = v {
                b::within(f, v, 0, i64::MAX)?;
            }
        }
        if let Some(e) = &self.error {
            b::text("error", e, b::REASON_MAX)?;
        }
        Ok(())
    }
}

/// `POST /outstanding`: the runs with open pairs this worker may serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OutstandingRequest {
    #[schema(minimum = 1)]
    pub only: Option<i64>,
    /// Positive run ids.
    #[serde(default)]
    #[schema(max_items = 4096)]
    pub skip: Vec<i64>,
}

impl OutstandingRequest {
    pub fn validate(&self) -> Checked {
        if let Some(r) = self.only {
            b::id("only", r)?;
        }
        b::ids("skip", &self.skip)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Outstanding {
    pub runs: Vec<i64>,
    /// Seconds until the soonest lease among them expires.
    pub soonest_secs: Option<f64>,
    /// How long an idle worker waits before it asks again, in seconds (the server's
    /// `--worker-poll`; a server before it said nothing, and workers waited 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 300)]
    pub poll_secs: Option<f64>,
}

/// `GET /run/{id}`: a run as stored (`queue::RunRow`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RunBody {
    pub id: i64,
    pub kind: String,
    pub state: String,
    pub stop_reason: Option<String>,
    pub submission: Value,
    pub plan_hash: String,
    pub created: String,
    pub finished: Option<String>,
    pub owner: String,
    pub approved_by: Option<String>,
}

/// `GET /run/{id}/artifacts`: an artifact of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Artifact {
    pub sha: String,
    pub size: i64,
    pub chunks: i32,
    pub kind: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Artifacts {
    pub artifacts: Vec<Artifact>,
}

/// `GET /version`: what the server speaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Version {
    pub protocol: u32,
    pub min_protocol: u32,
    pub server: String,
}

/// An empty answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Done {}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> ClaimRequest {
        ClaimRequest {
            only: None,
            skip: vec![],
            current: None,
            n: 2,
            lease_secs: 30.0,
            tune_in_flight: 16,
        }
    }

    #[test]
    fn a_claim_is_bounded() {
        assert!(claim().validate().is_ok());
        for lease in [f64::NAN, f64::INFINITY, 0.0, 4.9, 3600.1, -1.0, 1e300] {
            assert!(ClaimRequest { lease_secs: lease, ..claim() }.validate().is_err(), "{lease}");
        }
        for n in [0, -1, 1025] {
            assert!(ClaimRequest { n, ..claim() }.validate().is_err());
        }
        assert!(ClaimRequest { only: Some(0), ..claim() }.validate().is_err());
        assert!(ClaimRequest { skip: vec![1; 5000], ..claim() }.validate().is_err());
    }

    #[test]
    fn a_claim_reaches_the_queue_and_comes_back_as_it_was_sent() {
        let sent = ClaimRequest {
            only: Some(3),
            skip: vec![1, 2],
            current: Some(4),
            n: 5,
            lease_secs: 30.5,
            tune_in_flight: 7,
        };
        let ask = crate::fleet::queue::ClaimAsk::from(sent.clone());
        assert_eq!((ask.only, ask.current, ask.n, ask.tune_in_flight), (Some(3), Some(4), 5, 7));
        assert_eq!(ask.lease, std::time::Duration::from_millis(30_500));
        assert_eq!(ClaimRequest::from(&ask), sent);
    }

    #[test]
    fn a_missing_lease_or_an_unknown_field_does_not_parse() {
        let no_lease = r#"{"only":null,"current":null,"n":1,"tune_in_flight":1}"#;
        assert!(serde_json::from_str::<ClaimRequest>(no_lease).is_err());
        let extra = r#"{"n":1,"lease_secs":30,"tune_in_flight":1,"secret":"x"}"#;
        assert!(serde_json::from_str::<ClaimRequest>(extra).is_err());
        // JSON has no NaN: a NaN lease cannot even be written.
        assert!(
            serde_json::from_str::<HeartbeatRequest>(r#"{"tokens":[],"lease_secs":NaN}"#).is_err()
        );
    }

    #[test]
    fn reasons_are_capped_and_one_line() {
        let p = PairRef { run: 1, pairing: 0, pair: 0, token: 1 };
        let ok = IncidentRequest { pair: p, what: "a reason".into() };
        assert!(ok.validate().is_ok());
        assert!(IncidentRequest { what: "x".repeat(2001), ..ok.clone() }.validate().is_err());
        assert!(IncidentRequest { what: "two\nlines".into(), ..ok.clone() }.validate().is_err());
        let bad_pair = PairRef { pair: -1, ..p };
        assert!(IncidentRequest { pair: bad_pair, ..ok }.validate().is_err());
    }

    #[test]
    fn a_registration_is_bounded() {
        let r = RegisterRequest {
            host: "h".into(),
            pid: 1,
            concurrency: 4,
            lease_secs: 30.0,
            version: "0.1.0".into(),
            cpu: None,
            cores: Some(2),
        };
        assert!(r.validate().is_ok());
        assert!(RegisterRequest { concurrency: 0, ..r.clone() }.validate().is_err());
        assert!(RegisterRequest { concurrency: 1025, ..r.clone() }.validate().is_err());
        assert!(RegisterRequest { host: "\u{7}".into(), ..r.clone() }.validate().is_err());
        assert!(RegisterRequest { lease_secs: f64::NAN, ..r }.validate().is_err());
    }

    #[test]
    fn codes_have_their_wire_names_and_statuses() {
        let body = ErrorBody { code: Code::UpgradeWorker, message: "m".into() };
        let s = serde_json::to_string(&body).unwrap();
        assert_eq!(s, r#"{"code":"upgrade_worker","message":"m"}"#);
        assert_eq!(Code::UpgradeWorker.status(), 426);
        assert!(Code::Unavailable.passing() && !Code::Conflict.passing());
        let a = ReportAnswer::Refused { why: "w".into() };
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"outcome":"refused","why":"w"}"#);
    }
}
