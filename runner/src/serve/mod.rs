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
pub mod latest;
pub mod listen;
pub mod local;
pub mod metrics;
pub mod openapi;
pub mod pages;
pub mod people;
pub mod pollers;
pub mod pool;
pub mod tail;
pub mod view;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::http::{HeaderValue, Method, header};
use axum::response::Response;
use axum::routing::get;
use futures_util::future::BoxFuture;

use self::fleet::Fleet;
use self::latest::Latest;
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
    /// How long an idle worker waits before it asks again (`--worker-poll`).
    pub worker_poll: std::time::Duration,
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
    /// The list last made, served while the next is made (see [`App::list`]).
    pub listed: Arc<Latest<RunList>>,
    /// The pollers of the event streams, one per watched thing.
    pub watched: events::Watched,
    /// The server's connections to the database (with `--db`), for what people change.
    pub pool: Option<deadpool_postgres::Pool>,
    /// The people's side: `--private`, cookies, proxies, login limits.
    pub people: people::Settings,
    /// The judges of the runs workers report to.
    pub judges: api::judges::Judges,
    /// How long an idle worker waits before it asks again (`--worker-poll`).
    pub worker_poll: std::time::Duration,
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

/// How old the list may be before a read starts the next one (in the background: the read is
/// answered with the one there is). Counted from when the list's making began.
pub const LIST_AGE: Duration = Duration::from_secs(2);

/// How often the server reads its own list ([`keep_listing`]), so that a list is never much
/// older than this even when nobody reads it: a reader after a quiet hour gets a list at most
/// [`LIST_KEPT`] + [`LIST_AGE`] + one making old, never an hour's.
pub const LIST_KEPT: Duration = Duration::from_secs(10);

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
            listed: Latest::new(LIST_AGE),
            watched: events::Watched::default(),
            pool: None,
            people: people::Settings::default(),
            judges: api::judges::Judges::default(),
            worker_poll: crate::fleet::worker::IDLE_POLL,
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

    /// The list: the last one made, never waited for once there is one. A list older than
    /// [`LIST_AGE`], or made before a change the server saw (a change made through it, or a
    /// change of the stamp an event stream saw), is still answered, and the next one is made
    /// in the background meanwhile, one at a time whoever asks ([`Latest`]); only the very
    /// first read waits, for the first list. Every page, API call, scrape and event stream
    /// shares it: a hundred open pages, or four clients reloading `/`, never make a list each.
    ///
    /// How stale: while the list is read, what a read answers began to be made at most
    /// [`LIST_AGE`] plus one making before the read (a making of 1,000 fleet runs takes about
    /// 0.4 s); with nobody reading, [`keep_listing`] reads it every [`LIST_KEPT`]; an open
    /// page's stream has the next one made as soon as it sees the stamp change.
    pub async fn list(self: &Arc<Self>) -> Arc<RunList> {
        self.listed.get(self.list_maker()).await
    }

    /// A list whose making began after this call (an event stream that saw the sources change
    /// waits for it; a page never does).
    pub async fn list_fresh(self: &Arc<Self>) -> Arc<RunList> {
        self.listed.fresh(self.list_maker()).await
    }

    /// The sources changed through this server (a person's change): the next list is made
    /// now, in the background; reads answer the last one until it is done.
    pub fn list_changed(self: &Arc<Self>) {
        self.listed.refresh(self.list_maker());
    }

    fn list_maker(self: &Arc<Self>) -> impl Fn() -> BoxFuture<'static, RunList> + use<> {
        let app = self.clone();
        move || {
            let app = app.clone();
            Box::pin(async move { app.runs().await })
        }
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
    app.worker_poll = cfg.worker_poll;
    let app = Arc::new(app);
    tokio::spawn(keep_listing(Arc::downgrade(&app)));
    if app.pool.is_some() {
        tokio::spawn(api::closing::keep_closing(Arc::downgrade(&app)));
    }
    let listener =
        listen::bind(cfg.bind).with_context(|| format!("cannot listen on {}", cfg.bind))?;
    let addr = listener.local_addr().context("no local address")?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    outln!("serving {scheme}://{addr}/ (results {})", cfg.results.display());
    listen::serve_on(listener, router(app), tls, listen::stop_signal()).await
}

/// Reads the server's list every [`LIST_KEPT`] while the server lives: its first list is made
/// at start (the first page then need not wait for all of it), and no list served is ever much
/// older than that, however long nobody read one.
pub async fn keep_listing(app: Weak<App>) {
    loop {
        let Some(app) = app.upgrade() else { return };
        app.list().await;
        drop(app);
        tokio::time::sleep(LIST_KEPT).await;
    }
}
