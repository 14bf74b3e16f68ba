//! The worker API's handlers, `/api/v1/worker/...`: each takes a typed, bounded request
//! ([`reply::Body`]), the worker from its headers, and calls the fleet queue's function on a
//! connection of the server's pool; the database functions still check the key, the secret
//! and the lease.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::Semaphore;

use super::reply::{ApiError, AppState, Body, Key, Protocol, Worker, conn};
use crate::fleet::api::{self, *};
use crate::fleet::queue::{self, Machine, PairReport, WorkerId};
use crate::serve::App;

/// Artifact chunks sent at once, at the most: downloads (1 MiB each) must leave the pool's
/// connections to reports and claims. Past it a download is answered 503 with `Retry-After`.
const DOWNLOADS: usize = 4;

fn downloads() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| Semaphore::new(DOWNLOADS))
}

/// The routes, under [`api::PREFIX`].
pub fn routes() -> Router<Arc<App>> {
    let r = Router::new()
        .route("/version", get(version))
        .route("/register", post(register))
        .route("/stopped", post(stopped))
        .route("/claim", post(claim))
        .route("/heartbeat", post(heartbeat))
        .route("/release", post(release))
        .route("/refuse", post(refuse))
        .route("/incident", post(incident))
        .route("/report", post(report))
        .route("/settle", post(settle))
        .route("/iteration", post(iteration))
        .route("/engine-loaded", post(engine_loaded))
        .route("/outstanding", post(outstanding))
        .route("/run/{id}", get(run))
        .route("/run/{id}/artifacts", get(artifacts))
        .route("/artifact/{sha}/chunk/{n}", get(chunk))
        .fallback(not_found);
    Router::new().nest(api::PREFIX, r)
}

type Answer<T> = Result<axum::Json<T>, ApiError>;

async fn not_found() -> ApiError {
    ApiError::new(Code::NotFound, "no such call of the worker API")
}

async fn version() -> axum::Json<Version> {
    axum::Json(Version {
        protocol: api::PROTOCOL,
        min_protocol: api::MIN_PROTOCOL,
        server: env!("CARGO_PKG_VERSION").into(),
    })
}

async fn register(
    State(app): AppState,
    Key(key): Key,
    Body(r): Body<RegisterRequest>,
) -> Answer<Registered> {
    // A person's token where a key belongs says so (it would be "unknown worker key").
    crate::fleet::credentials::check_kind(&key, true)
        .map_err(|e| ApiError::new(Code::Unauthorized, e.to_string()))?;
    let db = conn(&app).await?;
    let m = Machine { host: r.host, cpu: r.cpu, cores: r.cores };
    // Bounded by validate(): 1 to 1,024.
    let conc = i32::try_from(r.concurrency).unwrap_or(1);
    let lease = Duration::from_secs_f64(r.lease_secs);
    let w = queue::register_machine(&db, Some(&key), &m, r.pid, conc, lease).await?;
    Ok(axum::Json(Registered { worker: w.id, secret: w.secret().clone(), key_name: w.key_name }))
}

async fn stopped(State(app): AppState, Worker(w): Worker, Body(_): Body<Done>) -> Answer<Done> {
    let db = conn(&app).await?;
    queue::worker_stopped(&db, &w).await?;
    Ok(axum::Json(Done {}))
}

async fn claim(
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
    let lease = Duration::from_secs_f64(r.lease_secs);
    let c = queue::claim_from(&**db, &w, r.only, &r.skip, r.current, r.n, lease, r.tune_in_flight)
        .await?;
    Ok(axum::Json(Claimed { claims: c.into_iter().map(Into::into).collect() }))
}

async fn heartbeat(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<HeartbeatRequest>,
) -> Answer<Alive> {
    let db = conn(&app).await?;
    let lease = Duration::from_secs_f64(r.lease_secs);
    let tokens = queue::heartbeat(&**db, &w, &r.tokens, lease).await?;
    Ok(axum::Json(Alive { tokens }))
}

async fn release(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<ReleaseRequest>,
) -> Answer<Released> {
    let db = conn(&app).await?;
    let released = queue::release(&db, &w, &r.tokens).await?;
    Ok(axum::Json(Released { released }))
}

async fn refuse(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<RefuseRequest>,
) -> Answer<RunState> {
    let db = conn(&app).await?;
    let state = queue::refuse(&db, &w, r.run, &r.reason, &r.tokens).await?;
    Ok(axum::Json(RunState { state }))
}

async fn incident(
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
async fn report(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<ReportRequest>,
) -> Answer<ReportAnswer> {
    let db = conn(&app).await?;
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
    Ok(axum::Json(answer.into()))
}

async fn settle(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<SettleRequest>,
) -> Answer<SettleAnswer> {
    let db = conn(&app).await?;
    let s = queue::settle(&**db, &w, r.run).await?;
    Ok(axum::Json(s.into()))
}

async fn iteration(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<IterationRequest>,
) -> Answer<IterationAnswer> {
    let db = conn(&app).await?;
    let iteration = queue::iteration(&db, &w, &r.pair.into()).await?;
    Ok(axum::Json(IterationAnswer { iteration }))
}

async fn engine_loaded(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<EngineLoadedRequest>,
) -> Answer<Done> {
    let db = conn(&app).await?;
    queue::builds::engine_loaded(&**db, &w, r.run, &r.load()).await?;
    Ok(axum::Json(Done {}))
}

async fn outstanding(
    State(app): AppState,
    Worker(w): Worker,
    Body(r): Body<OutstandingRequest>,
) -> Answer<Outstanding> {
    let db = conn(&app).await?;
    queue::worker_auth(&db, &w).await?;
    let (runs, soonest) = queue::outstanding(&db, w.id, r.only, &r.skip).await?;
    Ok(axum::Json(Outstanding { runs, soonest_secs: soonest.map(|d| d.as_secs_f64()) }))
}

/// A positive id from a path, else a typed refusal.
fn path_id(what: &str, v: &str) -> Result<i64, ApiError> {
    v.parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| ApiError::new(Code::Invalid, format!("{what}: must be a positive id")))
}

async fn run(State(app): AppState, Worker(w): Worker, Path(id): Path<String>) -> Answer<RunBody> {
    let id = path_id("run", &id)?;
    let db = conn(&app).await?;
    checked(&db, &w).await?;
    match queue::run(&db, id).await? {
        Some(r) => Ok(axum::Json(r.into())),
        None => Err(ApiError::new(Code::NotFound, format!("no run {id}"))),
    }
}

async fn artifacts(
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
async fn chunk(
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

/// The worker's key and secret checked (a call that reads rather than calls a worker
/// function).
async fn checked(db: &deadpool_postgres::Object, w: &WorkerId) -> Result<(), ApiError> {
    queue::worker_auth(db, w).await?;
    Ok(())
}
