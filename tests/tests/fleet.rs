//! The fleet end to end, through its server: a throwaway PostgreSQL cluster (Unix socket, no
//! TCP) and one `runner serve` per test (`e2e::fleet::Fleet`), runs submitted with `runner
//! submit --server`, played by several `runner worker --server` processes, read back with
//! `runner pull --server`. Engines are `badengine` (instant or slowed moves), so no result
//! depends on timing; what is timed (a kill, a stop, a restart) is checked by its effect on the
//! database.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use e2e::fleet::{Fleet, WorkerOpts, match_args};
use e2e::{bad_spec, read_games, read_json, run_runner, stderr, wait_for};
use serde_json::Value;

/// An executable shell script `name` in the fleet's scratch folder.
fn script(f: &Fleet, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let p = f.dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Asserts that worker `name` refused `run` in one line, recorded once in `refusals`, and gave
/// back its pairs; returns the line.
fn refused_once(f: &Fleet, name: &str, run: i64) -> String {
    let log = f.log(name);
    let said = lines_with(&log, &format!("refusing run {run}:"));
    assert_eq!(said.len(), 1, "{log}");
    assert_eq!(f.count("refusals", run), 1);
    assert_eq!(f.pairs_in("leased", run), 0, "the refused pairs are given back");
    said[0].to_string()
}

/// A worker with `args` and another key (a file from [`Fleet::worker_key`]).
fn keyed(f: &Fleet, name: &str, key: &Path, args: &[&str]) -> Child {
    f.worker_with(name, WorkerOpts { args, key_file: Some(key), ..Default::default() })
}

/// Waits for each worker `NAMEi` (`i` from 0) to end well within `limit`.
fn all_end_well(f: &Fleet, name: &str, workers: &mut [Child], limit: Duration) {
    for (i, w) in workers.iter_mut().enumerate() {
        let n = format!("{name}{i}");
        assert!(f.ended(w, &n, limit).success(), "{}", f.log(&n));
    }
}

/// The schedule keys of games: (pairing, pair, game, opening, white, black), in file order.
fn keys(games: &[Value]) -> Vec<(u64, u64, u64, u64, String, String)> {
    games
        .iter()
        .map(|g| {
            (
                g["pairing"].as_u64().unwrap(),
                g["pair"].as_u64().unwrap(),
                g["game"].as_u64().unwrap(),
                g["opening"].as_u64().unwrap(),
                g["white"].as_str().unwrap().to_string(),
                g["black"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn three_workers_play_the_schedule_of_a_local_run() {
    let f = Fleet::new("fleet-three");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let mut workers: Vec<Child> =
        (0..3).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    all_end_well(&f, "w", &mut workers, Duration::from_secs(300));
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let mut local_args = match_args(&a, &b, &book, "24");
    let local = f.dir.join("local");
    let local_s = local.to_string_lossy().into_owned();
    local_args.extend(["--out", &local_s]);
    let o = run_runner(&f.dir, &local_args);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut local_games = read_games(&local);
    local_games.sort_by_key(|g| (g["seq"].as_u64(), g["game"].as_u64()));
    let pulled_games = read_games(&pulled);
    assert_eq!(pulled_games.len(), 24);
    assert_eq!(keys(&pulled_games), keys(&local_games));
    assert_eq!(
        read_json(&pulled.join("run.json"))["plan_hash"],
        read_json(&local.join("run.json"))["plan_hash"]
    );
    for g in &pulled_games {
        assert_eq!(g["plan_hash"], local_games[0]["plan_hash"]);
    }
    f.assert_nothing_doubled(run);
    assert_eq!(f.state(run), "complete");
    // The pulled folder is an ordinary results folder.
    let o = run_runner(&f.dir, &["report", &pulled.to_string_lossy()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let served: usize = (0..3).filter(|i| f.log(&format!("w{i}")).contains("stored")).count();
    assert!(served >= 2, "pairs were shared: {served} workers stored pairs");
}

#[test]
fn a_killed_worker_loses_nothing_and_doubles_nothing() {
    let f = Fleet::new("fleet-kill");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "16"));
    let mut victim = f.worker("victim", &["--concurrency", "2", "--lease", "5"]);
    // Kill it mid-game: once it holds leases.
    wait_for("a pair leased", Duration::from_secs(60), || f.pairs_in("leased", run) != 0);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(victim.id() as i32, libc::SIGKILL) };
    let _ = victim.wait();
    let mut rescuer = f.worker("rescuer", &["--concurrency", "2", "--lease", "5"]);
    let done = f.ended(&mut rescuer, "rescuer", Duration::from_secs(300));
    assert!(done.success(), "{}", f.log("rescuer"));
    f.assert_nothing_doubled(run);
    assert_eq!(f.state(run), "complete");
    let again: i64 = f
        .sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND attempts > 1"))
        .parse()
        .unwrap();
    assert!(again >= 1, "the killed worker's pairs were handed out again");
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    assert_eq!(read_games(&pulled).len(), 16);
}

#[test]
fn a_stopped_worker_past_its_lease_is_refused_and_nothing_is_doubled() {
    let f = Fleet::new("fleet-stop");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "8"));
    let mut sleeper = f.worker("sleeper", &["--concurrency", "1", "--lease", "5"]);
    wait_for("one pair leased", Duration::from_secs(60), || f.pairs_in("leased", run) == 1);
    let token = f.sql(&format!(
        "SELECT token FROM pairs WHERE run_id = {run} AND state = 'leased' ORDER BY seq LIMIT 1"
    ));
    let seq = f.sql(&format!("SELECT seq FROM pairs WHERE token = {token}"));
    // SAFETY: signals to our own child.
    unsafe { libc::kill(sleeper.id() as i32, libc::SIGSTOP) };
    let mut other = f.worker("other", &["--concurrency", "1", "--lease", "5"]);
    // The other worker takes the stopped worker's pair once its lease expired.
    wait_for("the stopped worker's pair taken over", Duration::from_secs(60), || {
        f.sql(&format!("SELECT token FROM pairs WHERE run_id = {run} AND seq = {seq}")) != token
    });
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(sleeper.id() as i32, libc::SIGCONT) };
    assert!(f.ended(&mut other, "other", Duration::from_secs(300)).success(), "{}", f.log("other"));
    let woke = f.ended(&mut sleeper, "sleeper", Duration::from_secs(120));
    assert!(woke.success(), "{}", f.log("sleeper"));
    let log = f.log("sleeper");
    assert!(
        log.contains("refused: its lease expired") || log.contains("stopped (lease lost"),
        "the stopped worker's pair was neither refused nor stopped:\n{log}"
    );
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    assert_eq!(read_games(&pulled).len(), 8);
}

#[test]
fn an_sprt_decision_stops_every_worker_and_no_pair_is_claimed_after_it() {
    let f = Fleet::new("fleet-sprt");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "illegal", Some(0)));
    let mut args = match_args(&a, &b, &book, "2000");
    args.extend(["--sprt", "elo0=0,elo1=50", "--fault-limit", "0"]);
    let run = f.submit(&args);
    let mut workers: Vec<Child> = (0..3)
        .map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2", "--lease", "30"]))
        .collect();
    all_end_well(&f, "w", &mut workers, Duration::from_secs(300));
    assert_eq!(f.state(run), "decided");
    let late = f.sql(&format!(
        "SELECT count(*) FROM pairs p JOIN runs r ON r.id = p.run_id WHERE r.id = {run} \
         AND p.claimed_at > r.finished_at"
    ));
    assert_eq!(late, "0", "pairs claimed after the decision");
    let stored = f.count("games", run);
    assert!((2..400).contains(&stored), "{stored} games");
    f.assert_nothing_doubled(run);
    let text = f.said("status", &[&run.to_string()]);
    assert!(text.contains("): accepted (H1)") && text.contains("stopped: H1"), "{text}");
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let summary = read_json(&pulled.join("summary.json"));
    assert_eq!(summary["pairings"][0]["stats"]["sprt"]["verdict"], "H1");
    // The record carries the run's place in the fleet, as status words it; a decided run has
    // no time left.
    let share = &summary["fleet"]["share"];
    assert_eq!((share["priority"].as_i64(), share["throughput"].as_i64()), (Some(0), Some(100)));
    assert!(share["owner"].as_str().is_some_and(|o| !o.is_empty()), "{share}");
    assert!(share["time_left"].is_null(), "{share}");
    // A rate needs two reported pairs.
    assert_eq!(share["pairs_per_hour"].as_f64().is_some_and(|r| r > 0.0), stored >= 4, "{share}");
    assert!(share["words"].as_str().unwrap().starts_with("share: priority 0"), "{share}");
}

#[test]
fn tuning_over_three_workers_ends_near_the_optimum() {
    let f = Fleet::new("fleet-tune");
    let engine = bad_spec("t", "tunable", None);
    let run = f.submit(&[
        "tune",
        "--engine",
        &engine,
        "--param",
        "X,80,0,100,10,0.1",
        "--games",
        "200",
        "--tc",
        "10+0.1",
        "--seed",
        "1",
        "--progress",
        "quiet",
    ]);
    // One iteration in flight at a time: each is played at the values every update before it
    // made, so the run ends at the same X whichever worker plays what (with 16 in flight the
    // end point depends on the timing, and a run under load ended outside the band below).
    let args = ["--concurrency", "1", "--tune-in-flight", "1"];
    let mut workers: Vec<Child> = (0..3).map(|i| f.worker(&format!("w{i}"), &args)).collect();
    all_end_well(&f, "w", &mut workers, Duration::from_secs(600));
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let x = read_json(&pulled.join("tune.json"))["values"]["X"].as_f64().expect("values.X");
    assert!((x - 37.0).abs() <= 12.0, "X ended at {x}, not near 37");
    eprintln!("the fleet's tuning run ended at X = {x}");
    assert_eq!(read_games(&pulled).len(), 200);
    let applied = f.sql(&format!("SELECT applied FROM tune_state WHERE run_id = {run}"));
    assert_eq!(applied, "100");
}

/// The database restarts behind the running server, mid-run: the server's workers are answered
/// "unavailable" while it is away, retry, and go on once it is back; nothing is lost or doubled.
#[test]
fn a_database_restart_behind_the_server_mid_run_loses_nothing() {
    let mut f = Fleet::new("fleet-restart");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(10)), bad_spec("b", "slow", Some(10)));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let mut workers: Vec<Child> = (0..2)
        .map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2", "--lease", "10"]))
        .collect();
    wait_for("a game stored", Duration::from_secs(120), || f.count("games", run) != 0);
    let at_stop = f.count("games", run);
    f.pg.stop();
    // The database stays down until a worker has met it away (a call refused, retried).
    let logs = |f: &Fleet| f.log("w0") + &f.log("w1");
    wait_for("a worker retrying while the database is down", Duration::from_secs(120), || {
        logs(&f).contains("retrying")
    });
    f.pg.start_again();
    all_end_well(&f, "w", &mut workers, Duration::from_secs(300));
    assert_eq!(f.state(run), "complete");
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    assert_eq!(read_games(&pulled).len(), 24);
    let logs = logs(&f);
    assert!(logs.contains("retrying"), "no worker saw the restart:\n{logs}");
    // The stop came mid-run: the workers went on with games left after it.
    assert!(at_stop < 24, "the run ended before the database stopped");
}

#[test]
fn a_worker_with_another_engine_binary_refuses_the_run() {
    let f = Fleet::new("fleet-binary");
    let book = e2e::write_book(&f.dir, 4);
    let copy = f.dir.join("eng");
    std::fs::copy(e2e::badengine_bin(), &copy).unwrap();
    let spec = format!("name=c,cmd={},arg=good", copy.display());
    let other = bad_spec("b", "good", None);
    let run = f.submit(&match_args(&spec, &other, &book, "4"));
    // The binary changes on the worker's machine.
    let mut bytes = std::fs::read(&copy).unwrap();
    bytes.extend_from_slice(b"changed");
    std::fs::write(&copy, bytes).unwrap();
    // (Without --no-artifacts the worker would fetch the submitted binary from the database.)
    let mut w = f.worker("w", &["--run", &run.to_string(), "--no-artifacts"]);
    let status = f.ended(&mut w, "w", Duration::from_secs(120));
    let log = f.log("w");
    assert!(!status.success(), "{log}");
    assert!(log.contains("refusing run") && log.contains("engine c"), "{log}");
    assert_eq!(f.count("games", run), 0);
    assert_eq!(f.pairs_in("pending", run), 2, "the refused pairs are given back");
}

#[test]
fn adaptive_sweep_drops_a_hopeless_point_in_the_report_transaction() {
    let sweep = e2e::stockfish_racing_sweep();
    let f = Fleet::new("fleet-race");
    let run = f.submit(&sweep.iter().map(String::as_str).collect::<Vec<_>>());
    let mut workers: Vec<Child> =
        (0..2).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    all_end_well(&f, "w", &mut workers, Duration::from_secs(300));
    assert_eq!(
        f.sql(&format!("SELECT verdict FROM pairings WHERE run_id = {run} AND pairing = 0")),
        "dropped"
    );
    let skipped = f.pairs_in("skipped", run);
    assert!(skipped > 0, "the dropped point's pending pairs are skipped");
    assert_eq!(
        f.sql(&format!(
            "SELECT count(*) FROM pairs WHERE run_id = {run} AND pairing = 1 AND state = 'done'"
        )),
        "16",
        "the surviving point plays all its pairs"
    );
    assert_eq!(f.state(run), "complete");
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let summary = read_json(&pulled.join("summary.json"));
    let dropped = summary["fleet"]["dropped"].as_array().expect("fleet.dropped");
    assert_eq!(dropped.len(), 1, "{}", summary["fleet"]);
    assert_eq!(dropped[0]["pairing"], 0);
    assert!(dropped[0]["why"].as_str().unwrap().contains("dropped by racing"), "{}", dropped[0]);
}

/// The lines of `text` that contain `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(needle)).collect()
}

/// Asserts a command failed with one line of error output (warnings aside) containing every one
/// of `needles`; returns that line.
fn fails_in_one_line(o: &Output, needles: &[&str]) -> String {
    let err = stderr(o);
    assert!(!o.status.success(), "it succeeded:\n{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
    assert_eq!(lines.len(), 1, "not one line:\n{err}");
    for n in needles {
        assert!(lines[0].contains(n), "no {n:?} in: {}", lines[0]);
    }
    lines[0].to_string()
}

#[test]
fn a_run_whose_engine_cannot_start_is_refused_and_fails_after_three_keys() {
    let f = Fleet::new("fleet-nostart");
    let book = e2e::write_book(&f.dir, 4);
    // It plays when submitted (submit starts it), then exits at once: its file is unchanged,
    // so its hash is the submitted one and the worker gets as far as starting it.
    let broken = f.dir.join("broken");
    let dead = script(
        &f,
        "dead.sh",
        &format!(
            "[ -e {} ] && exit 1\nexec {} good",
            broken.display(),
            e2e::badengine_bin().display()
        ),
    );
    let dead = format!("name=dead,cmd={}", dead.display());
    let good = bad_spec("b", "good", None);
    let first = f.submit(&match_args(&dead, &good, &book, "4"));
    let second = f.submit(&match_args(&bad_spec("a", "good", None), &good, &book, "4"));
    std::fs::write(&broken, "").unwrap();
    let keys: Vec<PathBuf> = (1..=3).map(|i| f.worker_key(&format!("k{i}"))).collect();

    let mut w = keyed(&f, "w1", &keys[0], &["--concurrency", "1"]);
    assert!(f.ended(&mut w, "w1", Duration::from_secs(120)).success(), "{}", f.log("w1"));
    let log = f.log("w1");
    let said = lines_with(&log, &format!("refusing run {first}:"));
    assert_eq!(said.len(), 1, "{log}");
    assert!(said[0].contains("engine dead"), "{log}");
    assert_eq!(f.count("refusals", first), 1);
    assert_eq!(f.state(first), "active", "one key's refusal does not fail a run");
    // The same worker went on to the second run and played all of it.
    assert_eq!(f.state(second), "complete", "{log}");
    assert_eq!(f.count("games", second), 4);
    assert_eq!(f.count("games", first), 0);
    assert!(log.contains("worker done: 2 pair(s) stored"), "{log}");

    // Two more keys refuse it: the run fails.
    let mut more: Vec<Child> = (1..3)
        .map(|i| keyed(&f, &format!("w{}", i + 1), &keys[i], &["--concurrency", "1"]))
        .collect();
    for (i, w) in more.iter_mut().enumerate() {
        let name = format!("w{}", i + 2);
        assert!(f.ended(w, &name, Duration::from_secs(120)).success(), "{}", f.log(&name));
    }
    assert_eq!(f.count("refusals", first), 3);
    assert_eq!(f.state(first), "failed");
    assert_eq!(f.count("games", first), 0);
    let text = f.said("status", &[&first.to_string()]);
    assert!(text.contains("failed") && text.contains("refused by 3 worker(s)"), "{text}");
    for k in ["k1", "k2", "k3"] {
        assert!(text.contains(&format!("{k}: cannot start an engine: engine dead")), "{text}");
    }
}

#[test]
fn a_submitted_shell_command_is_refused_by_a_worker_that_does_not_trust_its_folder() {
    let f = Fleet::new("fleet-sh");
    let book = e2e::write_book(&f.dir, 4);
    let pwned = f.dir.join("pwned");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "4"));
    // What a hostile submitter stores: engine a is `/bin/sh -c 'touch <scratch>/pwned'`.
    // (Written as the superuser: `runner submit` would start the command itself to check it.)
    let args = serde_json::to_string(&["-c", &format!("touch {}", pwned.display())]).unwrap();
    f.sql(&format!(
        "UPDATE runs SET submission = jsonb_set(jsonb_set(submission, \
         '{{run,plan,engines,0,cmd}}', '\"/bin/sh\"'), '{{run,plan,engines,0,args}}', \
         '{args}'::jsonb) WHERE id = {run}"
    ));
    assert_eq!(
        f.sql(&format!(
            "SELECT submission->'run'->'plan'->'engines'->0->>'cmd' FROM runs WHERE id = {run}"
        )),
        "/bin/sh"
    );
    // The catalog and --trust path (an artifact worker would run the stored binary instead).
    let mut w = f.worker("w", &["--concurrency", "1", "--no-artifacts"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    let said = refused_once(&f, "w", run);
    assert!(said.contains("engine a") && said.contains("/bin/sh"), "{said}");
    assert!(said.contains("not one this worker trusts"), "{said}");
    assert!(!pwned.exists(), "the submitted shell command ran");
    let reason = f.sql(&format!("SELECT reason FROM refusals WHERE run_id = {run}"));
    assert!(reason.contains("not one this worker trusts"), "{reason}");
    assert_eq!((f.count("games", run), f.pairs_in("pending", run)), (0, 2));
}

/// A worker of the server whose environment holds the fleet's database URL, libpq's settings,
/// its own key and a person's API token: none of it reaches an engine.
#[test]
fn an_engine_never_sees_the_workers_database_secrets_or_its_key() {
    let f = Fleet::new("fleet-env");
    let book = e2e::write_book(&f.dir, 4);
    let dumps = f.dir.join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    let spy = script(
        &f,
        "spy.sh",
        &format!(
            "env > {}/env-$$.txt\nexec {} good",
            dumps.display(),
            e2e::badengine_bin().display()
        ),
    );
    let spy = format!("name=spy,cmd={}", spy.display());
    let run = f.submit(&match_args(&spy, &bad_spec("b", "good", None), &book, "4"));
    // The dumps of `runner submit`'s own check go: only the worker's engines count.
    std::fs::remove_dir_all(&dumps).unwrap();
    std::fs::create_dir_all(&dumps).unwrap();
    let url = f.pg.url();
    let key = e2e::read_text(&f.key_file).trim().to_string();
    // Unboxed (the box hides the dumps' folder and clears the environment anyway:
    // tests/tests/fleet_box.rs): the secrets are taken out of the engine's environment even then.
    let env = [
        ("RUNNER_DB", url.as_str()),
        ("PGPASSWORD", "hunter2-secret"),
        ("PGUSER", "fleet-secret-user"),
        ("RUNNER_WORKER_KEY", key.as_str()),
        ("RUNNER_TOKEN", "rt_person-token-secret"),
    ];
    let args = ["--concurrency", "1", "--no-box"];
    let mut w = f.worker_with("w", WorkerOpts { args: &args, env: &env, ..Default::default() });
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    assert_eq!(f.state(run), "complete");
    let files: Vec<PathBuf> =
        std::fs::read_dir(&dumps).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!files.is_empty(), "the engine never started");
    for p in files {
        let env = std::fs::read_to_string(&p).unwrap();
        assert!(env.contains("PATH="), "not an environment dump: {env}");
        let secrets = [
            "RUNNER_DB=",
            "PGPASSWORD=",
            "hunter2-secret",
            &url,
            "RUNNER_WORKER_KEY=",
            "RUNNER_TOKEN=",
            "person-token-secret",
        ];
        for secret in secrets.into_iter().chain([key.as_str()]) {
            assert!(!env.contains(secret), "{secret} reached the engine:\n{env}");
        }
    }
}

#[test]
fn a_forged_result_stops_the_pull_naming_the_game_and_the_key() {
    let f = Fleet::new("fleet-forged");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let mut args = match_args(&a, &b, "", "4");
    // No book: every game starts from the initial position.
    args.drain(5..7);
    let run = f.submit(&args);
    let key = f.worker_key("forger");
    let mut w = keyed(&f, "w", &key, &["--concurrency", "1"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    assert_eq!(f.state(run), "complete");
    // Game 1 of pair 1 becomes a threefold repetition (the start position three times: Nf3
    // Nf6 Ng1 Ng8, twice) that White is said to have won.
    let moves = r#"["g1f3","g8f6","f3g1","f6g8","g1f3","g8f6","f3g1","f6g8"]"#;
    f.sql(&format!(
        "UPDATE games SET record = (record::jsonb || jsonb_build_object('moves', '{moves}'::jsonb, \
         'plies', 8, 'book_plies', 0, 'termination', 'threefold', 'result', '1-0', \
         'fen', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'))::json \
         WHERE run_id = {run} AND pair = 0 AND game = 0"
    ));
    let out = f.dir.join("pulled");
    let o = f.person("pull", &[&run.to_string(), "--out", &out.to_string_lossy()]);
    fails_in_one_line(&o, &["game 1.1", "worker key forger", "result 1-0", "1/2-1/2"]);
    let written = std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0);
    assert_eq!(written, 0, "the refused pull wrote into --out");
}

#[test]
fn a_pull_of_another_run_into_a_pulled_folder_is_refused() {
    let f = Fleet::new("fleet-twopulls");
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let first = f.submit(&match_args(&a, &b, &book, "4"));
    let second = f.submit(&match_args(&a, &b, &book, "4"));
    let mut w = f.worker("w", &["--concurrency", "2"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    assert_eq!((f.state(first), f.state(second)), ("complete".into(), "complete".into()));
    let out = f.dir.join("pulled");
    f.pull(first, &out);
    let games = std::fs::read(out.join("games.jsonl")).unwrap();
    let o = f.person("pull", &[&second.to_string(), "--out", &out.to_string_lossy()]);
    fails_in_one_line(&o, &[&format!("pull of run {first}"), &format!("not of run {second}")]);
    assert_eq!(read_json(&out.join("pull.json"))["run"], first);
    assert_eq!(std::fs::read(out.join("games.jsonl")).unwrap(), games);
    assert_eq!(read_games(&out).len(), 4);
    // The same run again only brings the folder up to date.
    f.pull(first, &out);
    assert_eq!(std::fs::read(out.join("games.jsonl")).unwrap(), games);
}

#[test]
fn a_worker_for_a_missing_run_fails_and_a_stopped_one_counts_its_pairs_in_flight() {
    let f = Fleet::new("fleet-sigterm");
    let mut w = f.worker("none", &["--run", "99999"]);
    assert!(!f.ended(&mut w, "none", Duration::from_secs(60)).success());
    assert!(f.log("none").contains("no run 99999"), "{}", f.log("none"));

    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "slow", Some(200)), bad_spec("b", "slow", Some(200)));
    let run = f.submit(&match_args(&a, &b, &book, "8"));
    let mut w = f.worker("w", &["--concurrency", "2", "--lease", "30"]);
    // Both pairs are playing: leased, the run loaded, and a move of each pair's engines made.
    wait_for("two pairs playing", Duration::from_secs(60), || {
        f.pairs_in("leased", run) == 2 && f.log("w").contains(&format!("serving run {run}"))
    });
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(w.id() as i32, libc::SIGTERM) };
    let status = f.ended(&mut w, "w", Duration::from_secs(60));
    let log = f.log("w");
    assert!(!status.success(), "{log}");
    let done = lines_with(&log, "worker done:");
    assert_eq!(done.len(), 1, "{log}");
    assert!(done[0].contains("0 pair(s) stored") && done[0].contains(", 2 stopped"), "{log}");
    assert_eq!(f.count("games", run), 0);
    assert_eq!(f.pairs_in("leased", run), 0, "the stopped pairs were given back");
}

#[test]
fn an_engine_past_the_fault_limit_makes_the_worker_refuse_the_run() {
    let f = Fleet::new("fleet-faults");
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "crash", Some(0)), bad_spec("b", "good", None));
    let mut args = match_args(&a, &b, &book, "12");
    args.extend(["--fault-limit", "3"]);
    let run = f.submit(&args);
    let mut w = f.worker("w", &["--concurrency", "1"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    let said = refused_once(&f, "w", run);
    assert!(said.contains("engine a lost 3 games in a row by its own fault"), "{said}");
    let reason = f.sql(&format!("SELECT reason FROM refusals WHERE run_id = {run}"));
    assert!(
        reason.contains("lost 3 games in a row") && reason.contains("--fault-limit 3"),
        "{reason}"
    );
    let played = f.count("games", run);
    assert!(played < 12, "all {played} games were played");
    assert_eq!(f.state(run), "active", "one refusal does not end the run");
}

#[test]
fn a_submitters_run_waits_for_approval_and_only_its_owner_cancels_it() {
    let f = Fleet::new("fleet-owners");
    // Two users who are not approvers.
    let (alice, bob) = (f.user("alice", false), f.user("bob", false));
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let (run, said) = f.submit_as(&alice, &match_args(&a, &b, &book, "4"));
    assert!(said.contains(&format!("runner approve {run}")), "{said}");
    assert_eq!(f.state(run), "pending");
    assert_eq!(f.sql(&format!("SELECT owner FROM runs WHERE id = {run}")), "alice");

    // A worker finds nothing to play while the run waits.
    let mut w = f.worker("w", &["--concurrency", "1"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(60)).success(), "{}", f.log("w"));
    assert!(f.log("w").contains("worker done: 0 pair(s) stored"), "{}", f.log("w"));
    assert_eq!(f.count("games", run), 0);
    assert_eq!(f.pairs_in("pending", run), 2);

    // Bob cannot cancel alice's run.
    let o = f.person_as(&bob, "cancel", &[&run.to_string()]);
    fails_in_one_line(&o, &["alice"]);
    assert_eq!(f.state(run), "pending");

    f.said("approve", &[&run.to_string(), "--yes"]);
    assert_eq!(f.state(run), "active");

    let o = f.person_as(&alice, "cancel", &[&run.to_string()]);
    assert!(o.status.success(), "alice's cancel: {}", stderr(&o));
    assert_eq!(f.state(run), "cancelled");
}

#[test]
fn a_report_the_server_refuses_is_an_incident_and_three_make_the_worker_refuse_the_run() {
    let f = Fleet::new("fleet-incident");
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let bad = f.submit(&match_args(&a, &b, &book, "4"));
    let good = f.submit(&match_args(&a, &b, &book, "4"));
    // A stray row holds the place of game 1 of the first run's first pair: every report of that
    // pair breaks the games' unique key in the database, while the worker's own checks pass
    // (its games are legal, its lease is good).
    f.sql(&format!(
        "INSERT INTO games (run_id, pairing, pair, game, record) VALUES ({bad}, 0, 0, 0, '{{}}')"
    ));
    let mut w = f.worker("w", &["--concurrency", "1"]);
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    let log = f.log("w");
    // Each refusal is said in one line, and the worker went on (the pair was claimed again).
    let said = lines_with(&log, "the server refused the report");
    assert_eq!(said.len(), 3, "{log}");
    for l in &said {
        assert!(l.contains(&format!("run {bad} pair 1:")) && l.contains("duplicate key"), "{l}");
    }
    assert_eq!(log.matches("recorded, the pair goes back to the queue").count(), 3, "{log}");
    assert_eq!(
        f.sql(&format!(
            "SELECT count(*) FROM incidents i JOIN workers w ON w.id = i.worker_id \
             WHERE i.run_id = {bad} AND i.pairing = 0 AND i.pair = 0 \
             AND i.key_id = w.key_id AND i.what LIKE '%duplicate key%'"
        )),
        "3",
        "each incident recorded with the pair and the worker's key"
    );
    assert_eq!(
        f.sql(&format!(
            "SELECT state || ' ' || attempts || ' ' || (token IS NULL) FROM pairs \
             WHERE run_id = {bad} AND pairing = 0 AND pair = 0"
        )),
        "pending 3 true",
        "the pair went back to the queue after each of its three tries"
    );
    // The third incident made the worker refuse the run; the run itself stays open to others.
    let refusal = refused_once(&f, "w", bad);
    assert!(refusal.contains("the server refused 3 of its reports"), "{refusal}");
    let reason = f.sql(&format!("SELECT reason FROM refusals WHERE run_id = {bad}"));
    assert!(reason.contains("refused 3 of its reports"), "{reason}");
    assert_eq!(f.state(bad), "active");
    assert_eq!((f.count("games", bad), f.pairs_in("pending", bad)), (1, 2), "only the stray row");
    // It served the other run whole.
    assert_eq!(f.state(good), "complete", "{log}");
    assert_eq!(f.count("games", good), 4);
    f.assert_nothing_doubled(good);
    assert!(
        log.contains(
            "worker done: 2 pair(s) stored, 0 refused, 0 stopped, 3 incident(s), 1 run(s) refused"
        ),
        "{log}"
    );
}

/// Sends `sig` to process `pid` (a test's own child).
fn signal(pid: i32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pids are the test's own processes.
    let r = unsafe { libc::kill(pid, sig) };
    assert_eq!(r, 0, "kill -{sig} {pid}: {}", std::io::Error::last_os_error());
}

/// The state letter of process `pid` in /proc (`T`: stopped), or `?` when it is gone.
fn proc_state(pid: i32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()).unwrap_or('?')
}

/// A server that stops answering (SIGSTOP) mid-run: the worker's calls give up at their
/// deadline (2 s here) instead of waiting on it, it says so and keeps trying without exiting,
/// and once the server answers again it stores the rest of the run; nothing is lost or doubled.
/// Ctrl-C to a worker whose server does not answer ends it at once (exit 130), although its
/// calls would wait 600 s: it does not wait to give its pair back. (A worker of the database
/// met the same in a stopped database backend; through the server, the server is what it
/// waits on.)
#[test]
fn a_server_that_stops_answering_is_waited_out_and_ctrl_c_does_not_wait_for_it() {
    let f = Fleet::new("fleet-blackhole");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let first = f.submit(&match_args(&a, &b, &book, "12"));
    let second = f.submit(&match_args(&a, &b, &book, "8"));
    let server = f.server_pid();

    // A worker whose calls have a 2 s deadline (20 s in use) loses its server mid-run.
    let (r1, r2) = (first.to_string(), second.to_string());
    let args = ["--concurrency", "1", "--lease", "10", "--statement-timeout", "2"];
    let mut w = f.worker("w", &[&["--run", r1.as_str()][..], &args].concat());
    wait_for("a pair stored", Duration::from_secs(120), || f.count("games", first) >= 2);
    signal(server, libc::SIGSTOP);
    wait_for("the server to stop", Duration::from_secs(30), || proc_state(server) == 'T');
    let stored = f.count("games", first);
    // It warns that a call ran past its deadline and retries, while the server stays stopped.
    wait_for("a warning of a call past its deadline", Duration::from_secs(120), || {
        let log = f.log("w");
        log.contains("timed out") && log.contains("retrying")
    });
    assert_eq!(proc_state(server), 'T', "the server stayed stopped meanwhile");
    assert!(w.try_wait().unwrap().is_none(), "the worker exited: {}", f.log("w"));
    assert_eq!(f.count("games", first), stored, "nothing is stored past a stopped server");
    signal(server, libc::SIGCONT);
    assert!(f.ended(&mut w, "w", Duration::from_secs(300)).success(), "{}", f.log("w"));
    assert_eq!(f.state(first), "complete", "{}", f.log("w"));
    assert_eq!(f.count("games", first), 12);
    f.assert_nothing_doubled(first);

    // Ctrl-C to a worker whose server stopped answering: it ends at once, exit 130, although
    // its calls would wait 600 s for the server (it does not wait to give its pair back).
    let args = ["--concurrency", "1", "--lease", "10", "--statement-timeout", "600"];
    let mut w = f.worker("ctrl-c", &[&["--run", r2.as_str()][..], &args].concat());
    wait_for("a pair being played", Duration::from_secs(120), || {
        f.pairs_in("leased", second) == 1
            && f.log("ctrl-c").contains(&format!("serving run {second}"))
    });
    signal(server, libc::SIGSTOP);
    wait_for("the server to stop", Duration::from_secs(30), || proc_state(server) == 'T');
    signal(w.id() as i32, libc::SIGINT);
    let status = f.ended(&mut w, "ctrl-c", Duration::from_secs(60));
    signal(server, libc::SIGCONT);
    let log = f.log("ctrl-c");
    assert_eq!(status.code(), Some(130), "{log}");
    assert!(log.contains("stopping:") && log.contains("worker done:"), "{log}");
    f.assert_nothing_doubled(second);
}

#[test]
fn a_worker_keeps_its_lease_while_an_engine_is_slow_to_start() {
    let f = Fleet::new("fleet-slowstart");
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "4"));
    // The engines answer `uci` only when the test opens the gate (`runner submit`'s own start
    // of them above had no gate).
    let gate = f.dir.join("gate");
    let gate_s = gate.display().to_string();
    // Unboxed: the gate is a variable of the worker's environment and a file the engine writes,
    // neither of which reaches a boxed engine.
    let args = ["--concurrency", "1", "--lease", "5", "--no-box"];
    let env = [("BADENGINE_GATE", gate_s.as_str())];
    let mut w = f.worker_with("w", WorkerOpts { args: &args, env: &env, ..Default::default() });
    let waiting = f.dir.join("gate.waiting");
    wait_for("an engine held at its start", Duration::from_secs(60), || waiting.exists());
    let token =
        f.sql(&format!("SELECT token FROM pairs WHERE run_id = {run} AND state = 'leased'"));
    assert!(!token.is_empty() && !token.contains('\n'), "one pair leased: {token:?}");
    // Two leases pass in the database's time while the engine is held: the pair is still this
    // worker's under its token, its lease renewed by the heartbeat.
    wait_for("two leases past the claim with the lease alive", Duration::from_secs(60), || {
        f.sql(&format!(
            "SELECT count(*) FROM pairs WHERE token = {token} AND state = 'leased' \
             AND now() > claimed_at + interval '10 seconds' AND lease_until > now()"
        )) == "1"
    });
    std::fs::write(&gate, "").unwrap();
    assert!(f.ended(&mut w, "w", Duration::from_secs(120)).success(), "{}", f.log("w"));
    let log = f.log("w");
    assert_eq!(f.state(run), "complete", "{log}");
    f.assert_nothing_doubled(run);
    assert_eq!(f.count("games", run), 4);
    assert_eq!(
        f.sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND attempts <> 1")),
        "0",
        "a pair was handed out twice"
    );
    let stored = log.lines().filter(|l| l.ends_with(" stored")).count();
    assert_eq!(stored, 2, "each pair reported once:\n{log}");
    let warned = log.lines().any(|l| l.contains("warning") && !l.contains("--no-box"));
    assert!(!log.contains("lease lost") && !warned, "{log}");
}

/// A session of role `hog` that holds a connection of the database, idle, until dropped: a
/// psql reading a pipe the test keeps open, started again (every 0.2 s) while the database
/// refuses it a slot. It runs in a process group of its own, killed whole when dropped.
struct Hog(Child);

impl Hog {
    fn start(f: &Fleet) -> Hog {
        use std::os::unix::process::CommandExt as _;
        let psql = e2e::pg::pg_bindir().expect("PostgreSQL's binaries").join("psql");
        let line = format!(
            "while ! '{}' -X -q -h '{}' -U hog -d {}; do sleep 0.2; done",
            psql.display(),
            f.pg.socket_dir().display(),
            e2e::pg::DBNAME
        );
        let child = Command::new("sh")
            .args(["-c", &line])
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sh and psql");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        // SAFETY: a signal to our own child's process group.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// The database full behind the server: every slot taken, the last (kept for superusers, the
/// server's role) by the server's own first connection. A worker that starts then waits for a
/// slot: the server answers that its database connections are away, the worker says so and
/// retries instead of exiting, and once the slots free it plays the runs to their end. (Workers
/// of the database waited for a slot of their role's share, beside which people kept room;
/// through the server no worker holds a connection of the database, and people's and workers'
/// calls share the server's.)
#[test]
fn a_full_database_behind_the_server_makes_a_starting_worker_wait_for_a_slot() {
    let mut f = Fleet::new("fleet-full");
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let first = f.submit(&match_args(&a, &b, &book, "4"));
    let second = f.submit(&match_args(&a, &b, &book, "4"));
    let key = f.worker_key("k1");
    f.sql("CREATE ROLE hog LOGIN");
    // A small cluster: 12 connections, the last one for superusers.
    f.kill_server();
    f.sql("ALTER SYSTEM SET max_connections = 12");
    f.sql("ALTER SYSTEM SET superuser_reserved_connections = 1");
    f.pg.restart();
    // Eleven sessions of another role take every slot but the superusers' one.
    let hogs: Vec<Hog> = (0..11).map(|_| Hog::start(&f)).collect();
    let hogs_in = || f.sql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'hog'");
    wait_for("11 other sessions in the database", Duration::from_secs(120), || hogs_in() == "11");
    // The server takes the last slot: its workers' calls find no connection to open.
    f.start_server_again();

    let mut w = keyed(&f, "w", &key, &["--concurrency", "1"]);
    // The worker is told the server's connections are away, and the server (its loop closing
    // finished runs) that the database has no slot for one.
    wait_for("the worker's warning and the database's refusal", Duration::from_secs(120), || {
        let log = f.log("w");
        log.contains("database connections are busy or away")
            && log.contains("retrying")
            && f.log("server").contains("too many clients")
    });
    assert!(w.try_wait().unwrap().is_none(), "the worker exited: {}", f.log("w"));

    // The other sessions end: the worker registers and plays the runs.
    drop(hogs);
    assert!(f.ended(&mut w, "w", Duration::from_secs(300)).success(), "{}", f.log("w"));
    let log = f.log("w");
    assert!(log.contains("(pid ") && log.contains("key k1"), "{log}");
    assert_eq!((f.state(first), f.state(second)), ("complete".into(), "complete".into()), "{log}");
    assert_eq!((f.count("games", first), f.count("games", second)), (4, 4));
    f.assert_nothing_doubled(first);
    f.assert_nothing_doubled(second);
}

/// A run with tablebase adjudication (`--tb`): a worker without tables refuses it with the
/// reason and plays nothing; a worker started with `--tb` serves it, and its games end by the
/// tables as a local run's would.
#[test]
fn a_tablebase_run_is_refused_without_tables_and_served_with_them() {
    let f = Fleet::new("fleet-tb");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let (book, tb) = (data.join("few_pieces.epd"), data.join("syzygy"));
    let (book, tb) = (book.to_str().unwrap(), tb.to_str().unwrap());
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let mut args = match_args(&a, &b, book, "8");
    args.extend(["--book-start", "25", "--book-order", "sequential"]);
    args.extend(["--tb", tb, "--tbpieces", "4"]);
    let run = f.submit(&args);
    let format = f.sql(&format!("SELECT submission->>'format' FROM runs WHERE id = {run}"));
    assert_eq!(format, "2", "older runners refuse it instead of playing it without tables");
    let mut w = f.worker("none", &["--concurrency", "1", "--no-artifacts"]);
    assert!(f.ended(&mut w, "none", Duration::from_secs(120)).success(), "{}", f.log("none"));
    let said = refused_once(&f, "none", run);
    assert!(
        said.contains("needs Syzygy tables for 4 pieces: start the worker with --tb PATH"),
        "{said}"
    );
    assert_eq!(f.count("games", run), 0, "nothing is played without the tables");
    // Another key: a key's refusal holds for every worker of it.
    let key = f.worker_key("tbbox");
    let extra = ["--concurrency", "2", "--no-artifacts", "--tb", tb];
    let mut w = keyed(&f, "tb", &key, &extra);
    assert!(f.ended(&mut w, "tb", Duration::from_secs(180)).success(), "{}", f.log("tb"));
    let out = f.dir.join("pulled");
    f.pull(run, &out);
    let games = read_games(&out);
    assert_eq!(games.len(), 8);
    let by_tb: Vec<&Value> =
        games.iter().filter(|g| g["termination"] == "adjudication-tablebase").collect();
    assert!(!by_tb.is_empty(), "no game ended by the tables: {games:?}");
    for g in by_tb {
        assert!(g["tablebase"]["pieces"].as_u64().unwrap() <= 4, "{g}");
    }
}
