//! A cloneable cancellation flag (Ctrl-C, SIGTERM, or an SPRT decision stops new work), and the
//! signal handler that sets it.

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
/// flight) on stderr.
pub fn cancel_on_signals(cancel: Cancel, message: &'static str) {
    tokio::spawn(async move {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term => {},
        }
        eprintln!("{message}");
        cancel.cancel();
    });
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
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter).await.unwrap().unwrap();
        assert!(a.is_cancelled());
        a.cancelled().await;
    }
}
