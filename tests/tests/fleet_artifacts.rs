//! Engines delivered through the fleet's server: `runner submit --server` uploads the engine
//! binaries, stored as artifacts in the database; a worker of the server with an empty cache,
//! no such path and no `--trust` fetches them, checks them and plays; a changed cache file is
//! fetched again; `runner gc` (the operator's, on the database's side) deletes the artifacts
//! no run names.

use std::path::Path;
use std::process::Command;

use e2e::fleet::{Fleet, WorkerOpts};
use e2e::http::{Reply, request};
use e2e::{bad_spec, stderr};

/// Submits a 4-game match of `a` against `b` over `book` through the server: the run's id.
fn submit(f: &Fleet, a: &str, b: &str, book: &str) -> i64 {
    f.submit(&e2e::fleet::match_args(a, b, book, "4"))
}

/// A worker of the server for `run` with artifact cache `cache` and no `--trust`: it runs only
/// what the server delivers. Returns its log once it ended successfully.
fn worker(f: &Fleet, name: &str, run: i64, cache: &Path) -> String {
    let (run, cache) = (run.to_string(), cache.display().to_string());
    let args = ["--run", &run, "--concurrency", "2", "--cache", &cache];
    f.worker_done(name, WorkerOpts { args: &args, trust: Some(&[]), ..Default::default() })
}

fn sha256_of(p: &Path) -> String {
    let o = Command::new("sha256sum").arg(p).output().expect("sha256sum");
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn a_worker_with_an_empty_cache_fetches_the_submitted_binary_and_plays() {
    let f = Fleet::new("fleet-artifacts");
    let book = e2e::write_book(&f.dir, 4);
    // The submitter's binary lives in a folder the worker never sees: it is gone when it plays.
    let theirs = f.dir.join("submitter");
    std::fs::create_dir_all(&theirs).unwrap();
    let copy = theirs.join("eng");
    std::fs::copy(e2e::badengine_bin(), &copy).unwrap();
    let sha = sha256_of(&copy);
    let a = format!("name=a,cmd={},arg=good", copy.display());
    let run = submit(&f, &a, &bad_spec("b", "good", None), &book);
    std::fs::remove_dir_all(&theirs).unwrap();
    // The same binary twice: one artifact, named by the run, in 1 MiB chunks.
    assert_eq!(f.sql("SELECT count(*) FROM artifacts WHERE sealed"), "1");
    assert_eq!(f.sql(&format!("SELECT sha FROM run_artifacts WHERE run_id = {run}")), sha);
    let size: u64 = std::fs::metadata(e2e::badengine_bin()).unwrap().len();
    assert_eq!(f.sql("SELECT size FROM artifacts"), size.to_string());
    assert_eq!(f.sql("SELECT count(*) FROM artifact_chunks"), size.div_ceil(1 << 20).to_string());

    // Served to a worker while its run is approved and active, through the worker API.
    let (probe_id, probe_secret) = probe_worker(&f);
    let first = chunk0(&f, &probe_id, &probe_secret, &sha);
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.bytes.len() as u64, size.min(1 << 20));

    let cache = f.dir.join("cache");
    let log = worker(&f, "w1", run, &cache);
    assert!(log.contains(&format!("fetched artifact {}", &sha[..12])), "{log}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete", "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "4");
    let cached = cache.join(&sha);
    assert_eq!(sha256_of(&cached), sha);
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&cached).unwrap().permissions().mode() & 0o111, 0o111);

    // A changed cache file is noticed and fetched again; an intact one is not fetched.
    std::fs::write(&cached, b"#!/bin/sh\nexit 1\n").unwrap();
    let b = bad_spec("b", "good", None);
    let run2 = submit(&f, &bad_spec("a", "good", None), &b, &book);
    let log = worker(&f, "w2", run2, &cache);
    assert!(log.contains("holds another file"), "{log}");
    assert!(log.contains("fetched artifact"), "{log}");
    assert_eq!(sha256_of(&cached), sha);
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run2}")), "complete", "{log}");
    let run3 = submit(&f, &bad_spec("a", "good", None), &b, &book);
    let log = worker(&f, "w3", run3, &cache);
    assert!(!log.contains("fetched artifact"), "{log}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run3}")), "complete", "{log}");

    // Not served once no approved, active run names it (every run is complete now), nor for
    // a run waiting for approval: refused as forbidden, no byte sent.
    for setup in ["", "UPDATE runs SET state = 'pending', approved_by = NULL"] {
        if !setup.is_empty() {
            f.sql(setup);
        }
        let (id, secret) = probe_worker(&f);
        let r = chunk0(&f, &id, &secret, &sha);
        assert_eq!(r.status, 403, "{setup}: {}", r.body);
        assert!(r.body.contains("belongs to no approved, active run"), "{}", r.body);
    }

    // gc keeps what a run names, and deletes the rest: the operator's on the database's side,
    // an approver's through the server; a user who is not an approver is refused and deletes
    // nothing.
    let o = f.operator(&["gc", "--min-age", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 artifact(s) deleted"));
    f.sql("DELETE FROM runs");
    let dave = f.user("dave", false);
    let o = f.person_as(&dave, "gc", &["--min-age", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("only an approver"), "{}", stderr(&o));
    assert_eq!(f.sql("SELECT count(*) FROM artifacts"), "1", "dave deleted nothing");
    let o = f.person("gc", &["--min-age", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&sha) && out.contains("1 artifact(s) deleted"), "{out}");
    assert_eq!(f.sql("SELECT count(*) FROM artifact_chunks"), "0");
}

/// A worker registered through the server under the fleet's worker key: its id and secret.
fn probe_worker(f: &Fleet) -> (String, String) {
    let key = std::fs::read_to_string(&f.key_file).unwrap();
    let auth = format!("Bearer {}", key.trim());
    let body = r#"{"host":"probe","pid":1,"concurrency":1,"lease_secs":30,"version":"test"}"#;
    let h = [("Authorization", auth.as_str()), ("Content-Type", "application/json")];
    let r = request(f.port(), "POST", "/api/v1/worker/register", &h, body);
    assert_eq!(r.status, 200, "register: {}", r.body);
    let v: serde_json::Value = serde_json::from_str(&r.body).expect("register's answer");
    (v["worker"].to_string(), v["secret"].as_str().expect("a secret").to_string())
}

/// Chunk 0 of artifact `sha`, asked for by worker `id` with `secret`.
fn chunk0(f: &Fleet, id: &str, secret: &str, sha: &str) -> Reply {
    let auth = format!("Bearer {secret}");
    let h = [("Authorization", auth.as_str()), ("x-runner-worker", id)];
    request(f.port(), "GET", &format!("/api/v1/worker/artifact/{sha}/chunk/0"), &h, "")
}
