//! The fleet end to end: a throwaway PostgreSQL cluster (Unix socket, no TCP) per test, runs
//! submitted with `runner submit`, played by several `runner worker` processes, read back with
//! `runner pull`. Engines are `badengine` (instant or slowed moves), so no result depends on
//! timing; what is timed (a kill, a stop, a restart) is checked by its effect on the database.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use e2e::pg::TempPg;
use e2e::{bad_spec, read_games, read_json, run_runner, runner_bin, scratch, stderr, wait_until};
use serde_json::Value;

struct Fleet {
    pg: TempPg,
    dir: PathBuf,
}

impl Fleet {
    fn new(name: &str) -> Fleet {
        let dir = scratch(name);
        let pg = TempPg::start(name);
        let f = Fleet { pg, dir };
        let o = f.runner(&["db", "init"]);
        assert!(o.status.success(), "db init: {}", stderr(&o));
        f
    }

    fn url(&self) -> String {
        self.pg.url()
    }

    /// The runner with `--db URL` after the subcommand path given.
    fn runner(&self, args: &[&str]) -> Output {
        let mut full: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        full.insert(if args.first() == Some(&"db") { 2 } else { 1 }, "--db".into());
        full.insert(if args.first() == Some(&"db") { 3 } else { 2 }, self.url());
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        run_runner(&self.dir, &refs)
    }

    /// `runner submit --db URL ARGS`: the run id from its last line.
    fn submit(&self, args: &[&str]) -> i64 {
        let mut full = vec!["submit"];
        full.extend_from_slice(args);
        let o = self.runner(&full);
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let last = out.lines().last().unwrap_or_default();
        last.strip_prefix("run ")
            .and_then(|id| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `run ID` last line: {out}"))
    }

    /// A worker process (stderr to a file in the scratch folder).
    fn worker(&self, name: &str, extra: &[&str]) -> Child {
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        Command::new(runner_bin())
            .args(["worker", "--db", &self.url()])
            .args(extra)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a worker")
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default()
    }

    fn pull(&self, run: i64, out: &Path) -> Output {
        let o = self.runner(&["pull", &run.to_string(), "--out", &out.to_string_lossy()]);
        assert!(o.status.success(), "pull: {}", stderr(&o));
        o
    }

    fn sql(&self, q: &str) -> String {
        self.pg.psql(q)
    }

    /// Every stored game is stored once, and every done pair has both games.
    fn assert_nothing_doubled(&self, run: i64) {
        let doubled = self.sql(&format!(
            "SELECT count(*) FROM (SELECT pairing, pair, game FROM games WHERE run_id = {run} \
             GROUP BY 1, 2, 3 HAVING count(*) > 1) d"
        ));
        assert_eq!(doubled, "0", "games stored twice");
        let odd = self.sql(&format!(
            "SELECT count(*) FROM pairs p WHERE run_id = {run} AND (state = 'done') <> \
             ((SELECT count(*) FROM games g WHERE g.run_id = p.run_id AND g.pairing = p.pairing \
               AND g.pair = p.pair) = 2)"
        ));
        assert_eq!(odd, "0", "a done pair without its two games, or games of a pair not done");
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let mut status = None;
    let done = wait_until(limit, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if !done {
        let _ = child.kill();
        panic!("a worker did not end within {limit:?}");
    }
    status.unwrap()
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

fn match_args<'a>(a: &'a str, b: &'a str, book: &'a str, games: &'a str) -> Vec<&'a str> {
    vec![
        "match",
        "--engine",
        a,
        "--engine",
        b,
        "--book",
        book,
        "--games",
        games,
        "--seed",
        "7",
        "--nodes",
        "1",
        "--maxmoves",
        "40",
        "--progress",
        "quiet",
    ]
}

#[test]
fn three_workers_play_the_schedule_of_a_local_run() {
    let f = Fleet::new("fleet-three");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let mut workers: Vec<Child> =
        (0..3).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    for w in &mut workers {
        assert!(wait_exit(w, Duration::from_secs(300)).success());
    }
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
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
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
    let mut victim = f.worker("victim", &["--concurrency", "2", "--lease", "2"]);
    // Kill it mid-game: once it holds leases.
    assert!(wait_until(Duration::from_secs(60), || {
        f.sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'leased'"))
            != "0"
    }));
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(victim.id() as i32, libc::SIGKILL) };
    let _ = victim.wait();
    let mut rescuer = f.worker("rescuer", &["--concurrency", "2", "--lease", "2"]);
    assert!(wait_exit(&mut rescuer, Duration::from_secs(300)).success(), "{}", f.log("rescuer"));
    f.assert_nothing_doubled(run);
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
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
    let mut sleeper = f.worker("sleeper", &["--concurrency", "1", "--lease", "2"]);
    assert!(wait_until(Duration::from_secs(60), || {
        f.sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'leased'"))
            == "1"
    }));
    let token = f.sql(&format!(
        "SELECT token FROM pairs WHERE run_id = {run} AND state = 'leased' ORDER BY seq LIMIT 1"
    ));
    let seq = f.sql(&format!("SELECT seq FROM pairs WHERE token = {token}"));
    // SAFETY: signals to our own child.
    unsafe { libc::kill(sleeper.id() as i32, libc::SIGSTOP) };
    let mut other = f.worker("other", &["--concurrency", "1", "--lease", "2"]);
    // The other worker takes the stopped worker's pair once its lease expired.
    assert!(wait_until(Duration::from_secs(60), || {
        f.sql(&format!("SELECT token FROM pairs WHERE run_id = {run} AND seq = {seq}")) != token
    }));
    unsafe { libc::kill(sleeper.id() as i32, libc::SIGCONT) };
    assert!(wait_exit(&mut other, Duration::from_secs(300)).success(), "{}", f.log("other"));
    assert!(wait_exit(&mut sleeper, Duration::from_secs(120)).success(), "{}", f.log("sleeper"));
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
    for (i, w) in workers.iter_mut().enumerate() {
        assert!(wait_exit(w, Duration::from_secs(300)).success(), "{}", f.log(&format!("w{i}")));
    }
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "decided");
    let late = f.sql(&format!(
        "SELECT count(*) FROM pairs p JOIN runs r ON r.id = p.run_id WHERE r.id = {run} \
         AND p.claimed_at > r.finished_at"
    ));
    assert_eq!(late, "0", "pairs claimed after the decision");
    let stored: i64 =
        f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")).parse().unwrap();
    assert!((2..400).contains(&stored), "{stored} games");
    f.assert_nothing_doubled(run);
    let status = f.runner(&["status", &run.to_string()]);
    assert!(status.status.success(), "{}", stderr(&status));
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("decided") && text.contains("H1"), "{text}");
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let summary = read_json(&pulled.join("summary.json"));
    assert_eq!(summary["pairings"][0]["stats"]["sprt"]["verdict"], "H1");
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
    let mut workers: Vec<Child> =
        (0..3).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "1"])).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        assert!(wait_exit(w, Duration::from_secs(600)).success(), "{}", f.log(&format!("w{i}")));
    }
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let x = read_json(&pulled.join("tune.json"))["values"]["X"].as_f64().expect("values.X");
    assert!((x - 37.0).abs() <= 12.0, "X ended at {x}, not near 37");
    assert_eq!(read_games(&pulled).len(), 200);
    let applied = f.sql(&format!("SELECT applied FROM tune_state WHERE run_id = {run}"));
    assert_eq!(applied, "100");
}

#[test]
fn a_database_restart_mid_run_loses_nothing() {
    let mut f = Fleet::new("fleet-restart");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(10)), bad_spec("b", "slow", Some(10)));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let mut workers: Vec<Child> = (0..2)
        .map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2", "--lease", "10"]))
        .collect();
    assert!(wait_until(Duration::from_secs(120), || {
        f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")) != "0"
    }));
    f.pg.stop();
    std::thread::sleep(Duration::from_secs(2));
    f.pg.start_again();
    for (i, w) in workers.iter_mut().enumerate() {
        assert!(wait_exit(w, Duration::from_secs(300)).success(), "{}", f.log(&format!("w{i}")));
    }
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    assert_eq!(read_games(&pulled).len(), 24);
    let logs = f.log("w0") + &f.log("w1");
    assert!(logs.contains("retrying"), "no worker saw the restart:\n{logs}");
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
    let mut w = f.worker("w", &["--run", &run.to_string()]);
    let status = wait_exit(&mut w, Duration::from_secs(120));
    let log = f.log("w");
    assert!(!status.success(), "{log}");
    assert!(log.contains("refusing run") && log.contains("engine c"), "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "0");
    assert_eq!(
        f.sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'pending'")),
        "2",
        "the refused pairs are given back"
    );
}

#[test]
fn adaptive_sweep_drops_a_hopeless_point_in_the_report_transaction() {
    e2e::debian_engine("stockfish");
    let f = Fleet::new("fleet-race");
    let run = f.submit(&[
        "sweep",
        "--engine",
        "name=sf,cmd=/usr/games/stockfish",
        "--param",
        "Skill Level",
        "--values",
        "0,20",
        "--nodes",
        "400",
        "--maxmoves",
        "60",
        "--games",
        "32",
        "--adaptive",
        "--adaptive-min-pairs",
        "4",
        "--seed",
        "5",
        "--progress",
        "quiet",
    ]);
    let mut workers: Vec<Child> =
        (0..2).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        assert!(wait_exit(w, Duration::from_secs(300)).success(), "{}", f.log(&format!("w{i}")));
    }
    assert_eq!(
        f.sql(&format!("SELECT verdict FROM pairings WHERE run_id = {run} AND pairing = 0")),
        "dropped"
    );
    let skipped: i64 = f
        .sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'skipped'"))
        .parse()
        .unwrap();
    assert!(skipped > 0, "the dropped point's pending pairs are skipped");
    assert_eq!(
        f.sql(&format!(
            "SELECT count(*) FROM pairs WHERE run_id = {run} AND pairing = 1 AND state = 'done'"
        )),
        "16",
        "the surviving point plays all its pairs"
    );
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    f.assert_nothing_doubled(run);
    let pulled = f.dir.join("pulled");
    f.pull(run, &pulled);
    let summary = read_json(&pulled.join("summary.json"));
    let dropped = summary["fleet"]["dropped"].as_array().expect("fleet.dropped");
    assert_eq!(dropped.len(), 1, "{}", summary["fleet"]);
    assert_eq!(dropped[0]["pairing"], 0);
    assert!(dropped[0]["why"].as_str().unwrap().contains("dropped by racing"), "{}", dropped[0]);
}
