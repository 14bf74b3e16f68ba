//! The latest value, served while the next is made: each test drives the makings by hand (a
//! making says it began, then waits to be let go), so what a read answers and how many
//! makings were started never depends on timing.

use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::future::BoxFuture;
use tokio::sync::{Semaphore, mpsc};

use super::*;

/// Makings numbered from 1: each says it began, waits to be let go, and gives its number.
struct Gate {
    started: Arc<AtomicU32>,
    began_tx: mpsc::UnboundedSender<u32>,
    began: mpsc::UnboundedReceiver<u32>,
    go: Arc<Semaphore>,
}

impl Gate {
    fn new() -> Gate {
        let (began_tx, began) = mpsc::unbounded_channel();
        let go = Arc::new(Semaphore::new(0));
        Gate { started: Arc::default(), began_tx, began, go }
    }

    fn maker(&self) -> impl Fn() -> BoxFuture<'static, u32> + use<> {
        let (started, tx, go) = (self.started.clone(), self.began_tx.clone(), self.go.clone());
        move || {
            let n = started.fetch_add(1, Ordering::SeqCst) + 1;
            let (tx, go) = (tx.clone(), go.clone());
            Box::pin(async move {
                let _ = tx.send(n);
                go.acquire().await.expect("the gate stays open").forget();
                n
            })
        }
    }

    /// Makings started so far.
    fn started(&self) -> u32 {
        self.started.load(Ordering::SeqCst)
    }

    /// Waits until making `n` began, then lets it finish.
    async fn let_go(&mut self, n: u32) {
        assert_eq!(self.began.recv().await, Some(n));
        self.go.add_permits(1);
    }
}

/// Waits until no making is under way (the last one's value published).
async fn settled<T>(l: &Latest<T>) {
    l.slot.subscribe().wait_for(|s| !s.making).await.expect("the slot lives");
}

#[tokio::test]
async fn the_first_readers_wait_for_one_making() {
    let mut g = Gate::new();
    let l = Latest::new(Duration::MAX);
    let m = g.maker();
    let (a, b, ()) = tokio::join!(l.get(&m), l.get(&m), g.let_go(1));
    assert_eq!((*a, *b), (1, 1));
    assert_eq!(g.started(), 1, "two first readers, one making");
}

#[tokio::test]
async fn a_stale_value_is_answered_at_once_while_one_next_is_made() {
    let mut g = Gate::new();
    // Stale as soon as made: every read wants the next.
    let l = Latest::new(Duration::ZERO);
    let m = g.maker();
    let (first, ()) = tokio::join!(l.get(&m), g.let_go(1));
    assert_eq!(*first, 1);
    // Making 2 is held: the reads are answered with 1 meanwhile, and start no other making.
    assert_eq!(*l.get(&m).await, 1);
    assert_eq!(*l.get(&m).await, 1);
    assert_eq!(g.started(), 2, "one making at a time");
    assert!(l.making());
    g.let_go(2).await;
    settled(&l).await;
    assert_eq!(*l.get(&m).await, 2, "the next value, once made");
    assert_eq!(g.started(), 3);
}

#[tokio::test]
async fn a_value_within_its_interval_is_kept_until_marked_stale() {
    let mut g = Gate::new();
    let l = Latest::new(Duration::MAX);
    let m = g.maker();
    let (first, ()) = tokio::join!(l.get(&m), g.let_go(1));
    assert_eq!(*first, 1);
    for _ in 0..10 {
        assert_eq!(*l.get(&m).await, 1);
    }
    assert_eq!(g.started(), 1, "a fresh value is not made again");
    l.mark_stale();
    assert_eq!(g.started(), 1, "marking starts nothing by itself");
    assert_eq!(*l.get(&m).await, 1, "the stale value, at once");
    assert_eq!(g.started(), 2);
    g.let_go(2).await;
    settled(&l).await;
    assert_eq!(*l.get(&m).await, 2);
    assert_eq!(g.started(), 2, "fresh again");
}

#[tokio::test]
async fn a_stale_mark_during_a_making_leaves_its_value_stale() {
    let mut g = Gate::new();
    let l = Latest::new(Duration::MAX);
    let m = g.maker();
    let (_, ()) = tokio::join!(l.get(&m), g.let_go(1));
    l.refresh(&m);
    assert_eq!(g.started(), 2, "refresh starts the next making");
    // A change after making 2 began: its value may not hold it.
    l.mark_stale();
    g.let_go(2).await;
    settled(&l).await;
    assert_eq!(*l.get(&m).await, 2);
    assert_eq!(g.started(), 3, "the read found 2 stale and started 3");
}

#[tokio::test]
async fn fresh_waits_for_a_making_begun_after_it() {
    let mut g = Gate::new();
    let l = Latest::new(Duration::MAX);
    let m = g.maker();
    let (_, ()) = tokio::join!(l.get(&m), g.let_go(1));
    l.refresh(&m);
    // Making 2 began before the call: `fresh` waits for it, then for 3; a plain read
    // meanwhile is answered with what there is.
    let (fresh, ()) = tokio::join!(l.fresh(&m), async {
        g.let_go(2).await;
        g.let_go(3).await;
    });
    assert_eq!(*fresh, 3);
    assert_eq!(g.started(), 3);
}

#[tokio::test]
async fn fresh_callers_during_a_making_share_the_next() {
    let mut g = Gate::new();
    let l = Latest::new(Duration::MAX);
    let m = g.maker();
    let (_, ()) = tokio::join!(l.get(&m), g.let_go(1));
    l.refresh(&m);
    // Both calls come while making 2 is under way: both wait for 3, one making for the two.
    let (a, b, ()) = tokio::join!(l.fresh(&m), l.fresh(&m), async {
        g.let_go(2).await;
        g.let_go(3).await;
    });
    assert_eq!((*a, *b), (3, 3));
    assert_eq!(g.started(), 3);
}

#[tokio::test]
async fn a_making_that_panics_lets_the_waiting_reader_try_again() {
    let l: Arc<Latest<u32>> = Latest::new(Duration::MAX);
    let calls = Arc::new(AtomicU32::new(0));
    let m = {
        let calls = calls.clone();
        move || {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                assert!(n > 1, "making {n} fails");
                n
            }
        }
    };
    assert_eq!(*l.get(&m).await, 2);
    assert!(!l.making());
}
