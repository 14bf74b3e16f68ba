//! A person's runs through the server: artifacts uploaded in 1 MiB chunks (`GET` whether one is
//! sealed, `PUT` a chunk, `POST` to seal: resumable, each body small enough for any proxy), the
//! run submitted (`POST /api/v1/runs`: the server checks the submission and computes its
//! schedule itself), and a run read back for `runner pull` (`GET /api/v1/runs/{id}/pull`).
//! Who may do it is [`crate::fleet::rights`]'s, in [`crate::fleet::queue::submit`].

use std::sync::{Arc, OnceLock};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;
use utoipa::{IntoParams, ToSchema};

use crate::fleet::queue::artifacts::{self, Collected};
use crate::fleet::queue::people::PeopleError;
use crate::fleet::queue::share::Share;
use crate::fleet::queue::submit::{self, ArtifactKind, Upload};
use crate::fleet::submission::{RunParts, Submission, artifacts_of};

use super::api::{answer, begin, failed, refused, user};
use super::{App, client, refuse_json};
use crate::serve::openapi::{PeopleChangeRefusals, PeopleReadRefusals};

type AppState = State<Arc<App>>;

/// Uploads taken at once, at the most: like the workers' downloads, they must leave the pool's
/// connections to reports.
const UPLOADS: usize = 4;

fn uploads() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| Semaphore::new(UPLOADS))
}

/// Whether an artifact is stored and sealed.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArtifactState {
    pub sha: String,
    pub sealed: bool,
}

/// Whether an artifact is stored and sealed (a user): a submitter uploads only what is not.
#[utoipa::path(
    get, path = "/api/v1/artifacts/{sha}", tag = "people",
    params(("sha" = String, Path, description = "The artifact's SHA-256, 64 lowercase hex digits")),
    responses((status = 200, description = "Stored and sealed, or not", body = ArtifactState),
        PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn artifact(
    State(app): AppState,
    headers: HeaderMap,
    Path(sha): Path<String>,
) -> Response {
    let (_, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(submit::sealed(&db, &sha).await.map(|sealed| ArtifactState { sha, sealed }))
}

/// A chunk's announced artifact.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChunkQuery {
    /// The whole artifact's size in bytes (1 to 128 MiB).
    #[param(minimum = 1, maximum = 134217728)]
    pub size: u64,
    /// `binary` or `source`.
    #[param(value_type = String)]
    pub kind: ArtifactKind,
}

/// A chunk stored (or the artifact sealed already: then nothing was written).
#[derive(Debug, Serialize, ToSchema)]
pub struct ChunkAnswer {
    pub sha: String,
    pub chunk: u64,
    pub sealed: bool,
}

/// Stores chunk N (from 0; every chunk 1 MiB but the last) of an artifact (a user). An upload
/// is its uploader's until sealed: another user's chunk is refused (409) while it is fresh.
#[utoipa::path(
    put, path = "/api/v1/artifacts/{sha}/chunks/{n}", tag = "people",
    params(
        ("sha" = String, Path, description = "The artifact's SHA-256, 64 lowercase hex digits"),
        ("n" = u64, Path, description = "The chunk's number, from 0"),
        ChunkQuery,
    ),
    request_body(content = Vec<u8>, content_type = "application/octet-stream",
        description = "The chunk's bytes"),
    responses((status = 200, description = "Stored", body = ChunkAnswer), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn put_chunk(
    State(app): AppState,
    headers: HeaderMap,
    Path((sha, n)): Path<(String, u64)>,
    Query(q): Query<ChunkQuery>,
    body: Bytes,
) -> Response {
    let Ok(_permit) = uploads().acquire().await else {
        return refuse_json(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping");
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let up = Upload { sha: sha.clone(), size: q.size, kind: q.kind };
    answer(submit::put_chunk(&mut db, &who, &up, n, &body).await.map(|sealed| ChunkAnswer {
        sha,
        chunk: n,
        sealed,
    }))
}

/// Seals an artifact (its uploader) once the database found the chunks to be the file of that
/// hash; an upload that is not is dropped (400).
#[utoipa::path(
    post, path = "/api/v1/artifacts/{sha}/seal", tag = "people",
    params(("sha" = String, Path, description = "The artifact's SHA-256, 64 lowercase hex digits")),
    responses((status = 200, description = "Sealed", body = ArtifactState), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn seal(State(app): AppState, headers: HeaderMap, Path(sha): Path<String>) -> Response {
    let Ok(_permit) = uploads().acquire().await else {
        return refuse_json(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping");
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(submit::seal(&mut db, &who, &sha).await.map(|()| ArtifactState { sha, sealed: true }))
}

/// What `runner gc` asks.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GcBody {
    /// Keep unnamed artifacts uploaded less than this many seconds ago (0 to 1e9).
    pub min_age_secs: f64,
}

/// The artifacts deleted.
#[derive(Debug, Serialize, ToSchema)]
pub struct GcAnswer {
    pub deleted: Vec<Collected>,
}

/// Deletes the stored artifacts no run names, uploaded at least `min_age_secs` ago
/// (approvers).
#[utoipa::path(
    post, path = "/api/v1/artifacts/gc", tag = "people",
    request_body = GcBody,
    responses((status = 200, description = "Deleted", body = GcAnswer), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn gc(State(app): AppState, headers: HeaderMap, Json(body): Json<GcBody>) -> Response {
    let (who, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(artifacts::gc(&db, &who, body.min_age_secs).await.map(|deleted| GcAnswer { deleted }))
}

/// A run to store.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    /// The submission document `runner submit` builds (its `format` says its layout).
    #[schema(value_type = Object)]
    pub submission: Value,
    /// -1000 to 1000; above 0 for approvers only.
    #[schema(minimum = -1000, maximum = 1000)]
    #[serde(default)]
    pub priority: i32,
    /// 1 to 1000 (100: the default share).
    #[serde(default = "default_throughput")]
    #[schema(minimum = 1, maximum = 1000)]
    pub throughput: i32,
    /// The sealed artifacts the run names: its engines' binaries and source archives.
    #[serde(default)]
    pub artifacts: Vec<String>,
}

fn default_throughput() -> i32 {
    100
}

/// A run stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct Submitted {
    pub run: i64,
    /// `pending` (until an approver approves it) or `active`.
    pub state: String,
}

/// Stores a run (a user): the server checks the submission and computes its schedule itself;
/// the run is the user's, pending unless they approve runs.
#[utoipa::path(
    post, path = "/api/v1/runs", tag = "people",
    request_body = SubmitBody,
    responses((status = 200, description = "Stored", body = Submitted), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn submit_run(
    State(app): AppState,
    headers: HeaderMap,
    Json(body): Json<SubmitBody>,
) -> Response {
    // Who asks first: nobody without a token makes the server build a schedule.
    let who = match user(&app, &headers).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let sub = match Submission::from_stored(&body.submission) {
        Ok(s) => s,
        Err(e) => return refused(PeopleError::Invalid(format!("the submission: {e:#}"))),
    };
    let parts = match RunParts::of(&sub) {
        Ok(p) => p,
        Err(e) => return refused(PeopleError::Invalid(format!("{e:#}"))),
    };
    let allowed = artifacts_of(&sub);
    if let Some(other) = body.artifacts.iter().find(|a| !allowed.contains(a)) {
        return refused(PeopleError::Invalid(format!(
            "artifact {other} is none of the run's engines or source archives"
        )));
    }
    let mut db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    let share = Share { priority: body.priority, throughput: body.throughput };
    let run = parts.new_run(&sub);
    answer(submit::submit(&mut db, &who, &run, share, &body.artifacts).await.map(
        |(id, pending)| Submitted {
            run: id,
            state: if pending { "pending" } else { "active" }.into(),
        },
    ))
}

/// What `runner pull` writes a results folder from: the submission, the state, the pairings'
/// verdicts, every stored game, a tuning run's iterations, the share
/// ([`crate::fleet::pull::PullBundle`]). Reading is open to whoever may read the pages.
#[utoipa::path(
    get, path = "/api/v1/runs/{id}/pull", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    responses((status = 200, description = "The run, to pull", body = Object), PeopleReadRefusals),
    security((), ("user_token" = [])),
)]
pub async fn pull(State(app): AppState, Path(id): Path<i64>) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    match crate::fleet::queue::run(&db, id).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            return refuse_json(StatusCode::NOT_FOUND, &format!("no run {id} in the database"));
        }
        Err(e) => return failed(e),
    }
    match crate::fleet::pull::gather(&db, id).await {
        Ok(bundle) => Json(bundle).into_response(),
        Err(e) => failed(e),
    }
}
