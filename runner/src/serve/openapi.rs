//! The API's OpenAPI 3.1 document, served at `GET /api/openapi.json`: made by utoipa from the
//! handlers' own types (each request, answer and query type derives `ToSchema` or
//! `IntoParams`, each handler carries `#[utoipa::path]`), built once and kept.
//!
//! Every route under `/api/` is registered from one of three tables of [`ApiRoute`]s, which
//! the tests below hold against the document: [`crate::serve::api_table`] (the run list's JSON
//! and this document), [`crate::serve::people::api_table`] (the people's API) and
//! [`crate::serve::api::worker::table`] (the worker API). To add a route: put it in its table,
//! put `#[utoipa::path(...)]` on its handler, and name the handler in `paths(...)` of
//! [`ApiDoc`] below; `every_api_route_is_documented` names a route or a path left out, and
//! `no_api_route_bypasses_the_tables` a `.route("/api/...")` written outside the tables.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::handler::Handler;
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoResponses, Modify, OpenApi};

use super::App;
use super::people::api::RefusalBody;
use crate::fleet::api::{self as wire, ErrorBody};

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/openapi.json";

/// One route of the JSON API: the router registers it ([`add_routes`]) and the tests hold the
/// document against it.
pub struct ApiRoute {
    pub method: Method,
    /// As the router takes it (the worker API's relative to [`wire::PREFIX`]).
    pub path: &'static str,
    /// A route's own layer (a larger body limit) goes on it: `r.handler = r.handler.layer(..)`.
    pub handler: MethodRouter<Arc<App>>,
}

/// The route of `handler` for `method` at `path`.
pub fn route<H, T>(method: Method, path: &'static str, handler: H) -> ApiRoute
where
    H: Handler<T, Arc<App>>,
    T: 'static,
{
    // Every method the tables use (GET, POST) is one axum routes; GET also answers HEAD.
    let filter = MethodFilter::try_from(method.clone())
        .unwrap_or_else(|_| panic!("{method} {path}: a method axum does not route"));
    ApiRoute { method, path, handler: axum::routing::on(filter, handler) }
}

/// `router` with `routes` added (two methods of one path are merged into one route).
pub fn add_routes(router: Router<Arc<App>>, routes: Vec<ApiRoute>) -> Router<Arc<App>> {
    routes.into_iter().fold(router, |r, x| r.route(x.path, x.handler))
}

/// Every method and whole path the server routes under `/api/`, from the tables the router
/// registers.
pub fn routed() -> Vec<(Method, String)> {
    let worker = super::api::worker::table()
        .into_iter()
        .map(|r| (r.method, format!("{}{}", wire::PREFIX, r.path)));
    let rest = super::people::api_table()
        .into_iter()
        .chain(super::api_table())
        .map(|r| (r.method, r.path.to_string()));
    worker.chain(rest).collect()
}

/// The refusals of the worker API: [`ErrorBody`] (its `code` says which) with the
/// `x-runner-api` header, which a proxy's error page lacks.
#[derive(IntoResponses)]
#[allow(dead_code, reason = "the document's types only: the handlers answer an ApiError")]
pub enum WorkerRefusals {
    #[response(
        status = 401,
        description = "unauthorized: no valid key, or no valid worker id and secret (revoked, stopped, wrong)",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    Unauthorized(ErrorBody),
    #[response(
        status = 403,
        description = "forbidden: the key may not do this",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    Forbidden(ErrorBody),
    #[response(
        status = 404,
        description = "not_found: no such run, pair or artifact, or the server has no fleet database",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    NotFound(ErrorBody),
    #[response(
        status = 409,
        description = "conflict: the state stored refuses it (a run not active, a pair not this lease's)",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    Conflict(ErrorBody),
    #[response(
        status = 413,
        description = "too_large: the body is over 4 MiB",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    TooLarge(ErrorBody),
    #[response(
        status = 422,
        description = "invalid: the body does not parse (a missing or unknown field, a wrong type) or breaks its bounds; the message names the field",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    Invalid(ErrorBody),
    #[response(
        status = 500,
        description = "internal: the server failed",
        headers(("x-runner-api" = String, description = "1: the answer is the API's"))
    )]
    Internal(ErrorBody),
    #[response(
        status = 503,
        description = "unavailable: the server or its database is busy or away (over 512 requests at once, one over 30 s, every connection taken); try again after Retry-After",
        headers(
            ("x-runner-api" = String, description = "1: the answer is the API's"),
            ("retry-after" = u32, description = "Seconds to wait")
        )
    )]
    Unavailable(ErrorBody),
}

/// The refusals of the people's API's calls that need a token: `{"error": "..."}`.
#[derive(IntoResponses)]
#[allow(dead_code, reason = "the document's types only: the handlers answer a RefusalBody")]
pub enum PeopleChangeRefusals {
    #[response(
        status = 400,
        description = "A value out of its limits, or nothing to change (a path or body that does not parse is refused in plain text: 400, 415 or 422)"
    )]
    Invalid(RefusalBody),
    #[response(
        status = 401,
        description = "No token, or a token that is not valid (unknown, revoked, a disabled user's, a worker key)"
    )]
    Unauthorized(RefusalBody),
    #[response(
        status = 403,
        description = "Not allowed: an approver's action, or another owner's run"
    )]
    Forbidden(RefusalBody),
    #[response(status = 404, description = "No such run or worker key")]
    NotFound(RefusalBody),
    #[response(
        status = 409,
        description = "The run's state refuses it (delete an open run, take back a tuning run's results)"
    )]
    Conflict(RefusalBody),
    #[response(status = 500, description = "The server or its database failed")]
    Failed(RefusalBody),
    #[response(
        status = 503,
        description = "The server has no fleet database, or no connection is free (Retry-After)"
    )]
    Unavailable(RefusalBody),
}

/// The refusals of the people's API's readings: `{"error": "..."}`.
#[derive(IntoResponses)]
#[allow(dead_code, reason = "the document's types only: the handlers answer a RefusalBody")]
pub enum PeopleReadRefusals {
    #[response(
        status = 401,
        description = "A token that is not valid, or none where one is needed (`/api/v1/me`, a --private server)"
    )]
    Unauthorized(RefusalBody),
    #[response(status = 500, description = "The server or its database failed")]
    Failed(RefusalBody),
    #[response(
        status = 503,
        description = "The server has no fleet database, or no connection is free (Retry-After)"
    )]
    Unavailable(RefusalBody),
}

/// How each side authenticates.
struct Security;

impl Modify for Security {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let bearer = |what: &str| {
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(what)).build(),
            )
        };
        let c = doc.components.get_or_insert_with(Default::default);
        c.add_security_scheme(
            "user_token",
            bearer(
                "A user's API token (rt_...), printed once by `runner user add NAME` or \
                 `runner user token NAME`",
            ),
        );
        c.add_security_scheme(
            "worker_key",
            bearer("A worker key (fk_...), from `runner worker-key add NAME`: /register only"),
        );
        c.add_security_scheme(
            "worker_secret",
            bearer("The secret /register answered: this worker process's own, with worker_id"),
        );
        c.add_security_scheme(
            "worker_id",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                wire::WORKER_HEADER,
                "The worker id /register answered, with worker_secret",
            ))),
        );
    }
}

/// The API's document: every route of the three tables.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "runner serve",
        description = "The JSON API of `runner serve --db URL`: the worker API (workers \
            register with a worker key, then claim, play and report pairs), the people's API \
            (a user's token approves, cancels, modifies, purges, deletes runs and manages \
            worker keys) and the run list. See docs/fleet.md, \"Scripting against the API\"."
    ),
    paths(
        document_json,
        super::handlers::api_runs,
        super::handlers::api_run,
        super::people::api::approve,
        super::people::api::cancel,
        super::people::api::modify,
        super::people::api::purge,
        super::people::api::delete,
        super::people::api::pulled,
        super::people::api::keys,
        super::people::api::key_add,
        super::people::api::key_revoke,
        super::people::api::audit,
        super::people::api::me,
        super::people::api::status_all,
        super::people::api::run_status,
        super::people::api::workers,
        super::people::submit::artifact,
        super::people::submit::put_chunk,
        super::people::submit::seal,
        super::people::submit::gc,
        super::people::submit::submit_run,
        super::people::submit::pull,
        super::api::worker::version,
        super::api::worker::register,
        super::api::worker::stopped,
        super::api::worker::claim,
        super::api::worker::heartbeat,
        super::api::worker::release,
        super::api::worker::refuse,
        super::api::worker::incident,
        super::api::worker::report,
        super::api::worker::settle,
        super::api::worker::iteration,
        super::api::worker::engine_loaded,
        super::api::worker::outstanding,
        super::api::worker::run,
        super::api::worker::artifacts,
        super::api::worker::chunk,
    ),
    components(schemas(ErrorBody, wire::Code, RefusalBody)),
    modifiers(&Security),
    tags(
        (name = "worker", description = "The worker API, /api/v1/worker/...: `runner worker \
            --server URL`'s calls. /register takes a worker key as the bearer token; every \
            later call the worker id (x-runner-worker) and its secret (the bearer token), and \
            the worker protocol (x-runner-worker-version). Every answer carries \
            x-runner-api: 1; a refusal is an ErrorBody with a typed code."),
        (name = "people", description = "The people's API, /api/v1/...: what `runner approve`, \
            `cancel`, `modify`, `purge`, `delete`, `worker-key`, `status` and `workers` do with \
            --server URL. A change takes a user's token; a refusal is {\"error\": \"...\"}."),
        (name = "runs", description = "The run list's JSON: every run the server shows, from \
            its run folders and the fleet's database."),
        (name = "document", description = "This document."),
    )
)]
pub struct ApiDoc;

/// The document as JSON, made at its first use.
pub fn document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        // Serializing a document of strings, numbers and maps cannot fail.
        ApiDoc::openapi().to_json().unwrap_or_else(|e| panic!("the API's document: {e}"))
    })
}

/// This OpenAPI 3.1 document (public, also with `--private`: it says nothing of the fleet).
#[utoipa::path(
    get, path = "/api/openapi.json", tag = "document",
    responses((status = 200, description = "The OpenAPI document", body = Object)),
)]
pub async fn document_json() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], document()).into_response()
}

#[cfg(test)]
mod tests;
