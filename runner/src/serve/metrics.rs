//! `/metrics` in Prometheus' text format: runs by source and state, games by source, and with
//! `--db` the workers alive.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::App;
use super::view::State as RunState;

pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    let (runs, notes) = app.runs().await;
    let mut by_state: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &runs {
        *by_state.entry((r.source, r.state.name())).or_default() += 1;
        *games.entry(r.source).or_default() += r.games;
    }
    let mut s = String::new();
    s.push_str("# HELP runner_runs Runs by source and state.\n# TYPE runner_runs gauge\n");
    for source in ["local", "fleet"] {
        for state in [RunState::Pending, RunState::Active, RunState::Finished] {
            let n = by_state.get(&(source, state.name())).copied().unwrap_or(0);
            let _ =
                writeln!(s, "runner_runs{{source=\"{source}\",state=\"{}\"}} {n}", state.name());
        }
    }
    s.push_str("# HELP runner_games Games played, by source.\n# TYPE runner_games gauge\n");
    for source in ["local", "fleet"] {
        let _ = writeln!(
            s,
            "runner_games{{source=\"{source}\"}} {}",
            games.get(source).copied().unwrap_or(0)
        );
    }
    if let Some(f) = &app.fleet
        && let Ok(w) = f.workers(false).await
    {
        let alive = w.iter().filter(|w| crate::fleet::workers::state(w) == "alive").count();
        s.push_str(
            "# HELP runner_workers_alive Fleet workers whose heartbeat is within their lease.\n",
        );
        let _ = writeln!(s, "# TYPE runner_workers_alive gauge\nrunner_workers_alive {alive}");
    }
    s.push_str("# HELP runner_source_errors Sources that failed to answer this scrape.\n");
    let _ = writeln!(s, "# TYPE runner_source_errors gauge\nrunner_source_errors {}", notes.len());
    let mut res = s.into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    res
}
