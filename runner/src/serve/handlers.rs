//! The request handlers: each reads its source, then renders ([`super::pages`], the report
//! renderer) or serializes. A bad id is a 404 page, a failing source a 500 page naming what
//! failed; nothing from a request reaches a path but a checked folder name.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use maud::html;

use crate::report::html::input::{self, Liveness};
use crate::report::html::page::Served;
use crate::report::html::render_as;

use super::view::{LiveCounts, RunView, State as RunState};
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
    let (runs, notes) = app.runs().await;
    pages::index(&runs, &f, &notes).into_response()
}

/// A run's row and its folder (a fleet run's pulled into the server's cache first).
async fn run_and_folder(app: &Arc<App>, id: &str) -> Result<Option<(RunView, PathBuf)>, Response> {
    let view = match app.run(id).await {
        Ok(Some(v)) => v,
        Ok(None) => return Ok(None),
        Err(e) => return Err(failed(e)),
    };
    let dir = match (fleet_id(id), &app.fleet) {
        (Some(n), Some(f)) => {
            let stamp = serde_json::to_string(&LiveCounts::of(&view)).unwrap_or_default();
            match f.folder(n, &stamp).await {
                Ok(d) => d,
                Err(e) => return Err(failed(e)),
            }
        }
        (Some(_), None) => return Ok(None),
        (None, _) => match app.local.folder(id) {
            Some(d) => d,
            None => return Ok(None),
        },
    };
    Ok(Some((view, dir)))
}

/// `/run/ID`: the report page of the run, with live counts while it goes and links to its
/// paged games instead of the inline list.
pub async fn run_page(State(app): AppState, Path(id): Path<String>) -> Response {
    let (view, dir) = match run_and_folder(&app, &id).await {
        Ok(Some(x)) => x,
        Ok(None) => return no_run(&id),
        Err(r) => return r,
    };
    let stamp = format!(
        "{}{}",
        serde_json::to_string(&LiveCounts::of(&view)).unwrap_or_default(),
        view.state_note
    );
    if let Some(page) = app.pages.get(&id, &stamp) {
        return html_response(page.as_str().to_owned());
    }
    let rendered = tokio::task::spawn_blocking(move || {
        let files = input::read(&dir);
        let live = match (view.source, view.state) {
            ("fleet", RunState::Finished) => Liveness::Ended(view.state_note.clone()),
            ("fleet", _) => Liveness::Running(view.state_note.clone()),
            _ => input::liveness(&files),
        };
        let events = format!("/run/{}/events", pages::url_escape(&view.id));
        let banner = html! {
            @if view.state != RunState::Finished { (pages::run_banner(&view, &events)) }
            (pages::games_link(&view.id, view.games))
        }
        .into_string();
        render_as(&files, &live, Some(&Served { banner: &banner, script: assets::SCRIPT }))
    })
    .await;
    match rendered {
        Ok(html) => {
            let page = Arc::new(html);
            app.pages.put(&id, stamp, page.clone());
            html_response(page.as_str().to_owned())
        }
        Err(e) => failed(e.into()),
    }
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

/// `/run/ID/games?offset=N&limit=M`: one page of the games, read as a stream.
pub async fn games_page(
    State(app): AppState,
    Path(id): Path<String>,
    Query(p): Query<Paging>,
) -> Response {
    let (view, dir) = match run_and_folder(&app, &id).await {
        Ok(Some(x)) => x,
        Ok(None) => return no_run(&id),
        Err(r) => return r,
    };
    let limit = p.limit.clamp(1, games::MAX_PAGE);
    let rendered = tokio::task::spawn_blocking(move || {
        let files = input::read_meta(&dir);
        let path = dir.join("games.jsonl");
        let page = if path.is_file() {
            games::page(&path, p.offset, limit)?
        } else {
            games::Page { games: Vec::new(), more: false }
        };
        anyhow::Ok(pages::games_page(&view.id, files.plan(), &page, p.offset, limit).into_string())
    })
    .await;
    match rendered {
        Ok(Ok(html)) => html_response(html),
        Ok(Err(e)) => failed(e),
        Err(e) => failed(e.into()),
    }
}

pub async fn games_pgn(State(app): AppState, Path(id): Path<String>) -> Response {
    download(&app, &id, "games.pgn", "application/vnd.chess-pgn; charset=utf-8").await
}

pub async fn games_jsonl(State(app): AppState, Path(id): Path<String>) -> Response {
    download(&app, &id, "games.jsonl", "application/x-ndjson").await
}

/// A run's file streamed from disk as an attachment (never read whole).
async fn download(app: &Arc<App>, id: &str, file: &str, mime: &'static str) -> Response {
    let dir = match run_and_folder(app, id).await {
        Ok(Some((_, d))) => d,
        Ok(None) => return no_run(id),
        Err(r) => return r,
    };
    let path = dir.join(file);
    let plain = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    let opened = if plain { tokio::fs::File::open(&path).await.ok() } else { None };
    let Some(f) = opened else {
        return error(StatusCode::NOT_FOUND, &format!("Run {id} has no {file} yet."));
    };
    let stream = tokio_util::io::ReaderStream::new(f);
    let mut res = Response::new(Body::from_stream(stream));
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

/// `/workers`: the fleet's workers table.
pub async fn workers(State(app): AppState) -> Response {
    let Some(fleet) = &app.fleet else {
        return pages::layout(
            "Workers",
            None,
            html! { p { "No fleet database (start with --db)." } },
        )
        .into_response();
    };
    match fleet.workers().await {
        Ok(rows) => pages::workers_page(&rows).into_response(),
        Err(e) => failed(e),
    }
}

/// `/api/runs`: every run's row as JSON.
pub async fn api_runs(State(app): AppState) -> Response {
    let (runs, notes) = app.runs().await;
    Json(serde_json::json!({ "runs": runs, "notes": notes })).into_response()
}

/// `/api/run/ID`: one run's row as JSON.
pub async fn api_run(State(app): AppState, Path(id): Path<String>) -> Response {
    match app.run(&id).await {
        Ok(Some(v)) => Json(v).into_response(),
        Ok(None) => (StatusCode::NOT_FOUND, Json(serde_json::json!({ "error": "no such run" })))
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(serde_json::json!({ "error": format!("{e:#}") })),
        )
            .into_response(),
    }
}
