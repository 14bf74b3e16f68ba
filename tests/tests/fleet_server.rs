//! The fleet through its server: `runner serve --db` on a throwaway cluster, workers started
//! with `runner worker --server URL --key-file FILE` and no database URL anywhere in their
//! environment, playing runs of badengine (node-limited, no result depends on timing) to the
//! end; a worker killed mid-run whose pairs are played again; TLS with a CA made by the test.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use e2e::pg::TempPg;
use e2e::{bad_spec, read_games, run_runner, runner_bin, scratch, stderr, wait_until};

struct Fleet {
    pg: TempPg,
    dir: PathBuf,
    server: Child,
    /// `http://127.0.0.1:PORT` (or https).
    url: String,
    key_file: PathBuf,
    /// An approver's token (`runner user add ops --approver`): runs are submitted and pulled
    /// through the server.
    token_file: PathBuf,
    /// The CA of the server's certificate, for the people's commands.
    ca: Option<PathBuf>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Fleet {
    /// A cluster, its schema, a worker key in a file, and `runner serve --db` on a free port
    /// (with `extra` arguments: TLS).
    fn new(name: &str, extra: &[&str]) -> Fleet {
        let dir = scratch(name);
        let pg = TempPg::start(name);
        let o = run_runner(&dir, &["db", "init", "--db", &pg.url()]);
        assert!(o.status.success(), "db init: {}", stderr(&o));
        let o = run_runner(&dir, &["worker-key", "add", "box", "--db", &pg.url()]);
        assert!(o.status.success(), "worker-key add: {}", stderr(&o));
        let key = String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
        let key_file = dir.join("worker.key");
        std::fs::write(&key_file, format!("{key}\n")).unwrap();
        let o = run_runner(&dir, &["user", "add", "ops", "--approver", "--db", &pg.url()]);
        assert!(o.status.success(), "user add: {}", stderr(&o));
        let token =
            String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
        let token_file = dir.join("ops.token");
        std::fs::write(&token_file, format!("{token}\n")).unwrap();
        let (server, url) = spawn_server(&pg, &dir, "127.0.0.1:0", extra);
        Fleet { pg, dir, server, url, key_file, token_file, ca: None }
    }

    /// Stops the server at once (SIGKILL).
    fn kill_server(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }

    /// A new server on the address of the last one.
    fn start_server_again(&mut self) {
        let bind = self.url.trim_start_matches("http://").to_string();
        let (server, _) = spawn_server(&self.pg, &self.dir, &bind, &[]);
        self.server = server;
    }

    /// A people's command through the server (`--server`, the token, the CA): no database
    /// URL in its arguments or environment.
    fn person(&self, cmd: &str, args: &[&str]) -> std::process::Output {
        let mut c = Command::new(runner_bin());
        c.current_dir(&self.dir).arg(cmd).args(["--server", &self.url, "--token-file"]);
        c.arg(&self.token_file);
        if let Some(ca) = &self.ca {
            c.arg("--ca").arg(ca);
        }
        for var in ["RUNNER_DB", "RUNNER_SERVER", "RUNNER_TOKEN", "PGHOST", "PGUSER"] {
            c.env_remove(var);
        }
        c.args(args).stdin(Stdio::null()).output().expect("runner")
    }

    fn submit(&self, args: &[&str]) -> i64 {
        let o = self.person("submit", args);
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines()
            .last()
            .and_then(|l| l.strip_prefix("run "))
            .and_then(|id| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `run ID` last line: {out}"))
    }

    /// A worker of the server: no database URL in its arguments or environment.
    fn worker(&self, name: &str, extra: &[&str]) -> Child {
        self.worker_of(&self.url, name, extra)
    }

    /// A worker of the server at `url` (another server on the same database).
    fn worker_of(&self, url: &str, name: &str, extra: &[&str]) -> Child {
        let bad = e2e::badengine_bin();
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        Command::new(runner_bin())
            .args(["worker", "--server", url, "--key-file"])
            .arg(&self.key_file)
            .arg("--trust")
            .arg(bad.parent().unwrap())
            .args(extra)
            .env_remove("RUNNER_DB")
            .env_remove("RUNNER_WORKER_KEY")
            .env_remove("PGHOST")
            .env_remove("PGUSER")
            .env_remove("PGDATABASE")
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
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

    fn sql(&self, q: &str) -> String {
        self.pg.psql(q)
    }

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

    /// The run's counts as the database stored them: games, and the tallies' pairs.
    fn stored(&self, run: i64) -> (i64, i64) {
        let games = self.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}"));
        let pairs = self.sql(&format!(
            "SELECT coalesce(sum(ll + ld + dd + wd + ww), 0) FROM tallies WHERE run_id = {run}"
        ));
        (games.parse().unwrap(), pairs.parse().unwrap())
    }
}

/// `runner serve --db` on `bind`, its stderr in the folder's server.log; the server and its
/// URL, read from its first line.
fn spawn_server(pg: &TempPg, dir: &Path, bind: &str, extra: &[&str]) -> (Child, String) {
    let log =
        std::fs::OpenOptions::new().create(true).append(true).open(dir.join("server.log")).unwrap();
    let mut server = Command::new(runner_bin())
        .args(["serve", "--db", &pg.url(), "--bind", bind, "--results"])
        .arg(dir.join("no-results"))
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("start runner serve");
    let mut first = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let url = first
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .trim_end_matches('/')
        .to_string();
    (server, url)
}

fn wait_exit(child: &mut Child, limit: Duration, log: &str) -> std::process::ExitStatus {
    let mut status = None;
    let done = wait_until(limit, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if !done {
        let _ = child.kill();
        panic!("a worker did not end within {limit:?}: {log}");
    }
    status.unwrap()
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

/// The tally lines a worker printed at its end: "N pair(s) stored".
fn stored_by(log: &str) -> i64 {
    log.lines()
        .filter_map(|l| l.strip_prefix("worker done: "))
        .filter_map(|l| l.split_whitespace().next()?.parse::<i64>().ok())
        .sum()
}

#[test]
fn three_workers_of_the_server_play_an_sprt_to_its_end_without_a_database_url() {
    let f = Fleet::new("server-sprt", &[]);
    let book = e2e::write_book(&f.dir, 8);
    // A strong engine against one that blunders: the SPRT decides well before 400 games.
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let mut args = match_args(&a, &b, &book, "48");
    args.extend(["--sprt", "elo0=0,elo1=400"]);
    let run = f.submit(&args);
    let mut workers: Vec<Child> =
        (0..3).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        let log = f.log(&format!("w{i}"));
        assert!(
            wait_exit(w, Duration::from_secs(300), &log).success(),
            "{}",
            f.log(&format!("w{i}"))
        );
    }
    let state = f.sql(&format!("SELECT state FROM runs WHERE id = {run}"));
    assert!(state == "complete" || state == "decided", "run {run} is {state}");
    f.assert_nothing_doubled(run);
    let (games, pairs) = f.stored(run);
    assert_eq!(games, 2 * pairs, "the counts are the stored games");
    let said: i64 = (0..3).map(|i| stored_by(&f.log(&format!("w{i}")))).sum();
    assert_eq!(said, pairs, "the workers' tallies are what the database stored");
    for i in 0..3 {
        let log = f.log(&format!("w{i}"));
        assert!(log.contains(&format!("server {}", f.url)), "{log}");
        assert!(!log.contains("database"), "a worker of the server names no database: {log}");
    }
    let pulled = f.dir.join("pulled");
    let o = f.person("pull", &[&run.to_string(), "--out", &pulled.to_string_lossy()]);
    assert!(o.status.success(), "pull: {}", stderr(&o));
    assert_eq!(read_games(&pulled).len() as i64, games);
    // The same folder pulled straight from the database: the same games.
    let direct = f.dir.join("pulled-direct");
    let url = f.pg.url();
    let o = run_runner(
        &f.dir,
        &["pull", &run.to_string(), "--db", &url, "--out", &direct.to_string_lossy()],
    );
    assert!(o.status.success(), "pull --db: {}", stderr(&o));
    assert_eq!(read_games(&pulled), read_games(&direct));
    let pgn = |d: &Path| std::fs::read_to_string(d.join("games.pgn")).unwrap();
    assert_eq!(pgn(&pulled), pgn(&direct), "the same games.pgn either way");
}

#[test]
fn a_killed_worker_of_the_server_loses_nothing_and_its_pairs_are_played_again() {
    let f = Fleet::new("server-kill", &[]);
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "16"));
    let mut victim = f.worker("victim", &["--concurrency", "2", "--lease", "5"]);
    assert!(
        wait_until(Duration::from_secs(120), || {
            f.sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'leased'"))
                != "0"
        }),
        "{}",
        f.log("victim")
    );
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(victim.id() as i32, libc::SIGKILL) };
    let _ = victim.wait();
    let mut rescuer = f.worker("rescuer", &["--concurrency", "2", "--lease", "5"]);
    let log = f.log("rescuer");
    assert!(
        wait_exit(&mut rescuer, Duration::from_secs(300), &log).success(),
        "{}",
        f.log("rescuer")
    );
    f.assert_nothing_doubled(run);
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    let again: i64 = f
        .sql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND attempts > 1"))
        .parse()
        .unwrap();
    assert!(again >= 1, "the killed worker's pairs were handed out again");
    assert_eq!(f.stored(run), (16, 8));
}

/// A CA and a certificate for 127.0.0.1 signed by it, as PEM files in `dir`: (ca, cert, key).
fn make_ca(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, format!("{name} test CA"));
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    leaf.subject_alt_names.push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let leaf_key = KeyPair::generate().unwrap();
    let leaf_cert = leaf.signed_by(&leaf_key, &ca_cert, &ca_key).unwrap();
    let paths = (
        dir.join(format!("{name}-ca.pem")),
        dir.join(format!("{name}-cert.pem")),
        dir.join(format!("{name}-key.pem")),
    );
    std::fs::write(&paths.0, ca_cert.pem()).unwrap();
    std::fs::write(&paths.1, leaf_cert.pem()).unwrap();
    std::fs::write(&paths.2, leaf_key.serialize_pem()).unwrap();
    (paths.0, paths.1, paths.2)
}

#[test]
fn a_worker_verifies_the_server_with_its_ca_and_refuses_one_it_does_not_trust() {
    let dir = scratch("server-tls-certs");
    let (ca, cert, key) = make_ca(&dir, "ours");
    let (other_ca, _, _) = make_ca(&dir, "theirs");
    let (cert_s, key_s) = (cert.to_string_lossy().into_owned(), key.to_string_lossy().into_owned());
    let mut f = Fleet::new("server-tls", &["--tls-cert", &cert_s, "--tls-key", &key_s]);
    f.ca = Some(ca.clone());
    assert!(f.url.starts_with("https://"), "{}", f.url);
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "8"));
    // A CA it does not trust: refused at once, in one line, not retried for minutes.
    let mut w = f.worker("untrusting", &["--ca", &other_ca.to_string_lossy()]);
    let st = wait_exit(&mut w, Duration::from_secs(120), "untrusting");
    assert!(!st.success());
    let log = f.log("untrusting");
    assert!(log.contains("TLS") && log.contains("--ca"), "{log}");
    assert_eq!(f.sql("SELECT count(*) FROM workers"), "0", "{log}");
    // Mozilla's roots do not know the test's CA either.
    let mut w = f.worker("defaults", &[]);
    assert!(!wait_exit(&mut w, Duration::from_secs(120), "defaults").success());
    // With --ca it plays the run.
    let mut w = f.worker("trusting", &["--ca", &ca.to_string_lossy()]);
    let log = f.log("trusting");
    assert!(wait_exit(&mut w, Duration::from_secs(300), &log).success(), "{}", f.log("trusting"));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    assert_eq!(f.stored(run), (8, 4));
}

/// A worker started while its server is down (restarting) waits for it instead of exiting,
/// then plays the run.
#[test]
fn a_worker_started_while_the_server_is_down_waits_for_it() {
    let mut f = Fleet::new("server-later", &[]);
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "8"));
    f.kill_server();
    let mut w = f.worker("early", &[]);
    assert!(
        wait_until(Duration::from_secs(120), || f.log("early").contains("retrying")),
        "{}",
        f.log("early")
    );
    assert!(w.try_wait().unwrap().is_none(), "the worker exited: {}", f.log("early"));
    f.start_server_again();
    let log = f.log("early");
    assert!(wait_exit(&mut w, Duration::from_secs(300), &log).success(), "{}", f.log("early"));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    assert_eq!(f.stored(run), (8, 4));
}

/// Two servers on one database share its workers (the server keeps no run state of its own):
/// two workers of each play one run; the first server is stopped with SIGTERM while its
/// workers play (the second's paused), ends within seconds, and a new one takes its address. Nothing is lost or doubled,
/// and the run ends as the database says.
#[test]
fn two_servers_on_one_database_share_the_workers_and_a_restart_loses_nothing() {
    let mut f = Fleet::new("server-two", &[]);
    let (second, url2) = spawn_server(&f.pg, &f.dir, "127.0.0.1:0", &[]);
    struct Stop(Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _second = Stop(second);
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let one = ["--concurrency", "1", "--lease", "10"];
    let url1 = f.url.clone();
    let mut workers = [
        ("w1", f.worker_of(&url1, "w1", &one)),
        ("w2", f.worker_of(&url1, "w2", &one)),
        ("w3", f.worker_of(&url2, "w3", &one)),
        ("w4", f.worker_of(&url2, "w4", &one)),
    ];
    let some = || f.stored(run).0 >= 4;
    assert!(wait_until(Duration::from_secs(120), some), "{}", f.log("w1"));
    // The second server's workers wait (SIGSTOP) while the first server restarts, so the run
    // cannot end meanwhile: the first server's workers must go on with the new one.
    let signal = |w: &Child, s: i32| {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(w.id() as i32, s) };
    };
    for (_, w) in &workers[2..] {
        signal(w, libc::SIGSTOP);
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(f.server.id() as i32, libc::SIGTERM) };
    let mut ended = None;
    let stopped = wait_until(Duration::from_secs(20), || {
        ended = f.server.try_wait().ok().flatten();
        ended.is_some()
    });
    assert!(stopped, "the server did not stop within 20 s of SIGTERM");
    let at_restart = f.stored(run).0;
    f.start_server_again();
    for (_, w) in &workers[2..] {
        signal(w, libc::SIGCONT);
    }
    for (name, w) in workers.iter_mut() {
        let log = f.log(name);
        assert!(wait_exit(w, Duration::from_secs(300), &log).success(), "{}", f.log(name));
    }
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete");
    f.assert_nothing_doubled(run);
    assert_eq!(f.stored(run), (24, 12));
    // The restart came mid-run, so the first server's workers (which ended well) went on
    // with the new one.
    assert!(at_restart < 24, "the run ended before the restart");
    let said: i64 = ["w1", "w2", "w3", "w4"].iter().map(|n| stored_by(&f.log(n))).sum();
    assert_eq!(said, 12, "the workers' tallies are what the database stored");
    for (name, url) in [("w1", &url1), ("w3", &url2)] {
        assert!(f.log(name).contains(&format!("server {url}")), "{}", f.log(name));
    }
}
