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
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::fleet::queue::people::PeopleError;
use crate::fleet::queue::share::Share;
use crate::fleet::queue::submit::{self, ArtifactKind, Upload};
use crate::fleet::submission::{RunParts, Submission, artifacts_of};

use super::api::{answer, begin, failed};
use super::{App, client, refuse_json};

type AppState = State<Arc<App>>;

/// Uploads taken at once, at the most: like the workers' downloads, they must leave the pool's
/// connections to reports.
const UPLOADS: usize = 4;

fn uploads() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| Semaphore::new(UPLOADS))
}

/// `GET /api/v1/artifacts/{sha}` (a user): `{"sha", "sealed"}`.
pub async fn artifact(
    State(app): AppState,
    headers: HeaderMap,
    Path(sha): Path<String>,
) -> Response {
    let (_, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(submit::sealed(&db, &sha).await.map(|sealed| json!({ "sha": sha, "sealed": sealed })))
}

/// A chunk's announced artifact.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkQuery {
    /// The whole artifact's size in bytes.
    pub size: u64,
    pub kind: ArtifactKind,
}

/// `PUT /api/v1/artifacts/{sha}/chunks/{n}?size=S&kind=binary|source` (a user; the body is the
/// chunk's bytes): `{"sha", "chunk", "sealed"}`. An upload is its uploader's until sealed.
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
    answer(
        submit::put_chunk(&mut db, &who, &up, n, &body)
            .await
            .map(|sealed| json!({ "sha": sha, "chunk": n, "sealed": sealed })),
    )
}

/// `POST /api/v1/artifacts/{sha}/seal` (its uploader): `{"sha", "sealed": true}` once the
/// database found the chunks to be the file of that hash.
pub async fn seal(State(app): AppState, headers: HeaderMap, Path(sha): Path<String>) -> Response {
    let Ok(_permit) = uploads().acquire().await else {
        return refuse_json(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping");
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(submit::seal(&mut db, &who, &sha).await.map(|()| json!({ "sha": sha, "sealed": true })))
}

/// A run to store.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    /// The submission document `runner submit` builds.
    pub submission: Value,
    #[serde(default)]
    pub priority: i32,
    #[serde(default = "default_throughput")]
    pub throughput: i32,
    /// The sealed artifacts the run names: its engines' binaries and source archives.
    #[serde(default)]
    pub artifacts: Vec<String>,
}

fn default_throughput() -> i32 {
    100
}

/// `POST /api/v1/runs` `{"submission", "priority"?, "throughput"?, "artifacts"}` (a user):
/// `{"run", "state"}`, the run pending unless its submitter approves runs.
pub async fn submit_run(
    State(app): AppState,
    headers: HeaderMap,
    Json(body): Json<SubmitBody>,
) -> Response {
    let sub = match Submission::from_stored(&body.submission) {
        Ok(s) => s,
        Err(e) => return answer(Err(PeopleError::Invalid(format!("the submission: {e:#}")))),
    };
    let parts = match RunParts::of(&sub) {
        Ok(p) => p,
        Err(e) => return answer(Err(PeopleError::Invalid(format!("{e:#}")))),
    };
    let allowed = artifacts_of(&sub);
    if let Some(other) = body.artifacts.iter().find(|a| !allowed.contains(a)) {
        return answer(Err(PeopleError::Invalid(format!(
            "artifact {other} is none of the run's engines or source archives"
        ))));
    }
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let share = Share { priority: body.priority, throughput: body.throughput };
    let run = parts.new_run(&sub);
    answer(submit::submit(&mut db, &who, &run, share, &body.artifacts).await.map(
        |(id, pending)| json!({ "run": id, "state": if pending { "pending" } else { "active" } }),
    ))
}

/// `GET /api/v1/runs/{id}/pull`: what `runner pull` writes a results folder from
/// ([`crate::fleet::pull::PullBundle`]). Reading is open to whoever may read the pages.
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
