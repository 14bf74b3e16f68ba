//! The latest value made, served while the next is made: a reader never waits for a value
//! once one exists (only the very first reader waits, for the first). A read that finds the
//! value older than its refresh interval, or made before [`Latest::mark_stale`], starts the
//! next in a background task and is answered with the one it has; at most one value is being
//! made at a time, whoever asks. The server's run list is one ([`super::App::list`]).
//!
//! The age of a value counts from the moment its making began (what it read is at least that
//! old). A value being made is published when done, for every later read.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// A value made, with when its making began and the stale mark it was made under.
struct Made<T> {
    value: Arc<T>,
    at: Instant,
    epoch: u64,
}

/// What [`Latest`] holds: the last value made, whether the next is being made, and how many
/// times the value was marked stale (a value made under an older mark is stale).
struct Slot<T> {
    made: Option<Made<T>>,
    making: bool,
    epoch: u64,
}

/// The latest value of one kind (see the module's text).
pub struct Latest<T> {
    slot: watch::Sender<Slot<T>>,
    refresh_after: Duration,
}

impl<T: Send + Sync + 'static> Latest<T> {
    /// A value made again when a read finds it `refresh_after` old or older.
    pub fn new(refresh_after: Duration) -> Arc<Latest<T>> {
        let slot = Slot { made: None, making: false, epoch: 0 };
        Arc::new(Latest { slot: watch::Sender::new(slot), refresh_after })
    }

    /// The last value made; when it is stale, the next is started with `make` in the
    /// background and this one answered meanwhile. With none made yet, waits for the first.
    pub async fn get<F, Fut>(self: &Arc<Self>, make: F) -> Arc<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let mut rx = self.slot.subscribe();
        loop {
            let kept = {
                let s = rx.borrow_and_update();
                s.made.as_ref().map(|m| (m.value.clone(), self.stale(m, s.epoch)))
            };
            match kept {
                Some((value, stale)) => {
                    if stale {
                        self.start(&make);
                    }
                    return value;
                }
                None => {
                    self.start(&make);
                    // A making that ended without a value (it panicked) is started again.
                    let _ = rx.wait_for(|s| s.made.is_some() || !s.making).await;
                }
            }
        }
    }

    /// A value whose making began after this call (waiting for it; a making already under way
    /// is waited for first, then the next one started). For a caller that knows the sources
    /// changed, such as an event stream that saw a change.
    pub async fn fresh<F, Fut>(self: &Arc<Self>, make: F) -> Arc<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let want = self.mark_stale();
        let mut rx = self.slot.subscribe();
        loop {
            self.start(&make);
            let s = rx
                .wait_for(|s| s.made.as_ref().is_some_and(|m| m.epoch >= want) || !s.making)
                .await;
            if let Ok(s) = s
                && let Some(m) = s.made.as_ref().filter(|m| m.epoch >= want)
            {
                return m.value.clone();
            }
        }
    }

    /// Marks the value stale (the next read starts the next one) and starts the next now.
    pub fn refresh<F, Fut>(self: &Arc<Self>, make: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        self.mark_stale();
        self.start(&make);
    }

    /// Marks the value stale: the next read starts the next one. Returns the new mark.
    pub fn mark_stale(&self) -> u64 {
        let mut epoch = 0;
        // Nobody waits for a mark: no one is woken.
        self.slot.send_if_modified(|s| {
            s.epoch += 1;
            epoch = s.epoch;
            false
        });
        epoch
    }

    /// Whether a value is being made now.
    pub fn making(&self) -> bool {
        self.slot.borrow().making
    }

    fn stale(&self, m: &Made<T>, epoch: u64) -> bool {
        m.epoch != epoch || m.at.elapsed() >= self.refresh_after
    }

    /// Starts making the next value in a task of its own, unless one is being made.
    fn start<F, Fut>(self: &Arc<Self>, make: &F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let mut epoch = 0;
        let began = self.slot.send_if_modified(|s| {
            if s.making {
                return false;
            }
            s.making = true;
            epoch = s.epoch;
            true
        });
        if !began {
            return;
        }
        let at = Instant::now();
        let making = make();
        let done = Done(self.clone());
        tokio::spawn(async move {
            let value = Arc::new(making.await);
            done.0.slot.send_modify(|s| {
                s.made = Some(Made { value, at, epoch });
                s.making = false;
            });
        });
    }
}

/// Ends a making when dropped, whether it gave a value or not (it panicked, or its task was
/// dropped as the runtime stopped): waiters are woken and the next read starts another.
struct Done<T>(Arc<Latest<T>>);

impl<T> Drop for Done<T> {
    fn drop(&mut self) {
        self.0.slot.send_if_modified(|s| std::mem::replace(&mut s.making, false));
    }
}

#[cfg(test)]
mod tests;
