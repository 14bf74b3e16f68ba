//! Live counts as server-sent events. Each stream polls its source on a short period, cheaply:
//! a local run's folder by the size and time of the files its row is made from, the fleet by
//! one change counter (the newest game's id and the states of open runs); only when that
//! changed is the row made again and sent, as a `counts` event holding a list of
//! [`LiveCounts`]. A run's stream sends `end` after the run's last counts and closes; the
//! list's stream goes on while the page is open.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};

use super::view::LiveCounts;
use super::{App, fleet_id};

/// How often a stream looks at its source.
pub const POLL: Duration = Duration::from_millis(500);

/// Ticks after which a local row is made again even with no file changed (run.lock released).
const RECHECK_TICKS: u32 = 10;

/// What a stream last saw of its source, to tell whether anything changed.
#[derive(Default)]
struct Seen {
    stamp: Option<String>,
    ticks: u32,
}

impl Seen {
    /// Whether the source's stamp changed (or a recheck is due), remembering the new one.
    fn changed(&mut self, stamp: String) -> bool {
        self.ticks += 1;
        if self.stamp.as_deref() == Some(stamp.as_str()) && self.ticks < RECHECK_TICKS {
            return false;
        }
        self.ticks = 0;
        self.stamp = Some(stamp);
        true
    }
}

/// The stamp of a source: the fleet's change counter when `fleet`, and the local folders'
/// files (sizes and times of games.jsonl, summary.json and run.lock of `ids`, or of every
/// folder).
pub async fn stamp(app: &Arc<App>, fleet: bool, local: Option<&str>) -> String {
    let mut s = String::new();
    if fleet && let Some(f) = &app.fleet {
        s.push_str(&f.change_counter().await.unwrap_or_else(|e| format!("error {e}")));
    }
    let dirs: Vec<std::path::PathBuf> = match local {
        Some(id) => app.local.folder(id).into_iter().collect(),
        None => std::fs::read_dir(app.local.root())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect(),
    };
    for d in dirs {
        for f in ["games.jsonl", "summary.json", "run.lock"] {
            if let Ok(m) = std::fs::symlink_metadata(d.join(f)) {
                let t =
                    m.modified().ok().and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
                s.push_str(&format!("{}:{}:{:?};", d.display(), m.len(), t));
            }
        }
    }
    s
}

enum Step {
    Watch(Seen, Option<LiveCounts>),
    End,
    Done,
}

/// `/run/ID/events`: the run's counts whenever they change; `end` once it has ended.
pub async fn run_events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let fleet = fleet_id(&id).is_some();
    let s = stream::unfold(Step::Watch(Seen::default(), None), move |step| {
        let (app, id) = (app.clone(), id.clone());
        async move {
            let (mut seen, mut last) = match step {
                Step::Done => return None,
                Step::End => {
                    return Some((Ok(Event::default().event("end").data("ended")), Step::Done));
                }
                Step::Watch(seen, last) => (seen, last),
            };
            loop {
                let local = (!fleet).then_some(id.as_str());
                if seen.changed(stamp(&app, fleet, local).await) {
                    let counts = match app.run(&id).await {
                        Ok(Some(v)) => LiveCounts::of(&v),
                        // A run that is gone (or a source failing) ends the stream.
                        Ok(None) | Err(_) => {
                            return Some((
                                Ok(Event::default().event("end").data("gone")),
                                Step::Done,
                            ));
                        }
                    };
                    if last.as_ref() != Some(&counts) {
                        let ended = counts.ended;
                        let data =
                            serde_json::to_string(&[&counts]).unwrap_or_else(|_| "[]".into());
                        last = Some(counts);
                        let next = if ended { Step::End } else { Step::Watch(seen, last) };
                        return Some((Ok(Event::default().event("counts").data(data)), next));
                    }
                }
                tokio::time::sleep(POLL).await;
            }
        }
    });
    Sse::new(s).keep_alive(KeepAlive::default())
}

/// `/events`: the counts of every run of the list that changed.
pub async fn list_events(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start: (Seen, HashMap<String, LiveCounts>) = (Seen::default(), HashMap::new());
    let s = stream::unfold(start, move |(mut seen, mut last)| {
        let app = app.clone();
        async move {
            loop {
                let now = stamp(&app, true, None).await;
                if seen.changed(now.clone()) {
                    let list = app.list_at(&now).await;
                    let changed: Vec<LiveCounts> = list
                        .0
                        .iter()
                        .map(LiveCounts::of)
                        .filter(|c| last.get(&c.id) != Some(c))
                        .collect();
                    if !changed.is_empty() {
                        for c in &changed {
                            last.insert(c.id.clone(), c.clone());
                        }
                        let data = serde_json::to_string(&changed).unwrap_or_else(|_| "[]".into());
                        return Some((
                            Ok(Event::default().event("counts").data(data)),
                            (seen, last),
                        ));
                    }
                }
                tokio::time::sleep(POLL).await;
            }
        }
    });
    Sse::new(s).keep_alive(KeepAlive::default())
}
