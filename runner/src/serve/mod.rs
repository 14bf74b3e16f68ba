//! `runner serve`: one HTTP server for every run, local or in the fleet. Pages in maud
//! ([`pages`]), a run's report page made by the report layer's renderer
//! ([`crate::report::html::render_page`]), JSON for scripts, Prometheus metrics, and live counts
//! over server-sent events ([`events`]). The pages and their API are read-only; what people
//! change (approve, cancel, modify, purge, delete, worker keys) goes through [`people`] (a
//! user's token or web session, the rights of `fleet::rights`, an audit row each), on the
//! server's connection pool ([`pool`]). Nothing here writes a run folder.
//!
//! With `--db`, the server is also the fleet's door for workers: [`api`] is the worker API, on
//! a pool of database connections ([`pool`]); [`listen`] serves connections (TLS, timeouts,
//! caps, a graceful stop).
//!
//! The sources: [`local`] (the run folders under `--results`) and, with `--db`, [`fleet`] (the
//! database, through the fleet's read statements). Both give [`view::RunView`]s, so the list,
//! the API and the events are one code for both.

pub mod api;
pub mod assets;
pub mod events;
pub mod fleet;
pub mod games;
pub mod handlers;
pub mod listen;
pub mod local;
pub mod metrics;
pub mod openapi;
pub mod pages;
pub mod people;
pub mod pool;
pub mod tail;
pub mod view;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Router;
use axum::http::{HeaderValue, Method, header};
use axum::response::Response;
use axum::routing::get;

use self::fleet::Fleet;
use self::local::Local;
use self::openapi::{ApiRoute, add_routes, route};
use self::view::RunView;

/// What `runner serve` was told.
pub struct Config {
    pub results: PathBuf,
    pub db: Option<String>,
    pub bind: SocketAddr,
    /// `--tls-cert FILE --tls-key FILE`: serve HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Reading needs a login too.
    pub private: bool,
    /// The address people reach the server at (`https://...` behind a TLS proxy: cookies are
    /// Secure).
    pub public_url: Option<String>,
    /// Peers whose `X-Forwarded-For` is believed (a reverse proxy in front).
    pub trusted_proxies: Vec<std::net::IpAddr>,
}

/// Connections of the worker API's pool.
pub const POOL_SIZE: usize = 16;

/// Largest request body of the pages (they take none).
const PAGE_BODY_MAX: usize = 16 << 10;

/// The server's state: its sources, and the run pages last rendered.
pub struct App {
    pub local: Local,
    pub fleet: Option<Fleet>,
    pub csp: HeaderValue,
    pub pages: PageCache,
    /// The list last made, with the stamp it was made at (see [`App::list`]).
    pub listed: tokio::sync::Mutex<Option<(String, std::time::Instant, Arc<RunList>)>>,
    /// The server's connections to the database (with `--db`), for what people change.
    pub pool: Option<deadpool_postgres::Pool>,
    /// The people's side: `--private`, cookies, proxies, login limits.
    pub people: people::Settings,
}

/// Every run of both sources, and the notes of a source that failed.
pub type RunList = (Vec<RunView>, Vec<String>);

/// Run pages kept with the counts they were rendered at: a page is rendered again only when its
/// run's counts or state changed (a finished run's page is rendered once). At most
/// [`PageCache::KEEP`] pages are kept; past that the cache starts afresh.
#[derive(Default)]
pub struct PageCache(
    std::sync::Mutex<
        std::collections::HashMap<String, (String, Arc<crate::report::html::page::Page>)>,
    >,
);

impl PageCache {
    pub const KEEP: usize = 64;

    /// The page of `id` rendered at `stamp`, if kept.
    pub fn get(&self, id: &str, stamp: &str) -> Option<Arc<crate::report::html::page::Page>> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(id).filter(|(s, _)| s == stamp).map(|(_, page)| page.clone())
    }

    pub fn put(&self, id: &str, stamp: String, page: Arc<crate::report::html::page::Page>) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= Self::KEEP && !map.contains_key(id) {
            map.clear();
        }
        map.insert(id.to_string(), (stamp, page));
    }
}

/// How old the list of one stamp may be: a change the stamp does not see (a local run's lock
/// released, a run's priority changed, a worker gone quiet) shows within this.
pub const LIST_AGE: std::time::Duration = std::time::Duration::from_secs(2);

/// The id prefix of fleet runs in URLs (`/run/fleet-12`).
pub const FLEET_PREFIX: &str = "fleet-";

impl App {
    /// A server over the run folders under `results` and, when given, the fleet's database.
    pub fn new(results: PathBuf, fleet: Option<Fleet>) -> Result<App> {
        let csp =
            HeaderValue::from_str(&assets::csp()).context("the page policy is not a header")?;
        Ok(App {
            local: Local::new(results),
            fleet,
            csp,
            pages: PageCache::default(),
            listed: tokio::sync::Mutex::new(None),
            pool: None,
            people: people::Settings::default(),
        })
    }

    /// Every run of both sources: the fleet's first, then the local folders. A source that
    /// fails adds a note instead of its runs.
    pub async fn runs(self: &Arc<Self>) -> (Vec<RunView>, Vec<String>) {
        let mut runs = Vec::new();
        let mut notes = Vec::new();
        if let Some(f) = &self.fleet {
            match f.runs().await {
                Ok(r) => runs.extend(r),
                Err(e) => notes.push(format!("fleet database: {e:#}")),
            }
        }
        let app = self.clone();
        match tokio::task::spawn_blocking(move || app.local.list()).await {
            Ok(r) => runs.extend(r),
            Err(e) => notes.push(format!("results folder: {e}")),
        }
        (runs, notes)
    }

    /// The list as the sources stand now, made once per change of their stamp
    /// ([`events::stamp`]: the fleet's change counter, the local folders' files) and at least
    /// every [`LIST_AGE`]: every page, API call, scrape and event stream in between shares it.
    /// A hundred open pages, or four clients reloading `/`, would otherwise each read the whole
    /// list at every change. The stamp is one short statement and a look at the folders' files.
    pub async fn list(self: &Arc<Self>) -> Arc<RunList> {
        let stamp = events::stamp(self, true, None).await;
        self.list_at(&stamp).await
    }

    /// [`App::list`] for a stamp the caller already read.
    pub async fn list_at(self: &Arc<Self>, stamp: &str) -> Arc<RunList> {
        let mut kept = self.listed.lock().await;
        if let Some((s, at, list)) = kept.as_ref()
            && s == stamp
            && at.elapsed() < LIST_AGE
        {
            return list.clone();
        }
        let list = Arc::new(self.runs().await);
        *kept = Some((stamp.to_string(), std::time::Instant::now(), list.clone()));
        list
    }

    /// One run by its id.
    pub async fn run(self: &Arc<Self>, id: &str) -> Result<Option<RunView>> {
        if let Some(n) = fleet_id(id) {
            return match &self.fleet {
                Some(f) => f.run(n).await,
                None => Ok(None),
            };
        }
        let (app, id) = (self.clone(), id.to_string());
        Ok(tokio::task::spawn_blocking(move || app.local.run(&id)).await?)
    }
}

/// Fleet run N of an id `fleet-N`.
pub fn fleet_id(id: &str) -> Option<i64> {
    id.strip_prefix(FLEET_PREFIX)?.parse().ok()
}

/// The server's own JSON routes under `/api/` (the worker API's are [`api::worker::table`], the
/// people's [`people::api_table`]): the router registers these, and the API's document is
/// checked against them (`serve::openapi`'s tests). A new one goes here, with
/// `#[utoipa::path(...)]` on its handler and the handler's name in `paths(...)` of
/// [`openapi::ApiDoc`]; the test `every_api_route_is_documented` names a route left out.
pub fn api_table() -> Vec<ApiRoute> {
    vec![
        route(Method::GET, "/api/runs", handlers::api_runs),
        route(Method::GET, "/api/run/{id}", handlers::api_run),
        route(Method::GET, openapi::DOCUMENT_PATH, openapi::document_json),
    ]
}

/// The routes of the server over `app`.
pub fn router(app: Arc<App>) -> Router {
    let csp = app.csp.clone();
    let pages = Router::new()
        .route("/", get(handlers::index))
        .route("/run/{id}", get(handlers::run_page))
        .route("/run/{id}/games", get(handlers::games_page))
        .route("/run/{id}/games.pgn", get(handlers::games_pgn))
        .route("/run/{id}/games.jsonl", get(handlers::games_jsonl))
        .route("/run/{id}/files/{*path}", get(handlers::run_file))
        .route("/run/{id}/events", get(events::run_events))
        .route("/events", get(events::list_events))
        .route("/workers", get(handlers::workers))
        .route("/metrics", get(metrics::metrics));
    let router = add_routes(pages, api_table())
        .layer(tower_http::limit::RequestBodyLimitLayer::new(PAGE_BODY_MAX))
        .merge(api::routes());
    people::mount(router, &app).fallback(handlers::not_found).with_state(app).layer(
        axum::middleware::map_response(move |mut res: Response| {
            let csp = csp.clone();
            async move {
                let h = res.headers_mut();
                h.insert(header::CONTENT_SECURITY_POLICY, csp);
                h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
                h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
                h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
                res
            }
        }),
    )
}

/// Serves until the process is stopped. Prints the address it listens on first (a test reads
/// it: `--bind 127.0.0.1:0` picks a free port).
pub async fn serve(cfg: Config) -> Result<()> {
    let fleet = match &cfg.db {
        Some(url) => Some(Fleet::connect(url).await?),
        None => None,
    };
    let mut app = App::new(cfg.results.clone(), fleet)?;
    if let Some(url) = &cfg.db {
        app.pool = Some(pool::open(url, POOL_SIZE).await?);
    }
    let tls = match &cfg.tls {
        Some((cert, key)) => Some(listen::tls_acceptor(cert, key)?),
        None => None,
    };
    app.people = people::Settings {
        private: cfg.private,
        secure_cookies: tls.is_some()
            || cfg.public_url.as_deref().is_some_and(|u| u.starts_with("https://")),
        trusted_proxies: cfg.trusted_proxies.clone(),
        limiter: Default::default(),
    };
    let app = Arc::new(app);
    let listener = tokio::net::TcpListener::bind(cfg.bind)
        .await
        .with_context(|| format!("cannot listen on {}", cfg.bind))?;
    let addr = listener.local_addr().context("no local address")?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    outln!("serving {scheme}://{addr}/ (results {})", cfg.results.display());
    listen::serve_on(listener, router(app), tls, listen::stop_signal()).await
}
