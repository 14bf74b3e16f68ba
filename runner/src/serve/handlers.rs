//! The request handlers: each reads its source, then renders ([`super::pages`], the report
//! renderer) or serializes. A bad id is a 404 page, a failing source a 500 page naming what
//! failed; nothing from a request reaches a path but a checked folder name.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use maud::html;

use crate::report::html::digest::Digest;
use crate::report::html::input::{self, Liveness, RunFiles};
use crate::report::html::page::{self, Served, Viewer};
use crate::report::html::render_page;
use crate::store::GameRecord;

use super::people::api::RefusalBody;
use super::view::{LiveCounts, RunView};
use super::{App, assets, fleet_id, games, pages};

type AppState = State<Arc<App>>;

fn error(code: StatusCode, message: &str) -> Response {
    let title = code.canonical_reason().unwrap_or("error");
    (code, pages::error_page(title, message)).into_response()
}

pub async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "No such page.")
}

fn no_run(id: &str) -> Response {
    error(StatusCode::NOT_FOUND, &format!("No run {id}."))
}

fn failed(e: anyhow::Error) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}"))
}

pub async fn index(State(app): AppState, Query(f): Query<pages::Filters>) -> Response {
    let list = app.list().await;
    pages::index(&list.0, &f, &list.1).into_response()
}

/// A run page's parts, whichever its source: its row, its files (a fleet run's as its
/// submission gives them), the digest of its games, its liveness, and the fleet's own sections.
struct Parts {
    view: RunView,
    files: RunFiles,
    digest: Digest,
    live: Liveness,
    extra: maud::Markup,
    /// (games in the digest, games stored) while a fleet run's digest is still gathered.
    partial: Option<(i64, i64)>,
}

async fn parts(app: &Arc<App>, id: &str) -> Result<Option<Parts>, Response> {
    if let Some(n) = fleet_id(id) {
        let Some(f) = &app.fleet else { return Ok(None) };
        let page = match f.page(n).await {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(e) => return Err(failed(e)),
        };
        let live = match page.view.state.has_ended() {
            true => Liveness::Ended(page.view.state_note.clone()),
            false => Liveness::Running(page.view.state_note.clone()),
        };
        let extra =
            pages::fleet_sections(n, &page.keys, &page.refusals, &page.artifacts, &page.builds);
        return Ok(Some(Parts {
            view: page.view,
            files: page.files,
            digest: page.digest,
            live,
            extra,
            partial: page.partial,
        }));
    }
    let (app2, name) = (app.clone(), id.to_string());
    match tokio::task::spawn_blocking(move || app2.local.page(&name)).await {
        Ok(Some((view, files, digest, live))) => {
            Ok(Some(Parts { view, files, digest, live, extra: maud::html! {}, partial: None }))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(failed(e.into())),
    }
}

/// `/run/ID`: the report page of the run (the report renderer's, from the run's files and the
/// digest of its games), with live counts while it goes, its files linked under
/// `/run/ID/files/`, and links to its paged games instead of the inline list. A page is
/// rendered again only when the run's counts or state changed.
pub async fn run_page(
    State(app): AppState,
    headers: axum::http::HeaderMap,
    Path(id): Path<String>,
) -> Response {
    // The viewer's actions (people::web) are added to the kept page as it is sent.
    let actions = super::people::web::actions(&app, &headers, &id).await;
    let send = |page: &page::Page| {
        let viewer = Viewer { script: assets::SCRIPT, actions: actions.clone() };
        html_response(page::document(page, Some(&viewer)).into_string())
    };
    let view = match app.run(&id).await {
        Ok(Some(v)) => v,
        Ok(None) => return no_run(&id),
        Err(e) => return failed(e),
    };
    let stamp = stamp_of(&view);
    if let Some(page) = app.pages.get(&id, &stamp) {
        return send(&page);
    }
    let p = match parts(&app, &id).await {
        Ok(Some(p)) => p,
        Ok(None) => return no_run(&id),
        Err(r) => return r,
    };
    let stamp = stamp_of(&p.view);
    // A page made from a digest still being gathered is not kept: the next visit shows more.
    let keep = p.partial.is_none();
    let rendered = tokio::task::spawn_blocking(move || {
        let events = format!("/run/{}/events", pages::url_escape(&p.view.id));
        let banner = html! {
            @if !p.view.state.has_ended() { (pages::run_banner(&p.view, &events)) }
            @if let Some((held, stored)) = p.partial { (pages::gathering(held, stored)) }
            (pages::games_link(&p.view.id, p.view.games))
        };
        let base = format!("/run/{}/files/", pages::url_escape(&p.view.id));
        let served =
            Served { banner, files_base: &base, extra: p.extra, live_id: Some(&p.view.id) };
        render_page(&p.files, &p.digest, &p.live, Some(&served))
    })
    .await;
    match rendered {
        Ok(page) => {
            let page = Arc::new(page);
            if keep {
                app.pages.put(&id, stamp, page.clone());
            }
            send(&page)
        }
        Err(e) => failed(e.into()),
    }
}

/// What a run page was rendered at: its live counts and its state's words.
fn stamp_of(view: &RunView) -> String {
    format!(
        "{}{}",
        serde_json::to_string(&LiveCounts::of(view)).unwrap_or_default(),
        view.state_note
    )
}

fn html_response(html: String) -> Response {
    let mut res = Response::new(Body::from(html));
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    res
}

#[derive(serde::Deserialize)]
pub struct Paging {
    #[serde(default)]
    offset: usize,
    #[serde(default = "default_limit")]
    limit: usize,
}

fn default_limit() -> usize {
    100
}

/// `/run/ID/games?offset=N&limit=M`: one page of the games. A local run's are lines
/// `N..N+M` of games.jsonl, read from a noted offset; a fleet run's are the games of the pairs
/// from schedule position N on, read from the database with a limit.
pub async fn games_page(
    State(app): AppState,
    Path(id): Path<String>,
    Query(p): Query<Paging>,
) -> Response {
    let limit = p.limit.clamp(1, games::MAX_PAGE);
    if let Some(n) = fleet_id(&id) {
        let Some(f) = &app.fleet else { return no_run(&id) };
        let from = i32::try_from(p.offset).unwrap_or(i32::MAX);
        let sub = match f.submission(n).await {
            Ok(Some(s)) => s,
            Ok(None) => return no_run(&id),
            Err(e) => return failed(e),
        };
        let found = match f.games(n, from, limit as i64 + 1).await {
            Ok(g) => g,
            Err(e) => return failed(e),
        };
        let more = found.len() > limit;
        let next = found.get(limit).map(|(seq, _)| *seq as usize);
        let games: Vec<(usize, GameRecord)> = found
            .into_iter()
            .take(limit)
            .map(|(seq, r)| (seq as usize * 2 + usize::from(r.game == 1), r))
            .collect();
        let page = games::Page { games, more };
        let paging = pages::Paging::Pairs { from: p.offset, next, limit };
        return pages::games_page(&id, Some(sub.plan()), &page, &paging).into_response();
    }
    let (app2, name) = (app.clone(), id.clone());
    let rendered = tokio::task::spawn_blocking(move || {
        let files = input::read_meta(&app2.local.folder(&name)?);
        let found = app2.local.games(&name, p.offset, limit)?;
        Some(found.map(|(page, lines)| {
            let paging = pages::Paging::Lines { offset: p.offset, limit, total: lines };
            pages::games_page(&name, files.plan(), &page, &paging).into_string()
        }))
    })
    .await;
    match rendered {
        Ok(Some(Ok(html))) => html_response(html),
        Ok(Some(Err(e))) => failed(e),
        Ok(None) => no_run(&id),
        Err(e) => failed(e.into()),
    }
}

pub async fn games_pgn(State(app): AppState, Path(id): Path<String>) -> Response {
    download(&app, &id, "games.pgn", "application/vnd.chess-pgn; charset=utf-8").await
}

pub async fn games_jsonl(State(app): AppState, Path(id): Path<String>) -> Response {
    download(&app, &id, "games.jsonl", "application/x-ndjson").await
}

/// A run's games as a download, streamed: a local run's file from disk (never read whole), a
/// fleet run's from the database a page of pairs at a time ([`super::fleet::Fleet::stream`]).
async fn download(app: &Arc<App>, id: &str, file: &str, mime: &'static str) -> Response {
    let body = if let Some(n) = fleet_id(id) {
        let Some(f) = &app.fleet else { return no_run(id) };
        match f.submission(n).await {
            Ok(Some(sub)) => {
                let pgn = file.ends_with(".pgn");
                Body::from_stream(super::fleet::stream(app.clone(), n, sub, pgn))
            }
            Ok(None) => return no_run(id),
            Err(e) => return failed(e),
        }
    } else {
        let Some(path) = app.local.file(id, file) else {
            return match app.local.folder(id) {
                Some(_) => error(StatusCode::NOT_FOUND, &format!("Run {id} has no {file} yet.")),
                None => no_run(id),
            };
        };
        match tokio::fs::File::open(&path).await {
            Ok(f) => Body::from_stream(tokio_util::io::ReaderStream::new(f)),
            Err(_) => return error(StatusCode::NOT_FOUND, &format!("Run {id} has no {file} yet.")),
        }
    };
    attachment(body, id, file, mime)
}

/// `body` as a download named after the run and the file.
fn attachment(body: Body, id: &str, file: &str, mime: &'static str) -> Response {
    let mut res = Response::new(body);
    let name: String = format!("{id}-{file}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .collect();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    res
}

/// `/run/ID/files/PATH`: a file of a local run's folder that its page links to, read-only,
/// only when [`super::local::Local::listed_file`] allows it (a plain relative path of
/// plain names inside the folder, no link, a known kind of file); anything else is a 404.
pub async fn run_file(State(app): AppState, Path((id, path)): Path<(String, String)>) -> Response {
    let Some((full, mime)) = app.local.listed_file(&id, &path) else { return not_found().await };
    match tokio::fs::File::open(&full).await {
        Ok(f) => {
            let mut res = Response::new(Body::from_stream(tokio_util::io::ReaderStream::new(f)));
            res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
            res
        }
        Err(_) => not_found().await,
    }
}

#[derive(serde::Deserialize)]
pub struct WorkersQuery {
    #[serde(default)]
    all: bool,
}

/// `/workers`: the fleet's workers as `runner workers` lists them (`?all=true`: every one).
pub async fn workers(State(app): AppState, Query(q): Query<WorkersQuery>) -> Response {
    let Some(fleet) = &app.fleet else {
        return pages::layout(
            "Workers",
            None,
            html! { p { "No fleet database (start with --db)." } },
        )
        .into_response();
    };
    match fleet.workers(q.all).await {
        Ok(rows) => pages::workers_page(&rows, q.all).into_response(),
        Err(e) => failed(e),
    }
}

/// Every run of both sources, as `/api/runs` answers.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[schema(as = RunList)]
pub struct RunListBody<'a> {
    /// The fleet's runs first, then the run folders'.
    #[schema(value_type = Vec<RunView>)]
    pub runs: &'a [RunView],
    /// A source that failed, and why (its runs are missing from the list).
    #[schema(value_type = Vec<String>)]
    pub notes: &'a [String],
}

/// Every run's row, the fleet's and the run folders' (what the list page shows). Open to
/// whoever may read the pages (`--private`: a user's token).
#[utoipa::path(
    get, path = "/api/runs", tag = "runs",
    responses(
        (status = 200, description = "Every run", body = RunListBody),
        (status = 401, description = "--private, and no valid user's token", body = RefusalBody),
    ),
    security((), ("user_token" = [])),
)]
pub async fn api_runs(State(app): AppState) -> Response {
    let list = app.list().await;
    Json(RunListBody { runs: &list.0, notes: &list.1 }).into_response()
}

/// One run's row, by its id in the server's URLs (a run folder's name, or `fleet-N`). Open to
/// whoever may read the pages (`--private`: a user's token).
#[utoipa::path(
    get, path = "/api/run/{id}", tag = "runs",
    params(("id" = String, Path, description = "A run folder's name, or fleet-N for fleet run N")),
    responses(
        (status = 200, description = "The run", body = RunView),
        (status = 401, description = "--private, and no valid user's token", body = RefusalBody),
        (status = 404, description = "No such run", body = RefusalBody),
        (status = 500, description = "Its source failed", body = RefusalBody),
    ),
    security((), ("user_token" = [])),
)]
pub async fn api_run(State(app): AppState, Path(id): Path<String>) -> Response {
    let refused = |status, error: String| (status, Json(RefusalBody { error })).into_response();
    match app.run(&id).await {
        Ok(Some(v)) => Json(v).into_response(),
        Ok(None) => refused(StatusCode::NOT_FOUND, "no such run".into()),
        Err(e) => refused(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
    }
}
