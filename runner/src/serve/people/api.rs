//! The people's JSON API under `/api/v1/`: a user's bearer token (`Authorization: Bearer
//! rt_...`) says who asks; bodies are typed and bounded (unknown fields refused, names and
//! texts checked by [`crate::fleet::bounded`], numbers by the operations' limits). A refusal
//! is `{"error": "..."}` with 401 (no valid token), 403 (not allowed), 404, 400, 409 (the run's
//! state refuses it) or 5xx. A cookie never authenticates a change here: only a token does, so
//! no other site can make a browser send one.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::fleet::bounded::Name;
use crate::fleet::queue::people::{self, PeopleError};
use crate::fleet::queue::share::Change;
use crate::fleet::rights::Principal;

use super::{App, api_caller, client, refuse_json};

type AppState = State<Arc<App>>;

pub(super) fn answer(r: Result<Value, PeopleError>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => refuse_json(
            StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &e.to_string(),
        ),
    }
}

/// The caller (by token) and a connection, or the refusal to send.
pub(super) async fn begin(
    app: &App,
    headers: &HeaderMap,
) -> Result<(Principal, deadpool_postgres::Object), Response> {
    let caller = api_caller(app, headers).await?;
    if caller.who == Principal::Anonymous {
        return Err(refuse_json(
            StatusCode::UNAUTHORIZED,
            "send a user's token: Authorization: Bearer rt_... (runner user add prints one)",
        ));
    }
    Ok((caller.who, client(app).await?))
}

/// `POST /api/v1/runs/{id}/approve` (approvers): `{"run", "was", "state"}`.
pub async fn approve(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::approve(&mut db, &who, id).await.map(|was| {
        let now =
            if was == crate::fleet::rights::RunState::Pending { "active" } else { was.as_str() };
        json!({ "run": id, "was": was, "state": now })
    }))
}

/// `POST /api/v1/runs/{id}/cancel` (owner or approver): `{"run", "was", "state"}`.
pub async fn cancel(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::cancel(&mut db, &who, id).await.map(|was| {
        let now = if was.is_open() { "cancelled" } else { was.as_str() };
        json!({ "run": id, "was": was, "state": now })
    }))
}

/// What `modify` may change (at least one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModifyBody {
    pub priority: Option<i32>,
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

/// `POST /api/v1/runs/{id}/modify` `{"priority"?, "throughput"?, "games"?}` (owner or
/// approver; a priority above 0 needs an approver).
pub async fn modify(
    State(app): AppState,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Json(body): Json<ModifyBody>,
) -> Response {
    let change = match body.change() {
        Ok(c) => c,
        Err(e) => return answer(Err(e)),
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::modify(&mut db, &who, id, change).await.map(|m| {
        json!({
            "run": id, "state": m.state, "priority": m.share.priority,
            "throughput": m.share.throughput, "skipped": m.skipped, "reopened": m.reopened,
        })
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PurgeBody {
    /// The worker key whose pairs are taken back.
    pub worker: Name,
}

/// `POST /api/v1/runs/{id}/purge` `{"worker": KEY}` (owner or approver).
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
    answer(
        people::purge(&mut db, &who, id, &body.worker)
            .await
            .map(|(n, s)| json!({ "run": id, "pairs": n, "state": s.state })),
    )
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteBody {
    #[serde(default)]
    pub force: bool,
}

/// `POST /api/v1/runs/{id}/delete` `{"force"?}` (owner or approver; a finished run).
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
    answer(people::delete(&mut db, &who, id, force).await.map(|n| json!({ "run": id, "games": n })))
}

/// `POST /api/v1/runs/{id}/pulled` (owner or approver): the run was written to a folder.
pub async fn pulled(State(app): AppState, headers: HeaderMap, Path(id): Path<i64>) -> Response {
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::pulled(&mut db, &who, id).await.map(|()| json!({ "run": id })))
}

/// `GET /api/v1/worker-keys` (approvers): every key, never a key itself.
pub async fn keys(State(app): AppState, headers: HeaderMap) -> Response {
    let (who, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(people::keys(&db, &who).await.map(|ks| {
        let list: Vec<Value> = ks
            .iter()
            .map(|k| {
                json!({
                    "name": k.name, "created_by": k.created_by, "created": k.created,
                    "revoked": k.revoked, "workers": k.workers, "pairs": k.pairs,
                })
            })
            .collect();
        json!({ "keys": list })
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyBody {
    pub name: Name,
}

/// `POST /api/v1/worker-keys` `{"name"}` (approvers): `{"name", "key"}`, the key shown once.
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
            .map(|key| json!({ "name": body.name, "key": key })),
    )
}

/// `POST /api/v1/worker-keys/{name}/revoke` (approvers): `{"name", "pairs"}` given back.
pub async fn key_revoke(
    State(app): AppState,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let name = match Name::new(&name) {
        Ok(n) => n,
        Err(e) => return answer(Err(PeopleError::Invalid(e))),
    };
    let (who, mut db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(
        people::key_revoke(&mut db, &who, &name).await.map(|n| json!({ "name": name, "pairs": n })),
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    #[serde(default = "default_limit")]
    pub limit: i64,
    pub before: Option<i64>,
}

fn default_limit() -> i64 {
    100
}

/// `GET /api/v1/audit?limit=N&before=ID` (approvers): the newest entries first.
pub async fn audit(
    State(app): AppState,
    headers: HeaderMap,
    Query(q): Query<AuditQuery>,
) -> Response {
    let (who, db) = match begin(&app, &headers).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    answer(
        people::audit_log(&db, &who, q.limit, q.before).await.map(|rows| json!({ "audit": rows })),
    )
}

/// `GET /api/v1/me`: who the token belongs to.
pub async fn me(State(app): AppState, headers: HeaderMap) -> Response {
    match begin(&app, &headers).await {
        Ok((Principal::User { name, approver }, _)) => {
            Json(json!({ "name": name, "approver": approver })).into_response()
        }
        Ok(_) => refuse_json(StatusCode::UNAUTHORIZED, "not a user's token"),
        Err(r) => r,
    }
}

/// A reading's refusal: the database's error as a 500.
pub(super) fn failed(e: anyhow::Error) -> Response {
    refuse_json(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}"))
}

/// `GET /api/v1/status`: `{"text"}`, the newest runs as `runner status` prints them. Reading
/// is open to whoever may read the pages (`--private`: a user's token).
pub async fn status_all(State(app): AppState) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    match crate::fleet::status::status(&db, None).await {
        Ok(text) => Json(json!({ "text": text })).into_response(),
        Err(e) => failed(e),
    }
}

/// `GET /api/v1/runs/{id}/status`: `{"run", "state", "text"}`, the text `runner status RUN`
/// prints, with every engine as workers run it (what an approver approves).
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
        Ok(text) => Json(json!({ "run": id, "state": row.state, "text": text })).into_response(),
        Err(e) => failed(e),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkersQuery {
    #[serde(default)]
    pub all: bool,
}

/// `GET /api/v1/workers?all=BOOL`: `{"text"}`, the workers as `runner workers` lists them.
pub async fn workers(State(app): AppState, Query(q): Query<WorkersQuery>) -> Response {
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    match crate::fleet::workers::list(&db, q.all).await {
        Ok(text) => Json(json!({ "text": text })).into_response(),
        Err(e) => failed(e),
    }
}
