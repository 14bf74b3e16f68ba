//! A person's way to the fleet's server: `runner status|approve|cancel|modify|purge|delete|
//! workers|worker-key --server URL` speak the people's JSON API (`serve/people/api.rs`) with
//! the user's token (`--token-file FILE` or `RUNNER_TOKEN`), over rustls as the worker's client
//! does (`--ca FILE` for a private CA). A refusal of the server is its one-line reason.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use reqwest::Method;
use serde_json::Value;

/// The server when no `--server` is given.
pub const SERVER_ENV: &str = "RUNNER_SERVER";

/// The server `RUNNER_SERVER` names, if it names one (blank: none).
pub fn server_from_env() -> Option<String> {
    std::env::var(SERVER_ENV).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// The user's token when no `--token-file` is given.
pub const TOKEN_ENV: &str = "RUNNER_TOKEN";

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The people's API of one server, as one user (or anonymous, for reading).
pub struct PeopleClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    tls_hint: &'static str,
}

impl PeopleClient {
    /// A client of `server` (`https://host[:port]`, or `http://` on a trusted network).
    pub fn new(server: &str, ca: Option<&Path>, token: Option<String>) -> Result<PeopleClient> {
        let base = server.trim_end_matches('/').to_string();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            bail!("--server {server}: give the server's address, https://HOST[:PORT]");
        }
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(super::tls_config(ca)?)
            .timeout(REQUEST_TIMEOUT)
            .pool_idle_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| anyhow!("cannot set up the HTTP client: {e}"))?;
        Ok(PeopleClient { http, base, token, tls_hint: super::tls_hint(ca) })
    }

    /// Whether requests carry a user's token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The server's address, as given.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// `GET path` (under the server's root, e.g. `/api/v1/status`).
    pub async fn get(&self, path: &str) -> Result<Value> {
        self.call(Method::GET, path, Body::None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Result<Value> {
        self.call(Method::POST, path, Body::Json(body)).await
    }

    /// `PUT path` with bytes (an artifact's chunk).
    pub async fn put_bytes(&self, path: &str, bytes: Vec<u8>) -> Result<Value> {
        self.call(Method::PUT, path, Body::Bytes(bytes)).await
    }

    async fn call(&self, method: Method, path: &str, body: Body) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method, &url);
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        req = match body {
            Body::None => req,
            Body::Json(b) => req.json(&b),
            Body::Bytes(b) => req.header("content-type", "application/octet-stream").body(b),
        };
        let res = req.send().await.map_err(|e| match super::untrusted(&e) {
            Some(why) => anyhow!("{}: TLS: {why} ({})", self.base, self.tls_hint),
            None => anyhow!("{}: {}", self.base, super::chain(&e)),
        })?;
        let status = res.status();
        let text = res.text().await.map_err(|e| anyhow!("{url}: {}", super::chain(&e)))?;
        let json: Option<Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return json
                .ok_or_else(|| anyhow!("{url}: the answer is not JSON (not a runner server?)"));
        }
        match json.as_ref().and_then(|j| j.get("error")).and_then(Value::as_str) {
            Some(reason) => bail!("{reason}"),
            None => {
                bail!("{url}: answered {status} (not a runner server, or a proxy's error page)")
            }
        }
    }
}

/// What a request carries.
enum Body {
    None,
    Json(Value),
    Bytes(Vec<u8>),
}

impl crate::fleet::artifacts::ArtifactDoor for PeopleClient {
    async fn sealed(&self, sha: &str) -> Result<bool> {
        let v = self.get(&format!("/api/v1/artifacts/{sha}")).await?;
        Ok(v.get("sealed").and_then(Value::as_bool).unwrap_or(false))
    }

    async fn put(&self, sha: &str, size: u64, kind: &str, n: usize, bytes: &[u8]) -> Result<()> {
        let path = format!("/api/v1/artifacts/{sha}/chunks/{n}?size={size}&kind={kind}");
        self.put_bytes(&path, bytes.to_vec())
            .await
            .with_context(|| format!("chunk {n} of {sha}"))?;
        Ok(())
    }

    async fn seal(&self, sha: &str) -> Result<()> {
        self.post(&format!("/api/v1/artifacts/{sha}/seal"), serde_json::json!({})).await?;
        Ok(())
    }
}

/// The user's token: `file`'s one line, else `RUNNER_TOKEN`, else none.
pub fn token(file: Option<&Path>) -> Result<Option<String>> {
    use super::super::credentials::{check_kind, secret_file};
    if let Some(f) = file {
        let token = secret_file(f, "token", "`runner user add` or `runner user token` printed it")?;
        check_kind(&token, false).with_context(|| format!("the token file {}", f.display()))?;
        return Ok(Some(token));
    }
    let token =
        std::env::var(TOKEN_ENV).ok().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
    if let Some(t) = &token {
        check_kind(t, false).context(TOKEN_ENV)?;
    }
    Ok(token)
}

/// A field of an answer as text: a string as it is, anything else as JSON ("" when missing).
pub fn field(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}
