//! Live counts as server-sent events. Each watched thing (the list, or one run) has one poller,
//! shared by every stream that watches it ([`super::pollers`]): it looks at its source on a
//! short period, cheaply: a local run's folder by the size and time of the files its row is
//! made from, the fleet by one change counter (the newest game's id and the states of open
//! runs); only when that changed is the row (or the list) made again and published. Each
//! stream sends what changed since it last spoke, as a `counts` event holding a list of
//! [`LiveCounts`]. A run's stream sends `end` after the run's last counts and closes; the
//! list's stream goes on while the page is open.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};

use tokio::sync::watch;

use super::pollers::{Feed, Pollers};
use super::view::LiveCounts;
use super::{App, RunList, fleet_id};

/// How often a poller looks at its source.
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

/// What a run's poller saw of it.
#[derive(Clone, PartialEq)]
pub enum RunSeen {
    Counts(LiveCounts),
    /// The run is gone, or its source failed: its streams end.
    Gone,
}

/// The pollers of the list and of each run.
#[derive(Default)]
pub struct Watched {
    pub list: Pollers<Arc<RunList>>,
    pub runs: Pollers<RunSeen>,
}

/// The one key of the list's poller.
const LIST: &str = "list";

/// Sleeps [`POLL`], or less when the last stream of `feed` left.
async fn pause<V>(feed: &Feed<V>) {
    tokio::select! {
        _ = tokio::time::sleep(POLL) => {}
        _ = feed.closed() => {}
    }
}

/// Run `id`'s poller: its counts whenever its stamp changed, until no stream watches it.
async fn poll_run(app: Arc<App>, id: String, feed: Feed<RunSeen>) {
    let fleet = fleet_id(&id).is_some();
    let mut seen = Seen::default();
    while !app.watched.runs.unwatched(&id, &feed) {
        let local = (!fleet).then_some(id.as_str());
        if seen.changed(stamp(&app, fleet, local).await) {
            let now = match app.run(&id).await {
                Ok(Some(v)) => RunSeen::Counts(LiveCounts::of(&v)),
                Ok(None) | Err(_) => RunSeen::Gone,
            };
            feed.send_if_modified(|v| {
                let new = v.as_ref() != Some(&now);
                *v = Some(now);
                new
            });
        }
        pause(&feed).await;
    }
}

/// The list's poller: a list made after each change of the stamp, until no stream watches.
async fn poll_list(app: Arc<App>, feed: Feed<Arc<RunList>>) {
    let mut seen = Seen::default();
    while !app.watched.list.unwatched(LIST, &feed) {
        if seen.changed(stamp(&app, true, None).await) {
            feed.send_replace(Some(app.list_fresh().await));
        }
        pause(&feed).await;
    }
}

enum Step {
    Watch(watch::Receiver<Option<RunSeen>>, Option<LiveCounts>),
    End,
    Done,
}

/// `/run/ID/events`: the run's counts whenever they change; `end` once it has ended.
pub async fn run_events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = app.watched.runs.watch(&id, |feed| {
        tokio::spawn(poll_run(app.clone(), id.clone(), feed));
    });
    let s = stream::unfold(Step::Watch(rx, None), move |step| async move {
        let (mut rx, mut last) = match step {
            Step::Done => return None,
            Step::End => {
                return Some((Ok(Event::default().event("end").data("ended")), Step::Done));
            }
            Step::Watch(rx, last) => (rx, last),
        };
        loop {
            let now = rx.borrow_and_update().clone();
            match now {
                Some(RunSeen::Gone) => {
                    return Some((Ok(Event::default().event("end").data("gone")), Step::Done));
                }
                Some(RunSeen::Counts(counts)) if last.as_ref() != Some(&counts) => {
                    let ended = counts.ended;
                    let data = serde_json::to_string(&[&counts]).unwrap_or_else(|_| "[]".into());
                    last = Some(counts);
                    let next = if ended { Step::End } else { Step::Watch(rx, last) };
                    return Some((Ok(Event::default().event("counts").data(data)), next));
                }
                _ => {}
            }
            if rx.changed().await.is_err() {
                return None;
            }
        }
    });
    Sse::new(s).keep_alive(KeepAlive::default())
}

/// `/events`: the counts of every run of the list that changed.
pub async fn list_events(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = app.watched.list.watch(LIST, |feed| {
        tokio::spawn(poll_list(app.clone(), feed));
    });
    let start = (rx, HashMap::<String, LiveCounts>::new());
    let s = stream::unfold(start, |(mut rx, mut last)| async move {
        loop {
            let now = rx.borrow_and_update().clone();
            if let Some(list) = now {
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
                    return Some((Ok(Event::default().event("counts").data(data)), (rx, last)));
                }
            }
            if rx.changed().await.is_err() {
                return None;
            }
        }
    });
    Sse::new(s).keep_alive(KeepAlive::default())
}
