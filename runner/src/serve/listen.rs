//! Serving connections: hyper's HTTP/1 connection builder over each accepted socket (plain or
//! TLS by tokio-rustls), with a header read timeout (a client that does not send its request's
//! headers within [`HEADER_TIMEOUT`] is dropped), a cap on open connections taken at accept
//! ([`MAX_CONNECTIONS`]: past it, new connections wait in the listen queue), a deadline for the
//! TLS handshake, and a stop that finishes the requests in flight: on the stop signal no new
//! connection is accepted, every connection is told to close after its current response, and
//! whatever is still open after [`STOP_GRACE`] (an event stream) is dropped.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::play::cancel::Cancel;

/// The longest a client may take to send a request's headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections open at once, at the most.
pub const MAX_CONNECTIONS: usize = 1024;

/// The longest a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a stopping server lets its requests in flight finish.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// Connections the kernel queues before the server accepts them. tokio's default, 128, made a
/// fleet of 500 workers starting at once wait a second for a retry of every connection past it
/// (docs/measurements/fleet-load.md, 2026-11-29); the kernel caps it at `net.core.somaxconn`.
pub const LISTEN_BACKLOG: u32 = 1024;

/// A listener on `addr` with a queue of [`LISTEN_BACKLOG`] connections.
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // As the standard library's bind does on Unix: a restarted server takes its port at once.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The TLS acceptor of a certificate chain and its key (PEM files).
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let pem = std::fs::read(cert).with_context(|| format!("cannot read {}", cert.display()))?;
    let chain = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("--tls-cert {}: {e}", cert.display()))?;
    if chain.is_empty() {
        bail!("--tls-cert {} holds no PEM certificate", cert.display());
    }
    let pem = std::fs::read(key).with_context(|| format!("cannot read {}", key.display()))?;
    let key_der = rustls_pemfile::private_key(&mut pem.as_slice())
        .map_err(|e| anyhow!("--tls-key {}: {e}", key.display()))?
        .ok_or_else(|| anyhow!("--tls-key {} holds no PEM private key", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow!("TLS setup: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| anyhow!("--tls-cert/--tls-key: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves `router` on `listener` (TLS when `tls` is given) until `stop` completes, then lets
/// the requests in flight finish for up to [`STOP_GRACE`].
pub async fn serve_on(
    listener: TcpListener,
    router: Router,
    tls: Option<TlsAcceptor>,
    stop: impl Future<Output = ()>,
) -> Result<()> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let stopping = Cancel::new();
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            biased;
            _ = &mut stop => break,
            p = slots.clone().acquire_owned() => p.context("the connection cap closed")?,
        };
        let stream = tokio::select! {
            biased;
            _ = &mut stop => break,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(_) => {
                    // Out of file descriptors, or a connection reset before it was accepted:
                    // wait a moment rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        // The peer's address, as `axum::serve`'s connect info gives it (login limits use it).
        let router = router.clone().layer(axum::Extension(axum::extract::ConnectInfo(peer)));
        let (tls, stopping) = (tls.clone(), stopping.clone());
        tokio::spawn(async move {
            let _permit = permit;
            match tls {
                None => connection(stream, router, stopping).await,
                Some(acceptor) => {
                    let hs = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                    if let Ok(Ok(s)) = hs.await {
                        connection(s, router, stopping).await;
                    }
                }
            }
        });
    }
    stopping.cancel();
    // Every connection hands its slot back when it ends.
    let all = u32::try_from(MAX_CONNECTIONS).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(STOP_GRACE, slots.acquire_many(all)).await;
    Ok(())
}

/// One connection: HTTP/1 with the header timeout, closed after its current response when
/// the server stops.
async fn connection<S>(io: S, router: Router, stopping: Cancel)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = TowerToHyperService::new(router);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
    let conn = builder.serve_connection(TokioIo::new(io), svc);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stopping.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Completes at the first Ctrl-C or SIGTERM, saying so.
pub async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut t) => {
                t.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
    errln!("stopping: requests in flight finish (at most {} s)", STOP_GRACE.as_secs());
}
