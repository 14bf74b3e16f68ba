//! A cloneable cancellation flag (Ctrl-C, SIGTERM, a closed stdout or stderr, or an SPRT decision
//! stops new work), and the signal handler that sets it.

use std::sync::Arc;

use tokio::sync::watch;

/// Cancelled once, for good; every clone sees it.
#[derive(Clone, Debug)]
pub struct Cancel {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel { tx: Arc::new(watch::channel(false).0) }
    }

    pub fn cancel(&self) {
        self.tx.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves when cancelled (at once if already cancelled).
    pub async fn cancelled(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in self, so wait_for can only end by seeing `true`.
        let _ = rx.wait_for(|v| *v).await;
    }
}

/// Cancels `cancel` on Ctrl-C or SIGTERM, printing `message` (what happens to the work in
/// flight) on stderr. A second signal exits at once with status 130: what was already written
/// stays, and the engines die with the runner (they are started with a parent-death signal).
pub fn cancel_on_signals(cancel: Cancel, message: &'static str) {
    cancel_on_signals_after(cancel, message, std::time::Duration::ZERO)
}

/// [`cancel_on_signals`] where signals within `grace` of the first are that same signal: a
/// fleet worker under `timeout`, Slurm or systemd gets SIGTERM twice within milliseconds (to
/// itself and to its process group), and must still give its leased pairs back.
pub fn cancel_on_signals_after(cancel: Cancel, message: &'static str, grace: std::time::Duration) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).ok();
        loop {
            let int = async {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            let term = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = int => {},
                _ = term => {},
            }
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    // A closed stdout or stderr (`| head -1`) stops the run as SIGTERM does; nothing to say
    // where nobody reads.
    let on_closed = cancel.clone();
    crate::out::on_failure(move || on_closed.cancel());
    tokio::spawn(on_signals(rx, cancel, message, grace, || {
        std::process::exit(i32::from(crate::exit::Exit::Interrupted.code()))
    }));
}

/// The first signal from `signals` cancels; the next one after `grace` calls `exit_now`.
async fn on_signals(
    mut signals: tokio::sync::mpsc::UnboundedReceiver<()>,
    cancel: Cancel,
    message: &'static str,
    grace: std::time::Duration,
    exit_now: impl FnOnce(),
) {
    if signals.recv().await.is_none() {
        return;
    }
    let first = tokio::time::Instant::now();
    errln!("{message}");
    cancel.cancel();
    loop {
        if signals.recv().await.is_none() {
            return;
        }
        if first.elapsed() >= grace {
            break;
        }
    }
    errln!("second signal: exiting at once (games already written are kept)");
    exit_now();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn clones_see_cancellation() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        let waiter = tokio::spawn(async move { b.cancelled().await });
        a.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(60), waiter).await.unwrap().unwrap();
        assert!(a.is_cancelled());
        a.cancelled().await;
    }

    #[tokio::test]
    async fn a_second_signal_exits_at_once() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = Cancel::new();
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let handler = tokio::spawn(on_signals(
            rx,
            cancel.clone(),
            "stopping",
            std::time::Duration::ZERO,
            move || {
                let _ = done_tx.send(());
            },
        ));
        tx.send(()).unwrap();
        cancel.cancelled().await;
        tx.send(()).unwrap();
        done_rx.await.expect("the second signal exits");
        handler.await.unwrap();
    }

    /// A worker's SIGTERM twice within milliseconds (`timeout` signals it and its group) is
    /// one signal: within the grace (an hour here, so no timing matters) further signals do
    /// not exit; `a_second_signal_exits_at_once` shows one after the grace (zero) does.
    #[tokio::test]
    async fn signals_within_the_grace_are_one() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = Cancel::new();
        let exited = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let e = exited.clone();
        let grace = std::time::Duration::from_secs(3600);
        let handler = tokio::spawn(on_signals(rx, cancel.clone(), "stopping", grace, move || {
            e.store(true, std::sync::atomic::Ordering::SeqCst)
        }));
        for _ in 0..3 {
            tx.send(()).unwrap();
        }
        drop(tx);
        handler.await.unwrap();
        assert!(cancel.is_cancelled());
        assert!(!exited.load(std::sync::atomic::Ordering::SeqCst), "a twin signal exited");
    }
}
