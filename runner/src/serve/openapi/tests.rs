//! The document against the routes the router registers, against the router itself (every
//! documented call answered by its handler, not by a fallback), and against the bounds the
//! request types' `validate()` hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::fleet::api::bounds as b;

fn doc() -> Value {
    serde_json::from_str(document()).expect("the document is JSON")
}

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Every (METHOD, path) of the document.
fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    let paths = doc["paths"].as_object().expect("the document has paths");
    paths
        .iter()
        .flat_map(|(path, item)| {
            METHODS
                .iter()
                .filter(|m| item.get(**m).is_some())
                .map(move |m| (m.to_uppercase(), path.clone()))
        })
        .collect()
}

#[test]
fn every_api_route_is_documented() {
    let list = routed();
    let routes: BTreeSet<(String, String)> =
        list.iter().map(|(m, p)| (m.to_string(), p.clone())).collect();
    assert_eq!(routes.len(), list.len(), "a route is twice in the tables: {list:?}");
    let outside: Vec<_> = routes.iter().filter(|(_, p)| !p.starts_with("/api/")).collect();
    assert!(outside.is_empty(), "the API's tables hold routes outside /api/: {outside:?}");
    let documented = documented(&doc());
    let show = |s: Vec<&(String, String)>| {
        s.iter().map(|(m, p)| format!("{m} {p}")).collect::<Vec<_>>().join(", ")
    };
    let missing: Vec<_> = routes.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "routed but not in /api/openapi.json: {} (put #[utoipa::path] on the handler and name \
         it in ApiDoc's paths, serve/openapi.rs)",
        show(missing)
    );
    let unrouted: Vec<_> = documented.difference(&routes).collect();
    assert!(
        unrouted.is_empty(),
        "in /api/openapi.json but not routed: {} (a path or method that differs from the \
         route's, or a route missing from its table)",
        show(unrouted)
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("the sources").flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A route the tables do not see would not be checked above: every `.route(...)`,
/// `.nest(...)` of a path under `/api` must come from a table, and the worker API's module
/// (nested under its prefix) registers no path of its own.
#[test]
fn no_api_route_bypasses_the_tables() {
    let serve = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/serve");
    let mut files = Vec::new();
    rust_files(&serve, &mut files);
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("openapi/tests.rs")) {
        let text = std::fs::read_to_string(f).expect("a source file");
        let nested = f.starts_with(serve.join("api"));
        for call in [".route(", ".route_service(", ".nest(", ".nest_service("] {
            for (at, _) in text.match_indices(call) {
                let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                if text[line_start..at].trim_start().starts_with("//") {
                    continue;
                }
                let arg = text[at + call.len()..].trim_start();
                if arg.starts_with("\"/api") || (nested && arg.starts_with('"')) {
                    let line = text[..at].matches('\n').count() + 1;
                    let shown = f.strip_prefix(&serve).unwrap_or(f).display();
                    let path = arg.split('"').nth(1).unwrap_or_default();
                    found.push(format!("{path} at serve/{shown}:{line}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "API routes registered outside the tables (serve::api_table, people::api_table, \
         api::worker::table), so neither checked against the document nor in it: {}",
        found.join(", ")
    );
}

#[test]
fn the_document_is_openapi_3_1_with_the_expected_paths() {
    let d = doc();
    let version = d["openapi"].as_str().expect("an openapi field");
    assert!(version.starts_with("3.1."), "openapi {version}");
    let paths = d["paths"].as_object().expect("paths");
    for p in [
        "/api/openapi.json",
        "/api/runs",
        "/api/run/{id}",
        "/api/v1/runs/{id}/approve",
        "/api/v1/worker-keys",
        "/api/v1/audit",
        "/api/v1/worker/version",
        "/api/v1/worker/register",
        "/api/v1/worker/claim",
        "/api/v1/worker/report",
        "/api/v1/worker/artifact/{sha}/chunk/{n}",
    ] {
        assert!(paths.contains_key(p), "{p} is not in the document");
    }
    let keys = &d["paths"]["/api/v1/worker-keys"];
    assert!(keys.get("get").is_some() && keys.get("post").is_some(), "{keys}");
    let schemes = d["components"]["securitySchemes"].as_object().expect("security schemes");
    for s in ["user_token", "worker_key", "worker_secret", "worker_id"] {
        assert!(schemes.contains_key(s), "no security scheme {s}");
    }
    assert_eq!(schemes["worker_id"]["in"], "header");
    assert_eq!(schemes["worker_id"]["name"], wire::WORKER_HEADER);
}

/// The security each operation names: the worker API's its key or its id and secret, the
/// people's changes a user's token.
#[test]
fn each_call_names_how_it_authenticates() {
    let d = doc();
    let ops = d["paths"].as_object().expect("paths").iter().flat_map(|(path, item)| {
        item.as_object().into_iter().flatten().map(move |(m, op)| (path.as_str(), m, op))
    });
    let mut checked = 0;
    for (path, method, op) in ops {
        let names: BTreeSet<String> = op["security"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r.as_object().into_iter().flat_map(|o| o.keys().cloned()))
            .collect();
        let want: &[&str] = match path {
            "/api/v1/worker/version" | "/api/openapi.json" => &[],
            "/api/v1/worker/register" => &["worker_key"],
            p if p.starts_with("/api/v1/worker/") => &["worker_id", "worker_secret"],
            _ => &["user_token"],
        };
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(names, want, "{method} {path}");
        checked += 1;
    }
    assert!(checked > 30, "{checked} operations");
}

/// Every `$ref` of the document names a schema it holds (one left out of `components` would
/// leave a client with a dangling reference).
#[test]
fn every_reference_resolves() {
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    out.push(r.clone());
                }
                o.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    let d = doc();
    let mut all = Vec::new();
    refs(&d, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{r}"));
        assert!(d["components"]["schemas"].get(name).is_some(), "{r} is not in the document");
    }
}

/// The request types' bounds as the document words them, each from the constant its
/// `validate()` checks (the schema attributes take literals).
#[test]
fn the_documented_bounds_are_the_checked_ones() {
    use crate::fleet::queue::people::{PRIORITY, THROUGHPUT};
    let name = b::NAME_MAX as f64;
    let reason = b::REASON_MAX as f64;
    let tokens = b::TOKENS_MAX as f64;
    let conc = b::CONCURRENCY_MAX as f64;
    let (lmin, lmax) = (b::LEASE_MIN, b::LEASE_MAX);
    let want: &[(&str, &str, &str, f64)] = &[
        ("RegisterRequest", "host", "minLength", 1.0),
        ("RegisterRequest", "host", "maxLength", name),
        ("RegisterRequest", "pid", "minimum", 1.0),
        ("RegisterRequest", "pid", "maximum", i32::MAX as f64),
        ("RegisterRequest", "concurrency", "minimum", 1.0),
        ("RegisterRequest", "concurrency", "maximum", conc),
        ("RegisterRequest", "lease_secs", "minimum", lmin),
        ("RegisterRequest", "lease_secs", "maximum", lmax),
        ("RegisterRequest", "version", "minLength", 1.0),
        ("RegisterRequest", "version", "maxLength", name),
        ("RegisterRequest", "cpu", "maxLength", name),
        ("RegisterRequest", "cores", "minimum", 1.0),
        ("RegisterRequest", "cores", "maximum", (1 << 20) as f64),
        ("ClaimRequest", "only", "minimum", 1.0),
        ("ClaimRequest", "skip", "maxItems", tokens),
        ("ClaimRequest", "current", "minimum", 1.0),
        ("ClaimRequest", "n", "minimum", 1.0),
        ("ClaimRequest", "n", "maximum", conc),
        ("ClaimRequest", "lease_secs", "minimum", lmin),
        ("ClaimRequest", "lease_secs", "maximum", lmax),
        ("ClaimRequest", "tune_in_flight", "minimum", 1.0),
        ("ClaimRequest", "tune_in_flight", "maximum", b::TUNE_IN_FLIGHT_MAX as f64),
        ("HeartbeatRequest", "tokens", "maxItems", tokens),
        ("HeartbeatRequest", "lease_secs", "minimum", lmin),
        ("HeartbeatRequest", "lease_secs", "maximum", lmax),
        ("ReleaseRequest", "tokens", "maxItems", tokens),
        ("RefuseRequest", "run", "minimum", 1.0),
        ("RefuseRequest", "reason", "maxLength", reason),
        ("RefuseRequest", "tokens", "maxItems", tokens),
        ("PairRef", "run", "minimum", 1.0),
        ("PairRef", "pairing", "minimum", 0.0),
        ("PairRef", "pair", "minimum", 0.0),
        ("PairRef", "token", "minimum", 1.0),
        ("IncidentRequest", "what", "maxLength", reason),
        ("ReportRequest", "records", "minItems", 2.0),
        ("ReportRequest", "records", "maxItems", 2.0),
        ("SettleRequest", "run", "minimum", 1.0),
        ("EngineLoadedRequest", "run", "minimum", 1.0),
        ("EngineLoadedRequest", "engine", "minLength", 1.0),
        ("EngineLoadedRequest", "engine", "maxLength", name),
        ("EngineLoadedRequest", "commit", "minLength", 1.0),
        ("EngineLoadedRequest", "commit", "maxLength", name),
        ("EngineLoadedRequest", "build_secs", "minimum", 0.0),
        ("EngineLoadedRequest", "build_secs", "maximum", b::BUILD_SECS_MAX),
        ("EngineLoadedRequest", "nodes", "minimum", 0.0),
        ("EngineLoadedRequest", "nps", "minimum", 0.0),
        ("EngineLoadedRequest", "error", "maxLength", reason),
        ("OutstandingRequest", "only", "minimum", 1.0),
        ("OutstandingRequest", "skip", "maxItems", tokens),
        ("ModifyBody", "priority", "minimum", *PRIORITY.start() as f64),
        ("ModifyBody", "priority", "maximum", *PRIORITY.end() as f64),
        ("ModifyBody", "throughput", "minimum", *THROUGHPUT.start() as f64),
        ("ModifyBody", "throughput", "maximum", *THROUGHPUT.end() as f64),
        ("ModifyBody", "games", "minimum", 0.0),
        ("Name", "", "minLength", 1.0),
        ("Name", "", "maxLength", crate::fleet::bounded::NAME_MAX as f64),
    ];
    let d = doc();
    let schemas = d["components"]["schemas"].as_object().expect("schemas");
    let mut found: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    let bounds = ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"];
    let types: BTreeSet<&str> = want.iter().map(|w| w.0).collect();
    for t in &types {
        let s = schemas.get(*t).unwrap_or_else(|| panic!("no schema {t}"));
        let mut props: Vec<(String, &Value)> = vec![(String::new(), s)];
        if let Some(p) = s["properties"].as_object() {
            props.extend(p.iter().map(|(k, v)| (k.clone(), v)));
        }
        for (field, v) in props {
            for k in bounds {
                if let Some(n) = v.get(k).and_then(Value::as_f64) {
                    found.insert((t.to_string(), field.clone(), k.to_string()), n);
                }
            }
        }
    }
    let want: BTreeMap<(String, String, String), f64> = want
        .iter()
        .map(|(t, f, k, v)| ((t.to_string(), f.to_string(), k.to_string()), *v))
        .collect();
    assert_eq!(found, want, "the document's bounds (left) against the checked ones (right)");
}

/// A server over no database, on a free port of this machine.
async fn serve(private: bool) -> String {
    let dir = std::env::temp_dir().join("runner-openapi-test-no-results");
    let mut app = App::new(dir, None).expect("an app");
    app.people.private = private;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let router = crate::serve::router(Arc::new(app));
    tokio::spawn(crate::serve::listen::serve_on(listener, router, None, std::future::pending()));
    format!("http://{addr}")
}

fn client() -> reqwest::Client {
    // reqwest is built without a default TLS provider; plain HTTP needs one named all the same.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// An answer's status, its `x-runner-api` header and its body.
async fn call(http: &reqwest::Client, method: &str, url: &str) -> (u16, bool, String) {
    let m = Method::from_bytes(method.as_bytes()).expect("a method");
    let r = http
        .request(m, url)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("an answer");
    let ours = r.headers().contains_key(wire::SERVER_HEADER);
    (r.status().as_u16(), ours, r.text().await.unwrap_or_default())
}

/// The real router answers every documented call by its own handler: not 405 (another
/// method), not the answer of an unrouted path beside it (the worker API's typed 404, the
/// pages' 404). The database is absent, so each answers a refusal of its own, or its data.
#[tokio::test]
async fn the_router_answers_every_documented_call() {
    let base = serve(false).await;
    let http = client();
    let worker = format!("{}/", wire::PREFIX);
    let mut checked = 0;
    for (method, path) in documented(&doc()) {
        let url = format!(
            "{base}{}",
            path.replace("{id}", "1")
                .replace("{sha}", &"0".repeat(64))
                .replace("{n}", "0")
                .replace("{name}", "box1")
        );
        assert!(!url.contains('{'), "a path parameter the test does not fill: {path}");
        let beside = if path.starts_with(&worker) {
            format!("{base}{}/no-such-call", wire::PREFIX)
        } else {
            format!("{base}/api/no-such-call")
        };
        let unrouted = call(&http, &method, &beside).await;
        assert_eq!(unrouted.0, 404, "{method} {beside}");
        let got = call(&http, &method, &url).await;
        assert_ne!(got.0, 405, "{method} {path}: the path is routed for another method");
        assert_ne!(got, unrouted, "{method} {path}: answered as an unrouted path");
        if path.starts_with(&worker) {
            assert!(got.1, "{method} {path}: no {} header", wire::SERVER_HEADER);
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked} calls");
}

/// `/api/openapi.json` is served as JSON, the document built once, and stays public on a
/// `--private` server whose other reading needs a login.
#[tokio::test]
async fn the_document_is_served_and_public() {
    let http = client();
    for private in [false, true] {
        let base = serve(private).await;
        let r = http.get(format!("{base}{DOCUMENT_PATH}")).send().await.expect("an answer");
        assert_eq!(r.status().as_u16(), 200, "private {private}");
        let ct = r.headers().get("content-type").and_then(|v| v.to_str().ok()).map(String::from);
        assert_eq!(ct.as_deref(), Some("application/json"));
        let served: Value = r.json().await.expect("JSON");
        assert!(served["openapi"].as_str().is_some_and(|v| v.starts_with("3.1.")), "{served}");
        assert_eq!(served, doc());
        let runs = http.get(format!("{base}/api/runs")).send().await.expect("an answer");
        assert_eq!(runs.status().as_u16(), if private { 401 } else { 200 });
    }
    assert!(std::ptr::eq(document(), document()), "the document is made once");
}
