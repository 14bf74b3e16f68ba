//! `/metrics` in Prometheus' text format: runs by source and state, games by source, and with
//! `--db` the fleet's pairs per second, workers alive, refusals against open runs and flagged
//! worker keys; and how many sources failed to answer.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::App;
use super::view::State as RunState;

pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    let list = app.list().await;
    let (runs, notes) = (&list.0, &list.1);
    let mut by_state: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    let mut per_hour = 0.0;
    let mut active = Vec::new();
    for r in runs {
        *by_state.entry((r.source, r.state.name())).or_default() += 1;
        *games.entry(r.source).or_default() += r.games;
        if r.state == RunState::Running {
            per_hour += r.pairs_per_hour.unwrap_or(0.0);
            active.extend(super::fleet_id(&r.id));
        }
    }
    let mut s = String::new();
    s.push_str("# HELP runner_runs Runs by source and state.\n# TYPE runner_runs gauge\n");
    for source in ["local", "fleet"] {
        for state in RunState::ALL {
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
    let mut failed = notes.len();
    if let Some(f) = &app.fleet {
        s.push_str(
            "# HELP runner_fleet_pairs_per_second Pairs reported per second over the active fleet \
             runs (each run's rate over its last hour).\n",
        );
        let _ = writeln!(
            s,
            "# TYPE runner_fleet_pairs_per_second gauge\nrunner_fleet_pairs_per_second {:.4}",
            per_hour / 3600.0
        );
        match f.workers(false).await {
            Ok(w) => {
                let alive = w.iter().filter(|w| crate::fleet::workers::state(w) == "alive").count();
                s.push_str(
                    "# HELP runner_workers_alive Fleet workers whose heartbeat is within their \
                     lease.\n",
                );
                let _ =
                    writeln!(s, "# TYPE runner_workers_alive gauge\nrunner_workers_alive {alive}");
            }
            Err(_) => failed += 1,
        }
        match f.health(&active).await {
            Ok((refusals, flagged)) => {
                s.push_str(
                    "# HELP runner_refusals Refusals recorded against open fleet runs (a worker \
                     key that cannot play a run).\n",
                );
                let _ = writeln!(s, "# TYPE runner_refusals gauge\nrunner_refusals {refusals}");
                s.push_str(
                    "# HELP runner_flagged_workers Worker keys whose results in an active run are \
                     too unlike the rest to be chance.\n",
                );
                let _ = writeln!(
                    s,
                    "# TYPE runner_flagged_workers gauge\nrunner_flagged_workers {flagged}"
                );
            }
            Err(_) => failed += 1,
        }
    }
    s.push_str("# HELP runner_source_errors Sources that failed to answer this scrape.\n");
    let _ = writeln!(s, "# TYPE runner_source_errors gauge\nrunner_source_errors {failed}");
    let mut res = s.into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    res
}
