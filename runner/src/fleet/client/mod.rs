//! The worker's HTTP client of `runner serve`'s worker API (`/api/v1/worker/...`, the types of
//! [`super::api`]): one request per call, with a deadline; its failures sorted in two, as the
//! database link sorts them ([`super::link::is_transient`]): [`Passing`] (no connection, a
//! deadline, 408, 429, a 5xx, or any answer that is not this server's: a proxy's error page
//! or status) is retried by the caller with jittered backoff, never waiting less than the
//! answer's `Retry-After`; [`Refusal`] (a typed refusal of this server, with its
//! [`Code`](super::api::Code)) is lasting, and only it may become an incident.
//!
//! TLS is rustls with the ring provider (the provider the database connections use), trusting
//! Mozilla's roots, or only the CA of `--ca FILE`.

mod calls;
pub mod people;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::api::{self, ErrorBody};
use super::queue::WorkerId;

/// A failure that may pass: try again, not before `retry_after` when the server said so.
#[derive(Debug)]
pub struct Passing {
    pub what: String,
    pub retry_after: Option<Duration>,
    /// The status of an answer that was not this server's (no API header), if any.
    pub foreign_status: Option<u16>,
}

impl std::fmt::Display for Passing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for Passing {}

/// A typed refusal of this server.
#[derive(Debug)]
pub struct Refusal(pub ErrorBody);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Refusal {}

/// The longest `Retry-After` honoured (a longer one is taken as this).
const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

/// The `Retry-After` of an error's chain, if a [`Passing`] carries one.
pub fn retry_after(e: &anyhow::Error) -> Option<Duration> {
    e.chain().find_map(|c| c.downcast_ref::<Passing>().and_then(|p| p.retry_after))
}

/// The HTTP client of one worker process.
pub struct WorkerClient {
    http: reqwest::Client,
    /// `https://host:port`, no trailing slash.
    base: String,
    /// The worker key (registration only).
    key: Option<String>,
    /// What a certificate this client does not trust is told with ([`tls_hint`]).
    tls_hint: &'static str,
}

/// How a request authenticates.
enum Auth<'a> {
    /// The worker key (registering).
    Key(&'a str),
    /// A registered worker's id and secret.
    Worker(&'a WorkerId),
    /// Nothing (the server's version).
    None,
}

impl WorkerClient {
    /// A client of the server at `base` (`http://` or `https://`), trusting only the CA in
    /// `ca` when given; each request within `timeout`.
    pub fn new(
        base: &str,
        ca: Option<&Path>,
        key: Option<String>,
        timeout: Duration,
    ) -> Result<WorkerClient> {
        let base = base.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            bail!("--server {base}: not an http:// or https:// URL");
        }
        let tls = tls_config(ca)?;
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            // Below the server's 10 s wait for a next request on a kept connection: a
            // connection is never reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(5))
            .user_agent(concat!("runner-worker/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("cannot make the HTTP client")?;
        Ok(WorkerClient { http, base, key, tls_hint: tls_hint(ca) })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The worker key, or the line saying a worker of a server needs one.
    fn key(&self) -> Result<&str> {
        self.key.as_deref().ok_or_else(|| {
            anyhow!(
                "a worker of a server needs its key (--key-file FILE or RUNNER_WORKER_KEY, as \
                 `runner worker-key add` printed it)"
            )
        })
    }

    /// One request: `body` as JSON (when given), the answer read as `A`.
    async fn json<B: Serialize, A: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        auth: Auth<'_>,
        body: Option<&B>,
    ) -> Result<A> {
        let res = self.send(method, path, auth, body).await?;
        let bytes = res.bytes().await.map_err(|e| passing(format!("{path}: {e}"), None))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| passing(format!("{path}: the server's answer does not parse: {e}"), None))
    }

    /// One request whose answer is bytes.
    async fn bytes(&self, path: &str, w: &WorkerId) -> Result<Vec<u8>> {
        let res = self.send::<()>(Method::GET, path, Auth::Worker(w), None).await?;
        let b = res.bytes().await.map_err(|e| passing(format!("{path}: {e}"), None))?;
        Ok(b.to_vec())
    }

    async fn send<B: Serialize>(
        &self,
        method: Method,
        path: &str,
        auth: Auth<'_>,
        body: Option<&B>,
    ) -> Result<reqwest::Response> {
        let url = format!("{}{}{path}", self.base, api::PREFIX);
        let mut req =
            self.http.request(method, &url).header(api::VERSION_HEADER, api::PROTOCOL.to_string());
        req = match auth {
            Auth::Key(k) => req.bearer_auth(k),
            Auth::Worker(w) => {
                req.bearer_auth(w.secret()).header(api::WORKER_HEADER, w.id.to_string())
            }
            Auth::None => req,
        };
        if let Some(b) = body {
            req = req.json(b);
        }
        let res = req.send().await.map_err(|e| match untrusted(&e) {
            // A certificate this worker does not trust does not pass by waiting.
            Some(why) => anyhow!("{url}: TLS: {why} ({})", self.tls_hint),
            None => passing(format!("{url}: {}", chain(&e)), None),
        })?;
        let status = res.status();
        if status.is_success() {
            return Ok(res);
        }
        Err(refusal_of(status, res, path).await)
    }
}

/// The error of an answer that is not a success.
async fn refusal_of(status: StatusCode, res: reqwest::Response, path: &str) -> anyhow::Error {
    let retry_after = res
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s).min(RETRY_AFTER_MAX));
    let ours = res.headers().contains_key(api::SERVER_HEADER);
    let body = res.bytes().await.unwrap_or_default();
    let typed = ours.then(|| serde_json::from_slice::<ErrorBody>(&body).ok()).flatten();
    match typed {
        Some(e) if e.code.passing() => passing(format!("{path}: {}", e.message), retry_after),
        Some(e) => anyhow::Error::new(Refusal(e)),
        None => anyhow::Error::new(Passing {
            what: format!(
                "{path}: answered {status} without the worker API's header (a proxy, or not a \
                 runner server)"
            ),
            retry_after,
            foreign_status: Some(status.as_u16()),
        }),
    }
}

fn passing(what: String, retry_after: Option<Duration>) -> anyhow::Error {
    anyhow::Error::new(Passing { what, retry_after, foreign_status: None })
}

/// The TLS certificate error in `e`'s causes, if any. rustls's error sits inside an I/O error
/// (sometimes an I/O error inside another), whose `source` skips what it wraps: each I/O
/// error's own inner error is visited as well as its source.
pub(super) fn untrusted(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut todo: Vec<&(dyn std::error::Error + 'static)> = vec![e];
    while let Some(c) = todo.pop() {
        if let Some(r) = c.downcast_ref::<rustls::Error>()
            && matches!(
                r,
                rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
            )
        {
            return Some(r.to_string());
        }
        if let Some(inner) = c.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            todo.push(inner);
        }
        todo.extend(c.source());
    }
    None
}

/// An error and its causes on one line.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// What to check when the server's certificate is not trusted: without `--ca`, that a private
/// CA needs it; with it, that it must be the CA that signed the certificate (a self-signed
/// server certificate given as its own CA is refused: `CaUsedAsEndEntity`).
pub(super) fn tls_hint(ca: Option<&Path>) -> &'static str {
    match ca {
        None => "a private CA: --ca FILE",
        Some(_) => "--ca must be the CA that signed the server's certificate, not the certificate",
    }
}

/// rustls with the ring provider, trusting `ca`'s certificates only, else Mozilla's roots.
pub(super) fn tls_config(ca: Option<&Path>) -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    match ca {
        Some(path) => {
            let pem = std::fs::read(path)
                .with_context(|| format!("cannot read --ca {}", path.display()))?;
            for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
                let cert = cert.map_err(|e| anyhow!("--ca {}: {e}", path.display()))?;
                roots.add(cert).map_err(|e| anyhow!("--ca {}: {e}", path.display()))?;
            }
            if roots.is_empty() {
                bail!("--ca {} holds no PEM certificate", path.display());
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow!("TLS setup: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest's connect error holds rustls's inside two I/O errors
    /// (`Custom { kind: Other, error: Custom { kind: InvalidData, error: InvalidCertificate } }`):
    /// found, so a worker that does not trust the server stops instead of retrying.
    #[test]
    fn a_certificate_error_is_found_inside_nested_io_errors() {
        use std::io::{Error, ErrorKind};
        let bad = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let inner = Error::new(ErrorKind::InvalidData, bad);
        let outer = Error::other(inner);
        let why = untrusted(&outer).expect("the certificate error");
        assert!(why.contains("UnknownIssuer"), "{why}");
        let other = Error::other(Error::new(ErrorKind::InvalidData, "eof"));
        assert_eq!(untrusted(&other), None);
    }
}
