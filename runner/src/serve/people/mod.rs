//! The people's side of the server: who asks (an API token in `Authorization: Bearer`, or a web
//! session cookie), their JSON API ([`api`]: approve, cancel, modify, purge, delete, worker
//! keys, the audit log), and the page's front door ([`web`]: `/login`, `/logout`, the run
//! page's actions, the audit page). Every change is a POST that goes through
//! [`crate::fleet::rights`] and [`crate::fleet::queue::people`]; a form also carries its
//! session's CSRF token. With `--private`, reading needs a login too ([`guard`]).

pub mod api;
pub mod limit;
pub mod submit;
pub mod web;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::fleet::credentials::{TOKEN_PREFIX, plausible, secret_hash};
use crate::fleet::queue::users::{self, UserRow};
use crate::fleet::rights::Principal;

use super::App;
use super::openapi::{ApiRoute, add_routes, route};

/// What the people's side was told (`runner serve --private --public-url --trusted-proxy`).
#[derive(Debug, Default)]
pub struct Settings {
    /// Reading needs a login too.
    pub private: bool,
    /// Cookies carry `Secure` (served over TLS, or behind `--public-url https://...`).
    pub secure_cookies: bool,
    /// Peers whose `X-Forwarded-For` names the client (a reverse proxy in front).
    pub trusted_proxies: Vec<IpAddr>,
    /// Login attempts per client address.
    pub limiter: limit::LoginLimiter,
}

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "runner_session";
/// How long a web session lasts.
pub const SESSION_SECS: f64 = 12.0 * 3600.0;
/// Largest body a people's request may send.
pub const BODY_LIMIT: usize = 16 * 1024;
/// Largest submission (`POST /api/v1/runs`): the plan with its openings.
pub const SUBMIT_LIMIT: usize = 16 << 20;

/// Who asks, as far as the server knows.
#[derive(Clone, Debug)]
pub struct Caller {
    pub who: Principal,
    /// The web session's CSRF token, when the caller came with a session cookie.
    pub csrf: Option<String>,
}

impl Caller {
    fn anonymous() -> Caller {
        Caller { who: Principal::Anonymous, csrf: None }
    }

    fn user(u: UserRow, csrf: Option<String>) -> Caller {
        Caller { who: Principal::User { name: u.name, approver: u.approver }, csrf }
    }
}

/// A request refused before any handler ran: a status and a one-line reason.
pub fn refuse_json(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(api::RefusalBody { error: message.to_string() })).into_response()
}

/// The bearer token of `headers`, if any (`Some(Err)`: an Authorization header of another kind).
fn bearer(headers: &HeaderMap) -> Option<Result<&str, ()>> {
    let v = headers.get(header::AUTHORIZATION)?;
    Some(v.to_str().ok().and_then(|s| s.strip_prefix("Bearer ")).map(str::trim).ok_or(()))
}

/// The caller of an API request: its bearer token's user, else anonymous. A token that is
/// malformed, unknown, revoked or of a disabled user is refused (401), never taken as anonymous.
pub async fn api_caller(app: &App, headers: &HeaderMap) -> Result<Caller, Response> {
    let Some(token) = bearer(headers) else { return Ok(Caller::anonymous()) };
    let refused = || {
        refuse_json(
            StatusCode::UNAUTHORIZED,
            "the token is not valid (unknown, revoked, or its user is disabled)",
        )
    };
    let Ok(token) = token else { return Err(refused()) };
    if let Err(e) = crate::fleet::credentials::check_kind(token, false) {
        return Err(refuse_json(StatusCode::UNAUTHORIZED, &e.to_string()));
    }
    if !plausible(token, TOKEN_PREFIX) {
        return Err(refused());
    }
    let db = client(app).await?;
    match users::by_token(&db, &secret_hash(token)).await {
        Ok(Some(u)) => Ok(Caller::user(u, None)),
        Ok(None) => Err(refused()),
        Err(e) => Err(refuse_json(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}"))),
    }
}

/// The value of cookie `name` in `headers`.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The caller of a page: its session cookie's user (with the session's CSRF token), else
/// anonymous (an unknown or expired session is anonymous).
pub async fn page_caller(app: &App, headers: &HeaderMap) -> Caller {
    let Some(id) = cookie(headers, SESSION_COOKIE).filter(|id| plausible(id, "")) else {
        return Caller::anonymous();
    };
    let Ok(db) = client(app).await else { return Caller::anonymous() };
    match users::session(&db, &secret_hash(id)).await {
        Ok(Some(s)) => Caller::user(s.user, Some(s.csrf)),
        _ => Caller::anonymous(),
    }
}

/// A connection of the server's pool (503 when the server has no database, or none is free
/// soon enough).
pub async fn client(app: &App) -> Result<deadpool_postgres::Object, Response> {
    let Some(pool) = &app.pool else {
        return Err(refuse_json(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server has no fleet database (start it with --db)",
        ));
    };
    pool.get().await.map_err(|e| {
        let mut r = refuse_json(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("no database connection free: {e}"),
        );
        r.headers_mut().insert(header::RETRY_AFTER, axum::http::HeaderValue::from_static("1"));
        r
    })
}

/// The client's address: the peer's, or behind a trusted proxy the last address of
/// `X-Forwarded-For` that is not a trusted proxy itself.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    hops.into_iter().rev().find(|a| !trusted.contains(a)).unwrap_or(peer)
}

/// The peer address of a request (from the server's connection info; unspecified without).
pub fn peer(info: Option<&ConnectInfo<SocketAddr>>) -> IpAddr {
    info.map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.ip())
}

/// `--private`: a request without a login gets `/login` (pages) or 401 (the API), except the
/// login itself, the worker API (which has its own keys) and the API's document (which says
/// nothing of the fleet).
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    if !app.people.private {
        return next.run(req).await;
    }
    let path = req.uri().path();
    if path == "/login"
        || path == "/logout"
        || path == super::openapi::DOCUMENT_PATH
        || path.starts_with("/api/v1/worker/")
    {
        return next.run(req).await;
    }
    let api = path.starts_with("/api/");
    let caller = if bearer(req.headers()).is_some() {
        match api_caller(&app, req.headers()).await {
            Ok(c) => c,
            Err(r) => return r,
        }
    } else {
        page_caller(&app, req.headers()).await
    };
    if caller.who != Principal::Anonymous {
        return next.run(req).await;
    }
    if api {
        refuse_json(StatusCode::UNAUTHORIZED, "this server is private: send a user's token")
    } else {
        Redirect::to("/login").into_response()
    }
}

/// The people's JSON API: the router registers these, and the API's document is checked
/// against them (`serve::openapi`'s tests). A new route goes here, never as a `.route(...)` of
/// its own, with `#[utoipa::path(...)]` on its handler (see [`api::approve`]: the method, the
/// whole path, params, body, answers with `PeopleChangeRefusals` or `PeopleReadRefusals`, the
/// security) and the handler's name in `paths(...)` of `serve::openapi::ApiDoc`; the test
/// `every_api_route_is_documented` names a route left out.
pub fn api_table() -> Vec<ApiRoute> {
    use Method as M;
    vec![
        route(M::POST, "/api/v1/runs/{id}/approve", api::approve),
        route(M::POST, "/api/v1/runs/{id}/cancel", api::cancel),
        route(M::POST, "/api/v1/runs/{id}/modify", api::modify),
        route(M::POST, "/api/v1/runs/{id}/purge", api::purge),
        route(M::POST, "/api/v1/runs/{id}/delete", api::delete),
        route(M::POST, "/api/v1/runs/{id}/pulled", api::pulled),
        route(M::GET, "/api/v1/worker-keys", api::keys),
        route(M::POST, "/api/v1/worker-keys", api::key_add),
        route(M::POST, "/api/v1/worker-keys/{name}/revoke", api::key_revoke),
        route(M::GET, "/api/v1/audit", api::audit),
        route(M::GET, "/api/v1/me", api::me),
        route(M::GET, "/api/v1/status", api::status_all),
        route(M::GET, "/api/v1/runs/{id}/status", api::run_status),
        route(M::GET, "/api/v1/workers", api::workers),
        route(M::GET, "/api/v1/artifacts/{sha}", submit::artifact),
        limited(
            route(M::PUT, "/api/v1/artifacts/{sha}/chunks/{n}", submit::put_chunk),
            crate::fleet::artifacts::CHUNK_SIZE + 4096,
        ),
        route(M::POST, "/api/v1/artifacts/{sha}/seal", submit::seal),
        route(M::POST, "/api/v1/artifacts/gc", submit::gc),
        limited(route(M::POST, "/api/v1/runs", submit::submit_run), SUBMIT_LIMIT),
        route(M::GET, "/api/v1/runs/{id}/pull", submit::pull),
    ]
}

/// `r` taking bodies of up to `max` bytes (artifacts' chunks, submissions with their openings).
fn limited(mut r: ApiRoute, max: usize) -> ApiRoute {
    r.handler = r.handler.layer(DefaultBodyLimit::max(max));
    r
}

/// Adds the people's routes and the `--private` guard to `router`.
pub fn mount(router: Router<Arc<App>>, app: &Arc<App>) -> Router<Arc<App>> {
    let people = add_routes(Router::new(), api_table())
        .route("/login", get(web::login_form).post(web::login))
        .route("/logout", post(web::logout))
        .route("/run/{id}/act/{action}", post(web::act))
        .route("/audit", get(web::audit_page))
        .layer(axum::middleware::from_fn_with_state(app.clone(), list_after_change))
        .layer(DefaultBodyLimit::max(BODY_LIMIT));
    router.merge(people).layer(axum::middleware::from_fn_with_state(app.clone(), guard))
}

/// A change made through the server (a POST that succeeded; a login or logout is none) has the
/// next list made at once, so that the list shows it as soon as that list is made
/// ([`App::list_changed`]); the change's answer does not wait for it.
async fn list_after_change(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let change = req.method() == axum::http::Method::POST
        && !matches!(req.uri().path(), "/login" | "/logout");
    let res = next.run(req).await;
    if change && (res.status().is_success() || res.status().is_redirection()) {
        app.list_changed();
    }
    res
}

/// A page's answer to a refused or failed change: the status and the reason, on a page.
pub fn refuse_page(status: u16, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let title = code.canonical_reason().unwrap_or("error");
    (code, super::pages::error_page(title, message)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_address_comes_from_a_trusted_proxy_only() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let client: IpAddr = "203.0.113.7".parse().unwrap();
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", "198.51.100.1, 203.0.113.7".parse().unwrap());
        // An untrusted peer's header is ignored: the peer is the client.
        assert_eq!(client_addr(client, &h, &[proxy]), client);
        // Behind the proxy: the last hop the proxy saw, not what the client wrote first.
        assert_eq!(client_addr(proxy, &h, &[proxy]), client);
        // Two trusted proxies in a row are skipped.
        let second: IpAddr = "10.0.0.2".parse().unwrap();
        h.insert("x-forwarded-for", "203.0.113.7, 10.0.0.2".parse().unwrap());
        assert_eq!(client_addr(proxy, &h, &[proxy, second]), client);
        // No header behind the proxy: the proxy.
        assert_eq!(client_addr(proxy, &HeaderMap::new(), &[proxy]), proxy);
    }

    #[test]
    fn cookies_are_found_by_name() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=1; runner_session=abc; b=2".parse().unwrap());
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("abc"));
        assert_eq!(cookie(&h, "b"), Some("2"));
        assert_eq!(cookie(&h, "c"), None);
    }
}
