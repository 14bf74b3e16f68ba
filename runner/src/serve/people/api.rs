//! The people's JSON API under `/api/v1/`: a user's bearer token (`Authorization: Bearer
//! rt_...`) says who asks; bodies are typed and bounded (unknown fields refused, names and
//! texts checked by [`crate::fleet::bounded`], numbers by the operations' limits). A refusal
//! is `{"error": "..."}` ([`RefusalBody`]) with 401 (no valid token), 403 (not allowed), 404,
//! 400, 409 (the run's state refuses it) or 5xx. A cookie never authenticates a change here:
//! only a token does, so no other site can make a browser send one.
//!
//! Every answer is a type here (or a row type of the queue's), and each handler carries its
//! `#[utoipa::path]`: the API's document (`GET /api/openapi.json`, [`crate::serve::openapi`])
//! is made from them.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::fleet::bounded::Name;
use crate::fleet::queue::people::KeyRow;
use crate::fleet::queue::people::{self, AuditRow, PeopleError};
use crate::fleet::queue::share::Change;
use crate::fleet::rights::{Principal, RunState};
use crate::serve::openapi::{PeopleChangeRefusals, PeopleReadRefusals};

use super::{App, api_caller, client, refuse_json};

type AppState = State<Arc<App>>;

/// A refusal of the people's API (and of `--private` to an anonymous request under `/api/`):
/// the status says what kind, `error` says why in one line.
#[derive(Debug, Serialize, ToSchema)]
pub struct RefusalBody {
    pub error: String,
}

pub(super) fn answer<T: Serialize>(r: Result<T, PeopleError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => refused(e),
    }
}

pub(super) fn refused(e: PeopleError) -> Response {
    refuse_json(
        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &e.to_string(),
    )
}

/// The caller (by token) and a connection, or the refusal to send.
pub(super) async fn begin(
    app: &App,
    headers: &HeaderMap,
) -> Result<(Principal, deadpool_postgres::Object), Response> {
    let who = user(app, headers).await?;
    Ok((who, client(app).await?))
}

/// The user the token names, or the refusal to send (no connection held).
pub(super) async fn user(app: &App, headers: &HeaderMap) -> Result<Principal, Response> {
    let caller = api_caller(app, headers).await?;
    if caller.who == Principal::Anonymous {
        return Err(refuse_json(
            StatusCode::UNAUTHORIZED,
            "send a user's token: Authorization: Bearer rt_... (runner user add prints one)",
        ));
    }
    Ok(caller.who)
}

/// A run's state before and after an approval or a cancellation.
#[derive(Debug, Serialize, ToSchema)]
pub struct StateChange {
    pub run: i64,
    pub was: RunState,
    pub state: RunState,
}

/// Approves a pending run (approvers); a run not pending is answered as it is.
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/approve", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    responses(
        (status = 200, description = "Approved (or not pending)", body = StateChange),
        PeopleChangeRefusals,
    ),
    security(("user_token" = [])),
)]
pub async fn approve(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::approve(&mut db, &who, id).await.map(|was| {
        let state = if was == RunState::Pending { RunState::Active } else { was };
        StateChange { run: id, was, state }
    }))
}

/// Cancels an open run (its owner or an approver); an ended run is answered as it is.
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/cancel", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    responses(
        (status = 200, description = "Cancelled (or ended already)", body = StateChange),
        PeopleChangeRefusals,
    ),
    security(("user_token" = [])),
)]
pub async fn cancel(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::cancel(&mut db, &who, id).await.map(|was| {
        let state = if was.is_open() { RunState::Cancelled } else { was };
        StateChange { run: id, was, state }
    }))
}

/// What `modify` may change (at least one).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModifyBody {
    /// Above 0 needs an approver.
    #[schema(minimum = -1000, maximum = 1000)]
    pub priority: Option<i32>,
    #[schema(minimum = 1, maximum = 1000)]
    pub throughput: Option<i32>,
    /// Games per pairing at most (rounded up to whole pairs), within the submitted schedule.
    pub games: Option<u32>,
}

impl ModifyBody {
    pub fn change(&self) -> Result<Change, PeopleError> {
        if self.priority.is_none() && self.throughput.is_none() && self.games.is_none() {
            return Err(PeopleError::Invalid(
                "nothing to change: give priority, throughput or games".into(),
            ));
        }
        let pairs = match self.games {
            Some(g) => Some(
                i32::try_from(g.div_ceil(2))
                    .map_err(|_| PeopleError::Invalid(format!("games {g} is too many")))?,
            ),
            None => None,
        };
        Ok(Change { priority: self.priority, throughput: self.throughput, pairs })
    }
}

/// A run after a change of its share or its length.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModifyAnswer {
    pub run: i64,
    /// The run's state (`runs.state`).
    pub state: String,
    pub priority: i32,
    pub throughput: i32,
    /// Pending pairs skipped (the run shrank).
    pub skipped: i64,
    /// Skipped pairs pending again (it grew back).
    pub reopened: i64,
}

/// Changes a run's priority, throughput or games (its owner or an approver; a priority above
/// 0 needs an approver).
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/modify", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    request_body = ModifyBody,
    responses((status = 200, description = "Changed", body = ModifyAnswer), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn modify(
    State(app): AppState,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Json(body): Json<ModifyBody>,
) -> Response {
    let change = match body.change() {
        Ok(c) => c,
        Err(e) => return refused(e),
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::modify(&mut db, &who, id, change).await.map(|m| ModifyAnswer {
        run: id,
        state: m.state,
        priority: m.share.priority,
        throughput: m.share.throughput,
        skipped: m.skipped,
        reopened: m.reopened,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeBody {
    /// The worker key whose pairs are taken back.
    pub worker: Name,
}

/// The pairs a purge gave back, and the run's state after.
#[derive(Debug, Serialize, ToSchema)]
pub struct PurgeAnswer {
    pub run: i64,
    pub pairs: i64,
    pub state: String,
}

/// Takes back what a worker key stored in a run (its games and counts) and hands those pairs
/// out again; the run is then decided anew (its owner or an approver; not a tuning run).
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/purge", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    request_body = PurgeBody,
    responses((status = 200, description = "Purged", body = PurgeAnswer), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn purge(
    State(app): AppState,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Json(body): Json<PurgeBody>,
) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::purge(&mut db, &who, id, &body.worker).await.map(|(n, s)| PurgeAnswer {
        run: id,
        pairs: n,
        state: s.state,
    }))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteBody {
    /// Delete it though it was not pulled since it ended (its games are lost).
    #[serde(default)]
    pub force: bool,
}

/// The games a deletion removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeleteAnswer {
    pub run: i64,
    pub games: i64,
}

/// Removes an ended run with everything stored of it (its owner or an approver; one not pulled
/// since it ended only with `force`); the body may be left out.
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/delete", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    request_body(content = Option<DeleteBody>, description = "May be left out: no body at all is `{\"force\": false}`"),
    responses((status = 200, description = "Deleted", body = DeleteAnswer), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn delete(
    State(app): AppState,
    headers: HeaderMap,
    Path(id): Path<i64>,
    body: Option<Json<DeleteBody>>,
) -> Response {
    let force = body.is_some_and(|b| b.force);
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(
        people::delete(&mut db, &who, id, force).await.map(|n| DeleteAnswer { run: id, games: n }),
    )
}

/// A run.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunId {
    pub run: i64,
}

/// Marks a run as written to a folder (`runner pull`; its owner or an approver).
#[utoipa::path(
    post, path = "/api/v1/runs/{id}/pulled", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    responses((status = 200, description = "Marked", body = RunId), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn pulled(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::pulled(&mut db, &who, id).await.map(|()| RunId { run: id }))
}

/// Every worker key.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    pub keys: Vec<KeyRow>,
}

/// Lists every worker key, never a key itself (approvers).
#[utoipa::path(
    get, path = "/api/v1/worker-keys", tag = "people",
    responses((status = 200, description = "The keys", body = KeyList), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn keys(State(app): AppState, headers: HeaderMap) -> Response {
    let (who, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::keys(&db, &who).await.map(|keys| KeyList { keys }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyBody {
    pub name: Name,
}

/// A new worker key: shown this once (`fk_...`).
#[derive(Debug, Serialize, ToSchema)]
pub struct NewKey {
    pub name: Name,
    pub key: String,
}

/// Makes a worker key (approvers).
#[utoipa::path(
    post, path = "/api/v1/worker-keys", tag = "people",
    request_body = KeyBody,
    responses(
        (status = 200, description = "The key, shown once", body = NewKey),
        PeopleChangeRefusals,
    ),
    security(("user_token" = [])),
)]
pub async fn key_add(
    State(app): AppState,
    headers: HeaderMap,
    Json(body): Json<KeyBody>,
) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(
        people::key_add(&mut db, &who, &body.name)
            .await
            .map(|key| NewKey { name: body.name.clone(), key }),
    )
}

/// A revoked key and the pairs its workers held, given back.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevokedKey {
    pub name: Name,
    pub pairs: i64,
}

/// Revokes a worker key: its workers are refused from now on, their pairs given back
/// (approvers).
#[utoipa::path(
    post, path = "/api/v1/worker-keys/{name}/revoke", tag = "people",
    params(("name" = Name, Path, description = "The key's name")),
    responses((status = 200, description = "Revoked", body = RevokedKey), PeopleChangeRefusals),
    security(("user_token" = [])),
)]
pub async fn key_revoke(
    State(app): AppState,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let name = match Name::new(&name) {
        Ok(n) => n,
        Err(e) => return refused(PeopleError::Invalid(e)),
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::key_revoke(&mut db, &who, &name).await.map(|pairs| RevokedKey { name, pairs }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries at most (clamped to 1 to 1000).
    #[serde(default = "default_limit")]
    #[param(default = 100, minimum = 1, maximum = 1000)]
    pub limit: i64,
    /// Only entries older than this entry's id (the next page).
    pub before: Option<i64>,
}

fn default_limit() -> i64 {
    100
}

/// The audit log's entries, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditAnswer {
    pub audit: Vec<AuditRow>,
}

/// The audit log, newest entries first (approvers).
#[utoipa::path(
    get, path = "/api/v1/audit", tag = "people",
    params(AuditQuery),
    responses(
        (status = 200, description = "The entries", body = AuditAnswer),
        PeopleChangeRefusals,
    ),
    security(("user_token" = [])),
)]
pub async fn audit(
    State(app): AppState,
    headers: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> Response {
    let (who, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::audit_log(&db, &who, q.limit, q.before).await.map(|audit| AuditAnswer { audit }))
}

/// The user a token belongs to.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub name: String,
    pub approver: bool,
}

/// Who the token belongs to.
#[utoipa::path(
    get, path = "/api/v1/me", tag = "people",
    responses((status = 200, description = "The token's user", body = Me), PeopleReadRefusals),
    security(("user_token" = [])),
)]
pub async fn me(State(app): AppState, headers: HeaderMap) -> Response {
    match begin(&app, &headers).await {
        Ok((Principal::User { name, approver }, _)) => Json(Me { name, approver }).into_response(),
        Ok(_) => refuse_json(StatusCode::UNAUTHORIZED, "not a user's token"),
        Err(r) => r,
    }
}

/// A reading's refusal: the database's error as a 500.
pub(super) fn failed(e: anyhow::Error) -> Response {
    refuse_json(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}"))
}

/// A listing as the command prints it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TextAnswer {
    pub text: String,
}

/// The newest runs as `runner status` prints them. Open to whoever may read the pages
/// (`--private`: a user's token).
#[utoipa::path(
    get, path = "/api/v1/status", tag = "people",
    responses((status = 200, description = "The text", body = TextAnswer), PeopleReadRefusals),
    security((), ("user_token" = [])),
)]
pub async fn status_all(State(app): AppState) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    match crate::fleet::status::status(&db, None).await {
        Ok(text) => Json(TextAnswer { text }).into_response(),
        Err(e) => failed(e),
    }
}

/// A run's state and the text `runner status RUN` prints.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStatus {
    pub run: i64,
    /// The run's state (`runs.state`).
    pub state: String,
    pub text: String,
}

/// One run as `runner status RUN` prints it, with every engine as workers run it (what an
/// approver approves). Open to whoever may read the pages (`--private`: a user's token).
#[utoipa::path(
    get, path = "/api/v1/runs/{id}/status", tag = "people",
    params(("id" = i64, Path, description = "The fleet run's id")),
    responses(
        (status = 200, description = "The run", body = RunStatus),
        (status = 404, description = "No such run", body = RefusalBody),
        PeopleReadRefusals,
    ),
    security((), ("user_token" = [])),
)]
pub async fn run_status(State(app): AppState, Path(id): Path<i64>) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    let row = match crate::fleet::queue::run(&db, id).await {
        Ok(Some(row)) => row,
        Ok(None) => {
            return refuse_json(StatusCode::NOT_FOUND, &format!("no run {id} in the database"));
        }
        Err(e) => return failed(e),
    };
    match crate::fleet::status::status(&db, Some(id)).await {
        Ok(text) => Json(RunStatus { run: id, state: row.state, text }).into_response(),
        Err(e) => failed(e),
    }
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WorkersQuery {
    /// Every worker that ever registered (default: those alive, and those seen in the last
    /// hour or lost within a day).
    #[serde(default)]
    #[param(default = false)]
    pub all: bool,
}

/// The workers as `runner workers` lists them. Open to whoever may read the pages
/// (`--private`: a user's token).
#[utoipa::path(
    get, path = "/api/v1/workers", tag = "people",
    params(WorkersQuery),
    responses((status = 200, description = "The text", body = TextAnswer), PeopleReadRefusals),
    security((), ("user_token" = [])),
)]
pub async fn workers(State(app): AppState, Query(q): Query<WorkersQuery>) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    match crate::fleet::workers::list(&db, q.all).await {
        Ok(text) => Json(TextAnswer { text }).into_response(),
        Err(e) => failed(e),
    }
}
