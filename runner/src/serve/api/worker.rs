//! The worker API's handlers, `/api/v1/worker/...`: each takes a typed, bounded request
//! ([`reply::Body`]), the worker from its headers, and calls the fleet queue's function on a
//! connection of the server's pool, which checks the key, the secret and the lease (in the
//! server's own statements, or for the claim still in the database's function). Each handler
//! carries its `#[utoipa::path]` for the API's document ([`crate::serve::openapi`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use super::reply::{ApiError, AppState, Body, Key, Protocol, Worker, conn};
use crate::fleet::api::{self, *};
use crate::fleet::queue::{self, Machine, PairReport, WorkerId};
use crate::serve::App;
use crate::serve::openapi::{ApiRoute, WorkerRefusals, add_routes, route};

/// Artifact chunks sent at once, at the most: downloads (1 MiB each) must leave the pool's
/// connections to reports and claims. Past it a download is answered 503 with `Retry-After`.
const DOWNLOADS: usize = 4;

fn downloads() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| Semaphore::new(DOWNLOADS))
}

/// The worker API's routes, relative to [`api::PREFIX`]: the router registers these, and the
/// API's document is checked against them (`serve::openapi`'s tests). A new route goes here,
/// with `#[utoipa::path(..., path = "/api/v1/worker/...")]` on its handler and the handler's
/// name in `paths(...)` of `serve::openapi::ApiDoc`; the test `every_api_route_is_documented`
/// names a route left out.
pub fn table() -> Vec<ApiRoute> {
    use Method as M;
    vec![
        route(M::GET, "/version", version),
        route(M::POST, "/register", register),
        route(M::POST, "/stopped", stopped),
        route(M::POST, "/claim", claim),
        route(M::POST, "/heartbeat", heartbeat),
        route(M::POST, "/release", release),
        route(M::POST, "/refuse", refuse),
        route(M::POST, "/incident", incident),
        route(M::POST, "/report", report),
        route(M::POST, "/settle", settle),
        route(M::POST, "/iteration", iteration),
        route(M::POST, "/engine-loaded", engine_loaded),
        route(M::POST, "/outstanding", outstanding),
        route(M::GET, "/run/{id}", run),
        route(M::GET, "/run/{id}/artifacts", artifacts),
        route(M::GET, "/artifact/{sha}/chunk/{n}", chunk),
    ]
}

/// The routes, under [`api::PREFIX`].
pub fn routes() -> Router<Arc<App>> {
    let r = add_routes(Router::new(), table()).fallback(not_found);
    Router::new().nest(api::PREFIX, r)
}

type Answer<T> = Result<axum::Json<T>, ApiError>;

async fn not_found() -> ApiError {
    ApiError::new(Code::NotFound, "no such call of the worker API")
}

/// What the server speaks: its worker protocol, the oldest it hands work to, its version.
#[utoipa::path(
    get, path = "/api/v1/worker/version", tag = "worker",
    responses(
        (status = 200, description = "The server's protocol", body = Version),
        (status = 503, description = "unavailable: the server is busy (Retry-After)", body = ErrorBody, headers(("x-runner-api" = String, description = "1: the answer is the API's"))),
    ),
)]
pub(crate) async fn version() -> axum::Json<Version> {
    axum::Json(Version {
        protocol: api::PROTOCOL,
        min_protocol: api::MIN_PROTOCOL,
        server: env!("CARGO_PKG_VERSION").into(),
    })
}

/// A worker process starts: registered under the key it sends, it gets its id and secret.
#[utoipa::path(
    post, path = "/api/v1/worker/register", tag = "worker",
    request_body = RegisterRequest,
    responses(
        (status = 200, description = "Registered: the id and secret of every later call", body = Registered),
        WorkerRefusals,
    ),
    security(("worker_key" = [])),
)]
pub(crate) async fn register(
    State(app): AppState,
    Key(key): Key,
    Body(r): Body<RegisterRequest>,
) -> Answer<Registered> {
    // A person's token where a key belongs says so (it would be "unknown worker key").
    crate::fleet::credentials::check_kind(&key, true)
        .map_err(|e| ApiError::new(Code::Unauthorized, e.to_string()))?;
    let db = conn(&app).await?;
    // The version the worker says it runs (bounded by validate()), as `runner workers` shows.
    let m = Machine { host: r.host, cpu: r.cpu, cores: r.cores, version: Some(r.version) };
    // Bounded by validate(): 1 to 1,024.
    let conc = i32::try_from(r.concurrency).unwrap_or(1);
    let lease = Duration::from_secs_f64(r.lease_secs);
    let w = queue::register_machine(&db, &key, &m, r.pid, conc, lease).await?;
    Ok(axum::Json(Registered { worker: w.id, secret: w.secret().clone(), key_name: w.key_name }))
}

/// The worker process stops (marked stopped; its leases, if any, expire on their own).
#[utoipa::path(
    post, path = "/api/v1/worker/stopped", tag = "worker",
    request_body = Done,
    responses((status = 200, description = "Noted", body = Done), WorkerRefusals),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn stopped(
    State(app): AppState,
    Worker(w): Worker,
    Body(_): Body<Done>,
) -> Answer<Done> {
    let db = conn(&app).await?;
    queue::worker_stopped(&db, &w).await?;
    Ok(axum::Json(Done {}))
}

/// Leases up to `n` pairs.
#[utoipa::path(
    post, path = "/api/v1/worker/claim", tag = "worker",
    request_body = ClaimRequest,
    params(
        ("x-runner-worker-version" = Option<u32>, Header, description = "The worker protocol the worker speaks (0 when absent); below the server's `min_protocol`, a claim is refused 426"),
    ),
    responses(
        (status = 200, description = "The pairs leased (none: nothing to play now)", body = Claimed),
        (status = 426, description = "upgrade_worker: the worker's protocol is older than the server hands work to", body = ErrorBody, headers(("x-runner-api" = String, description = "1: the answer is the API's"))),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn claim(
    State(app): AppState,
    Worker(w): Worker,
    Protocol(v): Protocol,
    Body(r): Body<ClaimRequest>,
) -> Answer<Claimed> {
    if v < api::MIN_PROTOCOL {
        return Err(ApiError::new(
            Code::UpgradeWorker,
            format!(
                "this worker speaks protocol {v}; this server hands work only to protocol {} \
                 and later: upgrade the runner on the worker's machine (its leases and reports \
                 are still taken)",
                api::MIN_PROTOCOL
            ),
        ));
    }
    let db = conn(&app).await?;
    let c = queue::claim_from(&**db, &w, &r.into()).await?;
    Ok(axum::Json(Claimed { claims: c.into_iter().map(Into::into).collect() }))
}

/// Renews the leases named (none: the worker says it is alive).
#[utoipa::path(
    post, path = "/api/v1/worker/heartbeat", tag = "worker",
    request_body = HeartbeatRequest,
    responses(
        (status = 200, description = "The leases still this worker's", body = Alive),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn heartbeat(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<HeartbeatRequest>,
) -> Answer<Alive> {
    let db = conn(&app).await?;
    let lease = Duration::from_secs_f64(r.lease_secs);
    let tokens = queue::heartbeat(&**db, &w, &r.tokens, lease).await?;
    Ok(axum::Json(Alive { tokens }))
}

/// Gives leases back.
#[utoipa::path(
    post, path = "/api/v1/worker/release", tag = "worker",
    request_body = ReleaseRequest,
    responses(
        (status = 200, description = "How many were released", body = Released),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn release(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<ReleaseRequest>,
) -> Answer<Released> {
    let db = conn(&app).await?;
    let released = queue::release(&db, &w, &r.tokens).await?;
    Ok(axum::Json(Released { released }))
}

/// This worker cannot play a run (an engine that does not build, a missing file): it says why
/// and gives the run's leases back.
#[utoipa::path(
    post, path = "/api/v1/worker/refuse", tag = "worker",
    request_body = RefuseRequest,
    responses(
        (status = 200, description = "The run's state after", body = RunState),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn refuse(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<RefuseRequest>,
) -> Answer<RunState> {
    let db = conn(&app).await?;
    let state = queue::refuse(&db, &w, r.run, &r.reason, &r.tokens).await?;
    Ok(axum::Json(RunState { state }))
}

/// A pair this worker holds could not be stored: why.
#[utoipa::path(
    post, path = "/api/v1/worker/incident", tag = "worker",
    request_body = IncidentRequest,
    responses((status = 200, description = "Noted", body = Done), WorkerRefusals),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn incident(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<IncidentRequest>,
) -> Answer<Done> {
    let db = conn(&app).await?;
    queue::incident(&db, &w, &r.pair.into(), &r.what).await?;
    Ok(axum::Json(Done {}))
}

/// Stores a pair; a replay of a report stored already under the same worker and lease (its
/// answer was lost on the way) is answered as the report was, with the counts now.
#[utoipa::path(
    post, path = "/api/v1/worker/report", tag = "worker",
    request_body = ReportRequest,
    responses(
        (status = 200, description = "Stored, or refused with why (a lease lost)", body = ReportAnswer),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn report(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<ReportRequest>,
) -> Answer<ReportAnswer> {
    let mut db = conn(&app).await?;
    let p = PairReport {
        run_id: r.pair.run,
        pairing: r.pair.pairing,
        pair: r.pair.pair,
        token: r.pair.token,
        records: [&r.records[0], &r.records[1]],
    };
    let answer = match queue::report(&**db, &w, &p, r.all).await? {
        queue::Reported::Refused(why) => match queue::replayed(&db, &w, &p, r.all).await? {
            Some(stored) => stored,
            None => queue::Reported::Refused(why),
        },
        stored => stored,
    };
    let answer = match answer {
        queue::Reported::Stored { counts, open, .. } => {
            // Stored, so the worker's secret and lease were checked: the server decides when
            // the run's judge says a bound may be crossed, or nothing is left open; a judge
            // that cannot be read fails the run in that decision.
            let may_stop = match app.judges.of(&db, p.run_id).await? {
                Err(_) => true,
                Ok(j) if j.needs_all() && !r.all => {
                    let all = queue::pairing_counts(&**db, p.run_id, None).await?;
                    !j.stops(&all, &[]).is_empty()
                }
                Ok(j) => !j.stops(&counts, &[]).is_empty(),
            };
            let settled = if may_stop || !open {
                Some(queue::settle::decide(&mut db, p.run_id).await?)
            } else {
                None
            };
            queue::Reported::Stored { counts, open, settled }
        }
        refused => refused,
    };
    Ok(axum::Json(answer.into()))
}

/// Asks the server to decide a run now (its SPRT, its end).
#[utoipa::path(
    post, path = "/api/v1/worker/settle", tag = "worker",
    request_body = SettleRequest,
    responses(
        (status = 200, description = "The run's state and the pairings stopped", body = SettleAnswer),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn settle(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<SettleRequest>,
) -> Answer<SettleAnswer> {
    let mut db = conn(&app).await?;
    let s = queue::settle::decide_for(&mut db, &w, r.run).await?;
    Ok(axum::Json(s.into()))
}

/// A tuning pair's iteration (its parameters to play).
#[utoipa::path(
    post, path = "/api/v1/worker/iteration", tag = "worker",
    request_body = IterationRequest,
    responses(
        (status = 200, description = "The iteration, or null when the lease is lost", body = IterationAnswer),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn iteration(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<IterationRequest>,
) -> Answer<IterationAnswer> {
    let db = conn(&app).await?;
    let iteration = queue::iteration(&db, &w, &r.pair.into()).await?;
    Ok(axum::Json(IterationAnswer { iteration }))
}

/// An engine this worker loaded (or built, or failed to) for a run.
#[utoipa::path(
    post, path = "/api/v1/worker/engine-loaded", tag = "worker",
    request_body = EngineLoadedRequest,
    responses((status = 200, description = "Noted", body = Done), WorkerRefusals),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn engine_loaded(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<EngineLoadedRequest>,
) -> Answer<Done> {
    let db = conn(&app).await?;
    queue::builds::engine_loaded(&**db, &w, r.run, &r.load()).await?;
    Ok(axum::Json(Done {}))
}

/// The runs with open pairs this worker may serve.
#[utoipa::path(
    post, path = "/api/v1/worker/outstanding", tag = "worker",
    request_body = OutstandingRequest,
    responses(
        (status = 200, description = "The runs, and when the soonest lease among them expires", body = Outstanding),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn outstanding(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<OutstandingRequest>,
) -> Answer<Outstanding> {
    let db = conn(&app).await?;
    queue::worker_auth(&db, &w).await?;
    let waiting = queue::outstanding(&db, w.id, r.only, &r.skip).await?;
    Ok(axum::Json(Outstanding {
        runs: waiting.runs,
        soonest_secs: waiting.soonest.map(|d| d.as_secs_f64()),
        poll_secs: Some(app.worker_poll.as_secs_f64()),
    }))
}

/// A positive id from a path, else a typed refusal.
fn path_id(what: &str, v: &str) -> Result<i64, ApiError> {
    v.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| ApiError::new(Code::Invalid, format!("{what}: must be a positive id")))
}

/// A run as stored (its submission: what to play).
#[utoipa::path(
    get, path = "/api/v1/worker/run/{id}", tag = "worker",
    params(("id" = i64, Path, minimum = 1, description = "The run's id")),
    responses((status = 200, description = "The run", body = RunBody), WorkerRefusals),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn run(
    State(app): AppState,
    Worker(w): Worker,
    Path(id): Path<String>,
) -> Answer<RunBody> {
    let id = path_id("run", &id)?;
    let db = conn(&app).await?;
    checked(&db, &w).await?;
    match queue::run(&db, id).await? {
        Some(r) => Ok(axum::Json(r.into())),
        None => Err(ApiError::new(Code::NotFound, format!("no run {id}"))),
    }
}

/// The artifacts of a run (engine sources or binaries, books, networks), by digest.
#[utoipa::path(
    get, path = "/api/v1/worker/run/{id}/artifacts", tag = "worker",
    params(("id" = i64, Path, minimum = 1, description = "The run's id")),
    responses(
        (status = 200, description = "The run's artifacts", body = Artifacts),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn artifacts(
    State(app): AppState,
    Worker(w): Worker,
    Path(id): Path<String>,
) -> Answer<Artifacts> {
    let id = path_id("run", &id)?;
    let db = conn(&app).await?;
    let list = queue::worker_artifacts(&**db, &w, id).await?;
    Ok(axum::Json(Artifacts { artifacts: list.into_iter().map(Into::into).collect() }))
}

/// One chunk of an artifact, as bytes; at most [`DOWNLOADS`] at once.
#[utoipa::path(
    get, path = "/api/v1/worker/artifact/{sha}/chunk/{n}", tag = "worker",
    params(
        ("sha" = String, Path, pattern = "^[0-9a-f]{64}$", description = "The artifact's SHA-256, lowercase hex"),
        ("n" = i32, Path, minimum = 0, description = "The chunk, from 0 (1 MiB each)"),
    ),
    responses(
        (status = 200, description = "The chunk's bytes (1 MiB, the last one shorter)", content(("application/octet-stream"))),
        WorkerRefusals,
    ),
    security(("worker_secret" = [], "worker_id" = [])),
)]
pub(crate) async fn chunk(
    State(app): AppState,
    Worker(w): Worker,
    Path((sha, n)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    api::bounds::sha256("sha", &sha)?;
    let n = n
        .parse::<i32>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| ApiError::new(Code::Invalid, "chunk: must be a number from 0"))?;
    let Ok(_permit) = downloads().try_acquire() else {
        return Err(ApiError::unavailable(
            "too many artifact downloads at once",
            Duration::from_secs(1),
        ));
    };
    let db = conn(&app).await?;
    let bytes = queue::artifact_chunk(&**db, &w, &sha, n).await?;
    drop(db);
    let mut res = bytes.into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    Ok(res)
}

/// The worker's key and secret checked (a call that reads rather than writes).
async fn checked(db: &deadpool_postgres::Object, w: &WorkerId) -> Result<(), ApiError> {
    queue::worker_auth(db, w).await?;
    Ok(())
}
