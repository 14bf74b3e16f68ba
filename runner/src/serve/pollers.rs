//! One poller per watched thing (the list, or one run), shared by every event stream that
//! watches it: the first stream of a thing starts its poller, the others subscribe to what it
//! publishes, and the poller stops once no stream is left. A hundred open pages of one run
//! cost the database what one costs. The pollers themselves are in [`super::events`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

/// Where a poller publishes: the last value it saw (None before its first look).
pub type Feed<V> = Arc<watch::Sender<Option<V>>>;

/// The pollers of one kind of thing, by key.
pub struct Pollers<V> {
    feeds: Mutex<HashMap<String, Feed<V>>>,
}

impl<V> Default for Pollers<V> {
    fn default() -> Self {
        Pollers { feeds: Mutex::new(HashMap::new()) }
    }
}

impl<V> Pollers<V> {
    /// A receiver of `key`'s values. When no poller watches `key`, `start` is given a new feed
    /// to publish into (it spawns the poller, which calls [`Pollers::unwatched`] at each turn).
    pub fn watch(&self, key: &str, start: impl FnOnce(Feed<V>)) -> watch::Receiver<Option<V>> {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(feed) = feeds.get(key) {
            return feed.subscribe();
        }
        let feed: Feed<V> = Arc::new(watch::Sender::new(None));
        let rx = feed.subscribe();
        feeds.insert(key.to_string(), feed.clone());
        drop(feeds);
        start(feed);
        rx
    }

    /// Whether the poller of `feed` should stop, no stream watching it any more; it is then
    /// forgotten, and the next stream of `key` starts another. (Checked under the same lock
    /// as [`Pollers::watch`] subscribes: no stream is left with a poller that stopped.)
    pub fn unwatched(&self, key: &str, feed: &Feed<V>) -> bool {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        if feed.receiver_count() > 0 {
            return false;
        }
        if feeds.get(key).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            feeds.remove(key);
        }
        true
    }

    /// How many things are watched.
    pub fn len(&self) -> usize {
        self.feeds.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streams_of_one_thing_share_one_poller_until_the_last_leaves() {
        let p: Pollers<u32> = Pollers::default();
        let mut started = Vec::new();
        let a = p.watch("run-1", |f| started.push(f));
        let b = p.watch("run-1", |_| panic!("a second poller of run-1"));
        let c = p.watch("run-2", |f| started.push(f));
        assert_eq!((started.len(), p.len()), (2, 2));
        let (one, two) = (&started[0], &started[1]);
        one.send_replace(Some(7));
        assert_eq!((*a.borrow(), *b.borrow(), *c.borrow()), (Some(7), Some(7), None));

        drop(a);
        assert!(!p.unwatched("run-1", one), "b still watches");
        drop(b);
        assert!(p.unwatched("run-1", one), "nobody watches run-1");
        assert_eq!(p.len(), 1, "run-1 forgotten, run-2 kept");
        assert!(!p.unwatched("run-2", two));

        // A stream after the poller stopped starts a new one.
        let mut again = Vec::new();
        let d = p.watch("run-1", |f| again.push(f));
        assert_eq!(again.len(), 1);
        assert!(!Arc::ptr_eq(&again[0], one));
        // The old poller's last look does not forget the new one.
        assert!(p.unwatched("run-1", one));
        assert!(!p.unwatched("run-1", &again[0]));
        assert_eq!(p.len(), 2);
        drop((c, d));
    }
}
