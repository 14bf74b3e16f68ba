//! Engines delivered from source at a commit: `runner submit --server URL --engine
//! name=dev,src=REPO,rev=REV,build=...,bin=...` archives the commit, uploads it through the
//! fleet's server into the database and benches a build of it; a worker of the server with an
//! empty cache builds it, checks the bench and plays;
//! a second run of the same source takes the build from the cache; a build that fails and a
//! bench that differs are refused (recorded, shown in `runner status`), while another run is
//! still served. The "source" is a small git repository made here: its build (a shell script)
//! makes a wrapper of the test engine whose bench prints Stockfish's form.

use std::path::{Path, PathBuf};
use std::process::Command;

use e2e::fleet::{Fleet, WorkerOpts, match_args};
use e2e::{bad_spec, stderr};

/// Submits a 4-game match of `a` against `b` through the server; returns the run's id and
/// submit's stderr.
fn submit(f: &Fleet, book: &str, a: &str, b: &str) -> (i64, String) {
    f.submit_as(&f.token_file, &match_args(a, b, book, "4"))
}

/// A worker of the server (for `run`, or every run) with artifact cache `cache` and no
/// `--trust`: it runs only what the server delivers. Returns its log once it ended
/// successfully.
fn worker(f: &Fleet, name: &str, run: Option<i64>, cache: &Path) -> String {
    let (cache, bad) = (cache.display().to_string(), e2e::badengine_bin().display().to_string());
    let run = run.map(|r| r.to_string());
    // The built script starts the test engine, which a checkout in a home or under /tmp would
    // have inside a folder the box hides.
    let mut args = vec!["--concurrency", "2", "--cache", &cache, "--box-show", &bad];
    if let Some(r) = &run {
        args.extend(["--run", r.as_str()]);
    }
    f.worker_done(name, WorkerOpts { args: &args, trust: Some(&[]), ..Default::default() })
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
        .args(args)
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A git repository whose commit `v1` builds `out/eng` (a wrapper of the test engine, whose
/// `bench` prints 4242 nodes as Stockfish prints them), with `fail.sh`, a build that fails.
fn source_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("engine-src");
    std::fs::create_dir_all(&repo).unwrap();
    let eng = format!(
        "#!/bin/sh\nif [ \"$1\" = bench ]; then\n  echo 'Total time (ms) : 12' >&2\n  \
         echo 'Nodes searched  : 4242' >&2\n  echo 'Nodes/second    : 99000' >&2\n  exit 0\nfi\n\
         exec {} good\n",
        e2e::badengine_bin().display()
    );
    std::fs::write(repo.join("eng.in"), eng).unwrap();
    std::fs::write(repo.join("build.sh"), "mkdir -p out\ncp eng.in out/eng\nchmod +x out/eng\n")
        .unwrap();
    std::fs::write(repo.join("fail.sh"), "echo 'eng.c:1: error: boom' >&2\nexit 2\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "v1"]);
    git(&repo, &["tag", "v1"]);
    // A later commit: REV must pick v1, not HEAD.
    std::fs::write(repo.join("README"), "later\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "later"]);
    repo
}

#[test]
fn a_worker_with_an_empty_cache_builds_the_submitted_commit_checks_its_bench_and_plays() {
    let f = Fleet::new("fleet-source");
    let book = e2e::write_book(&f.dir, 4);
    let repo = source_repo(&f.dir);
    let v1 = git(&repo, &["rev-parse", "v1"]);
    let b = bad_spec("b", "good", None);
    let dev = format!("name=dev,src={},rev=v1,build=sh build.sh,bin=out/eng", repo.display());
    let (run1, said) = submit(&f, &book, &dev, &b);
    assert!(said.contains(&format!("engine dev: commit {}", &v1[..12])), "{said}");
    assert!(said.contains("bench 4242 nodes"), "{said}");
    // The submission names the commit, the build and the node count; the archive is an
    // artifact of kind source of the run, next to the test engine's binary.
    let source = f.sql(&format!(
        "SELECT e->'source'->>'commit' || ' ' || (e->'source'->>'nodes') || ' ' || \
           (e->'source'->>'build') FROM runs, jsonb_array_elements(submission->'engines') e \
         WHERE id = {run1} AND e->>'name' = 'dev'"
    ));
    assert_eq!(source, format!("{v1} 4242 sh build.sh"));
    assert_eq!(
        f.sql(&format!(
            "SELECT string_agg(a.kind, ',' ORDER BY a.kind) FROM run_artifacts r \
             JOIN artifacts a USING (sha) WHERE r.run_id = {run1}"
        )),
        "binary,source"
    );

    // A revision that is not there is refused before anything is stored.
    let nope = format!("name=dev,src={},rev=nope,build=sh build.sh,bin=out/eng", repo.display());
    let o = f.person("submit", &["match", "--engine", &nope, "--engine", &b, "--book", &book]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("no commit \"nope\""), "{e}");
    assert_eq!(f.sql("SELECT count(*) FROM runs"), "1");

    // A worker with an empty cache builds it and plays the run to its end.
    let cache = f.dir.join("cache");
    let log = worker(&f, "w1", Some(run1), &cache);
    assert!(log.contains(&format!("built engine dev (commit {})", &v1[..12])), "{log}");
    assert_eq!(f.state(run1), "complete", "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run1}")), "4");
    assert_eq!(
        f.sql(&format!(
            "SELECT build || ' ' || nodes || ' ' || nps || ' ' || (build_secs >= 0) \
             FROM engine_loads WHERE run_id = {run1} AND engine = 'dev'"
        )),
        "built 4242 99000 true"
    );
    assert_one_build_cached(&cache);

    // The same commit again, named by a git URL: the same archive, the build from the cache.
    let url =
        format!("name=dev,src=file://{},rev=v1,build=sh build.sh,bin=out/eng", repo.display());
    let (run2, _) = submit(&f, &book, &url, &b);
    assert_eq!(f.sql("SELECT count(*) FROM artifacts WHERE kind = 'source'"), "1");
    let log = worker(&f, "w2", Some(run2), &cache);
    assert!(log.contains("build taken from the cache") && !log.contains("built engine"), "{log}");
    assert_eq!(f.state(run2), "complete", "{log}");
    assert_eq!(
        f.sql(&format!("SELECT build FROM engine_loads WHERE run_id = {run2} AND engine = 'dev'")),
        "cached"
    );

    // A build that fails, and a bench that is not the submitted one (both given `bench=N`,
    // so not built at submission): refused with the reason; another run is still served.
    let fails =
        format!("name=dev,src={},rev=v1,build=sh fail.sh,bin=out/eng,bench=4242", repo.display());
    let (run3, said) = submit(&f, &book, &fails, &b);
    assert!(said.contains("not built here"), "{said}");
    let differs =
        format!("name=dev,src={},rev=v1,build=sh build.sh,bin=out/eng,bench=1111", repo.display());
    let (run4, _) = submit(&f, &book, &differs, &b);
    let (run5, _) = submit(&f, &book, &bad_spec("a", "good", None), &b);
    let log = worker(&f, "w3", None, &cache);
    assert_eq!(f.state(run5), "complete", "{log}");
    let reason = |run: i64| f.sql(&format!("SELECT reason FROM refusals WHERE run_id = {run}"));
    let why3 = reason(run3);
    assert!(why3.starts_with(&format!("engine dev: build of {} failed", &v1[..12])), "{why3}");
    assert!(why3.contains("boom"), "{why3}");
    let why4 = reason(run4);
    assert!(why4.contains("differs: 4242 nodes here, 1111 submitted"), "{why4}");
    // One worker refused each: the runs wait for others.
    assert_eq!((f.state(run3), f.state(run4)), ("active".into(), "active".into()));
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id IN ({run3}, {run4})")), "0");
    assert_eq!(f.sql(&format!("SELECT build FROM engine_loads WHERE run_id = {run3}")), "failed");

    assert_status_shows_builds_and_refusals(&f, run1, run3, &v1);
}

/// The cache holds one build and its recorded hash (`build-KEY.sha256`, checked before each
/// use), and no build folder is left behind.
fn assert_one_build_cached(cache: &Path) {
    let built: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("build-"))
        .collect();
    let (hashes, builds): (Vec<&String>, Vec<&String>) =
        built.iter().partition(|n| n.ends_with(".sha256"));
    assert_eq!(builds.len(), 1, "one build in the cache: {built:?}");
    assert_eq!(hashes.len(), 1, "one recorded build hash: {built:?}");
    let leftovers = std::fs::read_dir(cache)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'));
    assert_eq!(leftovers.count(), 0, "no build folder left behind");
}

/// Shown: the refusals and the failed build of `refused` and the build of `built` (commit
/// `v1`) in status, the bench speed in workers.
fn assert_status_shows_builds_and_refusals(f: &Fleet, built: i64, refused: i64, v1: &str) {
    let text = f.said("status", &[&refused.to_string()]);
    assert!(text.contains("refused by 1 worker(s)") && text.contains("boom"), "{text}");
    assert!(text.contains("builds:") && text.contains("build FAILED"), "{text}");
    let text = f.said("status", &[&built.to_string()]);
    assert!(text.contains(&format!("dev at {}: built in", &v1[..12])), "{text}");
    assert!(text.contains("bench 0.10 Mnps"), "{text}");
    // A source engine's command is the binary workers build, not the submitter's build folder.
    assert!(text.contains("command: (the built ") && !text.contains(".runner-source"), "{text}");
    let text = f.said("workers", &["--all"]);
    assert!(text.contains("dev 99 knps"), "{text}");
}
