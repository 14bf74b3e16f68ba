//! The page's front door: `/login` (a form posting `username` and `password`, with a CSRF token
//! kept in a short cookie until the session exists), `/logout`, the run page's actions section
//! (approve, cancel, modify, purge, for whoever may), each a form posting to
//! `/run/ID/act/ACTION` with the session's CSRF token, and the audit page for approvers. All
//! markup is maud's (every value escaped by the template).

use std::sync::Arc;
use std::time::Instant;

use axum::Form;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use crate::fleet::bounded::Name;
use crate::fleet::credentials::{
    PASSWORD_MAX, new_secret, plausible, same_secret, secret_hash, verify_password,
};
use crate::fleet::queue::people::{self, AuditAction, PeopleError};
use crate::fleet::queue::share::Change;
use crate::fleet::queue::users;
use crate::fleet::rights::{self, Action, Principal, RunState};

use super::super::{fleet_id, pages};
use super::{
    App, Caller, SESSION_COOKIE, SESSION_SECS, client, client_addr, cookie, page_caller, peer,
    refuse_page,
};

type AppState = State<Arc<App>>;

/// The cookie that carries the login form's CSRF token until a session exists.
const LOGIN_COOKIE: &str = "runner_login";

fn set_cookie(app: &App, name: &str, value: &str, max_age: u64) -> HeaderValue {
    let secure = if app.people.secure_cookies { "; Secure" } else { "" };
    let v = format!("{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}");
    HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static("x=; Max-Age=0"))
}

fn login_page(csrf: &str, note: Option<&str>) -> Markup {
    pages::layout(
        "Log in",
        None,
        html! {
            @if let Some(n) = note { p.note { (n) } }
            form #login method="post" action="/login" {
                input type="hidden" name="csrf" value=(csrf);
                p { label { "User " input type="text" name="username" autocomplete="username" maxlength="64" required; } }
                p { label { "Password " input type="password" name="password" autocomplete="current-password" maxlength="1024" required; } }
                p { button type="submit" { "Log in" } }
            }
        },
    )
}

/// `GET /login`: the form, with a fresh CSRF token in a cookie and in the form.
pub async fn login_form(State(app): AppState) -> Response {
    let Ok(csrf) = new_secret() else {
        return refuse_page(500, "no randomness for the login form");
    };
    let mut res = login_page(&csrf, None).into_response();
    res.headers_mut().insert(header::SET_COOKIE, set_cookie(&app, LOGIN_COOKIE, &csrf, 3600));
    res
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    username: String,
    password: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /login`: rate-limited per client address; on success a session cookie and `/`.
pub async fn login(
    State(app): AppState,
    info: Option<axum::Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    Form(f): Form<LoginForm>,
) -> Response {
    let addr = client_addr(peer(info.as_deref()), &headers, &app.people.trusted_proxies);
    if let Err(wait) = app.people.limiter.attempt(addr, Instant::now()) {
        let mut r = refuse_page(429, &format!("Too many login attempts: try again in {wait} s."));
        if let Ok(v) = HeaderValue::from_str(&wait.to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return r;
    }
    let form_ok =
        cookie(&headers, LOGIN_COOKIE).is_some_and(|c| plausible(c, "") && same_secret(c, &f.csrf));
    if !form_ok {
        return refuse_page(
            403,
            "The login form is stale or was not sent from this site: reload /login.",
        );
    }
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    let found = if Name::new(&f.username).is_ok() && f.password.len() <= PASSWORD_MAX {
        match users::password_of(&db, &f.username).await {
            Ok(x) => x,
            Err(e) => return refuse_page(500, &format!("{e:#}")),
        }
    } else {
        None
    };
    let password = f.password;
    let user = tokio::task::spawn_blocking(move || {
        found.filter(|(_, hash)| verify_password(&password, hash)).map(|(u, _)| u)
    })
    .await
    .ok()
    .flatten();
    let Some(user) = user else {
        let csrf = new_secret().unwrap_or_default();
        let mut r = (StatusCode::UNAUTHORIZED, login_page(&csrf, Some("Wrong user or password.")))
            .into_response();
        r.headers_mut().insert(header::SET_COOKIE, set_cookie(&app, LOGIN_COOKIE, &csrf, 3600));
        return r;
    };
    let (Ok(id), Ok(csrf)) = (new_secret(), new_secret()) else {
        return refuse_page(500, "no randomness for the session");
    };
    if let Err(e) = users::session_add(&db, user.id, &secret_hash(&id), &csrf, SESSION_SECS).await {
        return refuse_page(500, &format!("{e:#}"));
    }
    let _ =
        people::audit(&**db, &user.name, AuditAction::Login, None, None, &addr.to_string()).await;
    let mut r = Redirect::to("/").into_response();
    let h = r.headers_mut();
    h.append(header::SET_COOKIE, set_cookie(&app, SESSION_COOKIE, &id, SESSION_SECS as u64));
    h.append(header::SET_COOKIE, set_cookie(&app, LOGIN_COOKIE, "", 0));
    r
}

#[derive(Debug, Default, Deserialize)]
pub struct ActForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    throughput: String,
    #[serde(default)]
    games: String,
    #[serde(default)]
    worker: String,
}

/// The session's caller when the form's CSRF token is the session's, else the refusal.
async fn form_caller(app: &App, headers: &HeaderMap, csrf: &str) -> Result<Caller, Response> {
    let caller = page_caller(app, headers).await;
    if caller.who == Principal::Anonymous {
        return Err(refuse_page(401, "Log in first (/login)."));
    }
    if !caller.csrf.as_deref().is_some_and(|c| same_secret(c, csrf)) {
        return Err(refuse_page(403, "The form's token is not this session's: reload the page."));
    }
    Ok(caller)
}

/// `POST /logout`: the session ends.
pub async fn logout(State(app): AppState, headers: HeaderMap, Form(f): Form<ActForm>) -> Response {
    if let Err(r) = form_caller(&app, &headers, &f.csrf).await {
        return r;
    }
    if let (Some(id), Ok(db)) = (cookie(&headers, SESSION_COOKIE), client(&app).await) {
        let _ = users::session_end(&db, &secret_hash(id)).await;
    }
    let mut r = Redirect::to("/").into_response();
    r.headers_mut().insert(header::SET_COOKIE, set_cookie(&app, SESSION_COOKIE, "", 0));
    r
}

fn number(field: &str, s: &str) -> Result<Option<i32>, PeopleError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse().map(Some).map_err(|_| PeopleError::Invalid(format!("{field}: not a whole number")))
}

/// `POST /run/ID/act/ACTION` (approve, cancel, modify, purge): a run page's form.
pub async fn act(
    State(app): AppState,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
    Form(f): Form<ActForm>,
) -> Response {
    let caller = match form_caller(&app, &headers, &f.csrf).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Some(run) = fleet_id(&id) else { return refuse_page(404, "Not a fleet run.") };
    let mut db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    let who = &caller.who;
    let done: Result<(), PeopleError> = match action.as_str() {
        "approve" => people::approve(&mut db, who, run).await.map(drop),
        "cancel" => people::cancel(&mut db, who, run).await.map(drop),
        "modify" => {
            async {
                let games = number("games", &f.games)?;
                let change = Change {
                    priority: number("priority", &f.priority)?,
                    throughput: number("throughput", &f.throughput)?,
                    pairs: games.map(|g| (g.max(0) + 1) / 2),
                };
                if change == Change::default() {
                    return Err(PeopleError::Invalid("nothing to change".into()));
                }
                people::modify(&mut db, who, run, change).await.map(drop)
            }
            .await
        }
        "purge" => match Name::new(f.worker.trim()) {
            Ok(key) => people::purge(&mut db, who, run, &key).await.map(drop),
            Err(e) => Err(PeopleError::Invalid(e)),
        },
        _ => return refuse_page(404, "No such action."),
    };
    match done {
        Ok(()) => Redirect::to(&format!("/run/{}", pages::url_escape(&id))).into_response(),
        Err(e) => refuse_page(e.status(), &e.to_string()),
    }
}

/// The run page's actions section for the viewer of `headers` (None: not a fleet run, or no
/// database): a login link for anonymous viewers, else the forms the viewer's rights allow.
pub async fn actions(app: &App, headers: &HeaderMap, id: &str) -> Option<Markup> {
    let run = fleet_id(id)?;
    app.pool.as_ref()?;
    let caller = page_caller(app, headers).await;
    let Principal::User { name, .. } = &caller.who else {
        return Some(html! {
            section #actions {
                p { a href="/login" { "Log in" } " to approve, cancel or change this run." }
            }
        });
    };
    let db = client(app).await.ok()?;
    let facts = people::run_facts(&db, run).await.ok()??;
    let keys = people::run_keys(&db, run).await.unwrap_or_default();
    let csrf = caller.csrf.clone().unwrap_or_default();
    let may = |a: Action| rights::may(&caller.who, a, Some(&facts), false).is_ok();
    let url = |a: &str| format!("/run/{}/act/{a}", pages::url_escape(id));
    let open = facts.state.is_open();
    let modifiable =
        matches!(facts.state, RunState::Pending | RunState::Active | RunState::Complete);
    // What an approver approves: every engine as workers will run it, above the button.
    let approvable = facts.state == RunState::Pending && may(Action::Approve);
    let what_runs = match approvable {
        true => match crate::fleet::queue::run(&db, run).await {
            Ok(Some(row)) => crate::fleet::status::engines_of(&db, &row).await.ok(),
            _ => None,
        },
        false => None,
    };
    Some(html! {
        section #actions {
            h2 { "Actions" }
            p { "Logged in as " strong { (name) } " (run of " (facts.owner) ", " (facts.state.as_str()) ")." }
            @if approvable {
                @if let Some(w) = &what_runs { pre #what-runs { (w) } }
                form #approve method="post" action=(url("approve")) {
                    input type="hidden" name="csrf" value=(csrf);
                    button type="submit" { "Approve" }
                }
            }
            @if open && may(Action::Cancel) {
                form #cancel method="post" action=(url("cancel")) {
                    input type="hidden" name="csrf" value=(csrf);
                    button type="submit" { "Cancel the run" }
                }
            }
            @if modifiable && may(Action::Modify) {
                form #modify method="post" action=(url("modify")) {
                    input type="hidden" name="csrf" value=(csrf);
                    label { "Priority " input type="number" name="priority" min="-1000" max=(if may(Action::RaisePriority) { 1000 } else { 0 }); }
                    " "
                    label { "Throughput " input type="number" name="throughput" min="1" max="1000"; }
                    @if !facts.tune {
                        " "
                        label { "Games " input type="number" name="games" min="2"; }
                    }
                    " "
                    button type="submit" { "Change" }
                }
            }
            @if !keys.is_empty() && may(Action::Purge) {
                form #purge method="post" action=(url("purge")) {
                    input type="hidden" name="csrf" value=(csrf);
                    label { "Take back the pairs of worker key "
                        select name="worker" {
                            @for k in &keys { option value=(k) { (k) } }
                        }
                    }
                    " "
                    button type="submit" { "Purge" }
                }
            }
            form #logout method="post" action="/logout" {
                input type="hidden" name="csrf" value=(csrf);
                button type="submit" { "Log out" }
            }
        }
    })
}

/// `GET /audit`: the audit log's newest 200 entries (approvers).
pub async fn audit_page(State(app): AppState, headers: HeaderMap) -> Response {
    let caller = page_caller(&app, &headers).await;
    if let Err(e) = rights::may(&caller.who, Action::ReadAudit, None, app.people.private) {
        return refuse_page(e.status(), &e.to_string());
    }
    let db = match client(&app).await {
        Ok(db) => db,
        Err(r) => return r,
    };
    let rows = match people::audit_log(&db, &caller.who, 200, None).await {
        Ok(r) => r,
        Err(e) => return refuse_page(e.status(), &e.to_string()),
    };
    pages::layout(
        "Audit log",
        None,
        html! {
            table #audit {
                thead { tr { th { "when (UTC)" } th { "who" } th { "did" } th { "run" } th { "target" } th { "detail" } } }
                tbody {
                    @for r in &rows {
                        tr {
                            td { (r.at) } td { (r.actor) } td { (r.action) }
                            td { @if let Some(n) = r.run { a href=(format!("/run/fleet-{n}")) { (n) } } }
                            td { (r.target.as_deref().unwrap_or("")) }
                            td { (r.detail.as_deref().unwrap_or("")) }
                        }
                    }
                }
            }
        },
    )
    .into_response()
}
