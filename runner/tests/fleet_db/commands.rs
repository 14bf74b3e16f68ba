//! The fleet's commands as a user runs them, against a throwaway PostgreSQL (Unix socket only):
//! `runner db init`, `runner submit` (match and a sweep, with `RUNNER_DB`), `runner status`,
//! `runner pull` into a folder that `runner report` reads, and `runner cancel`. The pairs are
//! reported through the queue with synthetic games (the worker command is tested elsewhere).

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use e2e::pg::TempPg;
use e2e::{engine_bin, runner_bin, scratch};
use runner::fleet::connect::parse_target;
use runner::fleet::queue::{self, PairReport, Reported};
use runner::fleet::schema;
use runner::fleet::submission::Submission;
use serde_json::{Value, json};

fn runner(cwd: &Path, db: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(runner_bin());
    c.args(args).current_dir(cwd).env_remove("RUNNER_DB").env_remove("RUNNER_SERVER");
    if let Some(url) = db {
        c.env("RUNNER_DB", url);
    }
    c.output().expect("running runner")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

fn ok(o: Output, what: &str) -> String {
    let (out, err) = text(&o);
    assert!(o.status.success(), "{what} failed:\n{out}\n{err}");
    out
}

/// The run id of `runner submit`'s last stdout line `run ID`.
fn run_id(out: &str) -> i64 {
    let last = out.lines().last().unwrap_or_default();
    last.strip_prefix("run ").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{out}"))
}

/// Leases and reports every pair of `run` with synthetic games (as a worker under the tests'
/// key), then asks for a decision on the run (the server's, `queue::settle::decide_for`). The
/// first engine wins game 0 by a resignation adjudication and game 1 is an adjudicated draw:
/// endings whose final position the rules of chess do not decide, so records without moves pass
/// the rule checks of the report and pull.
async fn play_all(url: &str, run: i64) -> Submission {
    let mut db = parse_target(url).unwrap().connect().await.unwrap();
    let row = queue::run(&db, run).await.unwrap().unwrap();
    let sub = Submission::from_stored(&row.submission).unwrap();
    let plan = sub.plan().clone();
    let lease = Duration::from_secs(60);
    let key = crate::common::test_key(&db).await;
    let w = queue::register_worker(&db, key, "test", 1, 1, lease).await.unwrap();
    loop {
        let claims = queue::claim(&db, &w, Some(run), &[], 8, lease).await.unwrap();
        if claims.is_empty() {
            break;
        }
        for c in claims {
            let p = &plan.pairings[c.pairing as usize];
            let games: Vec<Value> = (0..2)
                .map(|game| {
                    let (a, b) = (&plan.engines[p.first].name, &plan.engines[p.second].name);
                    let (white, black) = if game == 0 { (a, b) } else { (b, a) };
                    let (result, termination) = if game == 0 {
                        ("1-0", "adjudication-resign")
                    } else {
                        ("1/2-1/2", "adjudication-draw")
                    };
                    json!({
                        "seq": c.seq, "pairing": c.pairing, "label": p.label, "pair": c.pair,
                        "game": game, "opening": c.opening,
                        "fen": sub.openings[c.opening as usize].fen,
                        "white": white, "black": black,
                        "result": result, "termination": termination,
                        "plies": 0, "book_plies": 0, "moves": [], "scores": [], "depths": [],
                        "times_ms": [], "engine_times_ms": [], "latency": {}, "duration_ms": 5,
                        "date": "2026.11.25", "plan_hash": plan.merge_hash()
                    })
                })
                .collect();
            let r = PairReport {
                run_id: run,
                pairing: c.pairing,
                pair: c.pair,
                token: c.token,
                records: [&games[0], &games[1]],
            };
            let stored = queue::report(&db, &w, &r, false).await.unwrap();
            assert!(matches!(stored, Reported::Stored { .. }), "{stored:?}");
        }
    }
    let settled = queue::settle::decide_for(&mut db, &w, run).await.unwrap();
    assert_eq!(settled.state, "complete");
    sub
}

#[tokio::test]
async fn submit_status_pull_report_and_cancel() {
    let pg = TempPg::start("cmds");
    let url = pg.url();
    let dir = scratch("fleet-commands");
    let engine = engine_bin().display().to_string();
    let out = ok(runner(&dir, None, &["db", "init", "--db", &url]), "db init");
    // A new database is made at the latest version, without the functions of earlier ones.
    assert!(out.contains(&format!("fleet schema version {} ready", schema::VERSION)), "{out}");

    // Refused before any database work: a folder flag.
    let spec_a = format!("cmd={engine},name=a,option.Hash=2");
    let spec_b = format!("cmd={engine},name=b,option.Hash=4");
    let base = ["--engine", &spec_a, "--engine", &spec_b, "--depth", "1", "--seed", "11"];
    let o = runner(&dir, None, &[&["submit", "match"][..], &base, &["--out", "x"]].concat());
    let (_, err) = text(&o);
    assert!(!o.status.success() && err.contains("does not take --out"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // Neither --server nor --db (nor their variables): one line naming both ways.
    let o = runner(&dir, None, &[&["submit", "match"][..], &base].concat());
    let err = text(&o).1;
    assert!(err.contains("give --server URL") && err.contains("--db URL"), "{err}");

    let out = ok(
        runner(
            &dir,
            None,
            &[&["submit", "--db", &url, "match"][..], &base, &["--games", "8"]].concat(),
        ),
        "submit",
    );
    let id = run_id(&out);
    let stored =
        pg.psql(&format!("SELECT submission->'engines'->0->>'bench' FROM runs WHERE id = {id}"));
    assert!(stored.starts_with("bench 5: ") && stored.ends_with(" nodes"), "{stored}");
    assert!(!dir.join("results").exists(), "submit writes no results folder");

    let sub = play_all(&url, id).await;
    let out = ok(runner(&dir, Some(&url), &["status", &id.to_string()]), "status");
    // The kind, then the limits as the games were played (`RunPlan::limits_text`).
    let head = out.lines().find(|l| l.starts_with(&format!("run {id} ("))).unwrap_or_default();
    assert!(head.starts_with(&format!("run {id} (match, ")) && head.contains("depth=1"), "{out}");
    assert!(out.contains(": ended (every pair played)"), "{out}");
    assert!(
        out.contains("a vs b: 8 games, W-D-L 4-4-0, pentanomial [LL LD DD WD WW] = [0 0 0 4 0]"),
        "{out}"
    );
    assert!(out.contains("4 done, 0 leased, 0 skipped of 4"), "{out}");

    assert_pulled_in_schedule_order(&dir, &url, id, &sub);
    submit_a_sweep_and_cancel_it(&pg, &dir, &url, &engine);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pulled: the local schedule's games of run `id` (`sub`), an ordinary folder `report` reads.
fn assert_pulled_in_schedule_order(dir: &Path, url: &str, id: i64, sub: &Submission) {
    let pulled = dir.join("pulled");
    let out = ok(
        runner(dir, Some(url), &["pull", &id.to_string(), "--out", pulled.to_str().unwrap()]),
        "pull",
    );
    assert!(out.contains("a vs b: 8 games"), "{out}");
    let games = std::fs::read_to_string(pulled.join("games.jsonl")).unwrap();
    let keys: Vec<(u64, u64, u64, u64)> = games
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let n = |k: &str| v[k].as_u64().unwrap();
            (n("seq"), n("pair"), n("game"), n("opening"))
        })
        .collect();
    let want: Vec<(u64, u64, u64, u64)> = sub
        .schedule()
        .iter()
        .flat_map(|j| (0..2).map(move |g| (j.seq as u64, j.pair as u64, g, j.opening as u64)))
        .collect();
    assert_eq!(keys, want);
    let out = ok(runner(dir, None, &["report", pulled.to_str().unwrap()]), "report");
    assert!(out.contains("W-D-L 4-4-0"), "{out}");
    ok(runner(dir, None, &["report", pulled.to_str().unwrap(), "--html"]), "report --html");
}

/// A sweep under `submit` (--param/--values pair by position, as under `runner sweep`), then
/// cancelled: once, then already, then a run that does not exist.
fn submit_a_sweep_and_cancel_it(pg: &TempPg, dir: &Path, url: &str, engine: &str) {
    let spec = format!("cmd={engine},name=e");
    let sweep = [
        "submit",
        "sweep",
        "--engine",
        &spec,
        "--param",
        "t_mid",
        "--range",
        "0.9:1.0:0.1",
        "--param",
        "t_end",
        "--values",
        "1.1",
        "--depth",
        "1",
        "--games",
        "2",
    ];
    let out = ok(runner(dir, Some(url), &sweep), "submit sweep");
    let sweep_id = run_id(&out);
    let labels = pg.psql(&format!(
        "SELECT string_agg(label, ' ' ORDER BY pairing) FROM pairings WHERE run_id = {sweep_id}"
    ));
    assert_eq!(labels, "t_mid=0.9,t_end=1.1 t_mid=1.0,t_end=1.1");

    // Cancel: once, then already, then a run that does not exist.
    let out = ok(runner(dir, Some(url), &["cancel", &sweep_id.to_string()]), "cancel");
    assert_eq!(out.trim(), format!("run {sweep_id} cancelled"));
    let out = ok(runner(dir, Some(url), &["cancel", &sweep_id.to_string()]), "cancel again");
    assert!(out.contains("already cancelled"), "{out}");
    let o = runner(dir, Some(url), &["cancel", "999"]);
    assert!(!o.status.success() && text(&o).1.contains("no run 999"), "{:?}", text(&o));
    let out = ok(runner(dir, Some(url), &["status"]), "status of all");
    assert!(
        out.contains(&format!("run {sweep_id} (sweep, ")) && out.contains(": cancelled"),
        "{out}"
    );
}

/// A database URL whose socket folder does not exist (a typo) is refused at once in one line
/// that names the folder, never retried as a server that is starting (on an earlier main: 30 s
/// of retries, then "No such file or directory" twice on one line).
#[test]
fn a_missing_socket_folder_is_said_at_once_in_one_line() {
    let dir = scratch("fleet-missing-socket");
    let url = "postgresql://fleet@/fleet?host=/nonexistent-runner-socket-folder";
    let o = runner(&dir, Some(url), &["status"]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        err.contains("socket folder /nonexistent-runner-socket-folder does not exist"),
        "{err}"
    );
    assert!(!err.contains("retrying"), "{err}");
}

/// The careless operator: `runner db init` on an existing database (version 6, as a rolling
/// deploy leaves it) adds nothing and says how to drop the old functions; `--contract` then
/// drops them once, and a second `db init` of either kind changes nothing and says nothing more.
#[tokio::test]
async fn db_init_on_an_existing_database_only_expands_and_names_the_contract_step() {
    let pg = TempPg::start("cmds-expand");
    let url = pg.url();
    let dir = scratch("fleet-commands-expand");
    let mut c = parse_target(&url).unwrap().connect().await.unwrap();
    schema::expand(&mut c).await.unwrap();
    let functions = || pg.psql("SELECT count(*) FROM pg_proc WHERE proname LIKE 'fleet\\_%'");
    let before = functions();
    let o = runner(&dir, None, &["db", "init", "--db", &url]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains(&format!("fleet schema version {} already", schema::EXPANDED)), "{out}");
    assert!(err.contains("`runner db init --contract` drops them"), "{err}");
    assert_eq!(functions(), before, "nothing dropped");
    let out = ok(runner(&dir, None, &["db", "init", "--contract", "--db", &url]), "contract");
    assert!(out.contains("fleet schema version 7 ready") && out.contains("(was 6)"), "{out}");
    assert_eq!(functions(), "0");
    for args in [&["db", "init", "--db", &url][..], &["db", "init", "--contract", "--db", &url]] {
        let o = runner(&dir, None, args);
        let (out, err) = text(&o);
        assert!(o.status.success() && out.contains("version 7 already"), "{out}{err}");
        assert!(!err.contains("--contract"), "{err}");
    }
}
