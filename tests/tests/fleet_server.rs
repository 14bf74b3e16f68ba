//! The fleet through its server: `runner serve --db` on a throwaway cluster, workers started
//! with `runner worker --server URL --key-file FILE` and no database URL anywhere in their
//! environment, playing runs of badengine (node-limited, no result depends on timing) to the
//! end; a worker killed mid-run whose pairs are played again; TLS with a CA made by the test.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use e2e::fleet::{Fleet, WorkerOpts, match_args};
use e2e::{bad_spec, read_games, scratch, stderr, wait_until};

/// The tally lines a worker printed at its end: "N pair(s) stored".
fn stored_by(log: &str) -> i64 {
    log.lines()
        .filter_map(|l| l.strip_prefix("worker done: "))
        .filter_map(|l| l.split_whitespace().next()?.parse::<i64>().ok())
        .sum()
}

#[test]
fn three_workers_of_the_server_play_an_sprt_to_its_end_without_a_database_url() {
    let f = Fleet::new("server-sprt");
    let book = e2e::write_book(&f.dir, 8);
    // A strong engine against one that blunders: the SPRT decides well before 400 games.
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let mut args = match_args(&a, &b, &book, "48");
    args.extend(["--sprt", "elo0=0,elo1=400"]);
    let run = f.submit(&args);
    let mut workers: Vec<Child> =
        (0..3).map(|i| f.worker(&format!("w{i}"), &["--concurrency", "2"])).collect();
    for (i, w) in workers.iter_mut().enumerate() {
        let name = format!("w{i}");
        assert!(f.ended(w, &name, Duration::from_secs(300)).success(), "{}", f.log(&name));
    }
    let state = f.state(run);
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
    f.pull(run, &pulled);
    assert_eq!(read_games(&pulled).len() as i64, games);
    // The same folder pulled straight from the database: the same games.
    let direct = f.dir.join("pulled-direct");
    let o = f.operator(&["pull", &run.to_string(), "--out", &direct.to_string_lossy()]);
    assert!(o.status.success(), "pull --db: {}", stderr(&o));
    assert_eq!(read_games(&pulled), read_games(&direct));
    let pgn = |d: &Path| std::fs::read_to_string(d.join("games.pgn")).unwrap();
    assert_eq!(pgn(&pulled), pgn(&direct), "the same games.pgn either way");
}

#[test]
fn a_killed_worker_of_the_server_loses_nothing_and_its_pairs_are_played_again() {
    let f = Fleet::new("server-kill");
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "16"));
    let mut victim = f.worker("victim", &["--concurrency", "2", "--lease", "5"]);
    assert!(
        wait_until(Duration::from_secs(120), || f.pairs_in("leased", run) != 0),
        "{}",
        f.log("victim")
    );
    // SAFETY: a signal to our own child.
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
    let mut f = Fleet::serving("server-tls", &["--tls-cert", &cert_s, "--tls-key", &key_s]);
    f.ca = Some(ca.clone());
    assert!(f.url.starts_with("https://"), "{}", f.url);
    let book = e2e::write_book(&f.dir, 4);
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let run = f.submit(&match_args(&a, &b, &book, "8"));
    // A CA it does not trust: refused at once, in one line, not retried for minutes.
    let mut w = f.worker("untrusting", &["--ca", &other_ca.to_string_lossy()]);
    let st = f.ended(&mut w, "untrusting", Duration::from_secs(120));
    assert!(!st.success());
    let log = f.log("untrusting");
    assert!(log.contains("TLS") && log.contains("--ca"), "{log}");
    assert_eq!(f.sql("SELECT count(*) FROM workers"), "0", "{log}");
    // Mozilla's roots do not know the test's CA either.
    let mut w = f.worker("defaults", &[]);
    assert!(!f.ended(&mut w, "defaults", Duration::from_secs(120)).success());
    // With --ca it plays the run.
    let mut w = f.worker("trusting", &["--ca", &ca.to_string_lossy()]);
    assert!(
        f.ended(&mut w, "trusting", Duration::from_secs(300)).success(),
        "{}",
        f.log("trusting")
    );
    assert_eq!(f.state(run), "complete");
    assert_eq!(f.stored(run), (8, 4));
}

/// A worker started while its server is down (restarting) waits for it instead of exiting,
/// then plays the run.
#[test]
fn a_worker_started_while_the_server_is_down_waits_for_it() {
    let mut f = Fleet::new("server-later");
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
    assert!(f.ended(&mut w, "early", Duration::from_secs(300)).success(), "{}", f.log("early"));
    assert_eq!(f.state(run), "complete");
    assert_eq!(f.stored(run), (8, 4));
}

/// Two servers on one database share its workers (the server keeps no run state of its own):
/// two workers of each play one run; the first server is stopped with SIGTERM while its
/// workers play (the second's paused), ends within seconds, and a new one takes its address. Nothing is lost or doubled,
/// and the run ends as the database says.
#[test]
fn two_servers_on_one_database_share_the_workers_and_a_restart_loses_nothing() {
    let mut f = Fleet::new("server-two");
    let second = f.server_on(&f.pg.url(), &[], "server-2");
    let url2 = second.url.clone();
    let book = e2e::write_book(&f.dir, 8);
    let (a, b) = (bad_spec("a", "slow", Some(20)), bad_spec("b", "slow", Some(20)));
    let run = f.submit(&match_args(&a, &b, &book, "24"));
    let one = ["--concurrency", "1", "--lease", "10"];
    let url1 = f.url.clone();
    let of = |url: &str, name: &str| {
        f.worker_with(name, WorkerOpts { args: &one, server: Some(url), ..Default::default() })
    };
    let mut workers = [
        ("w1", of(&url1, "w1")),
        ("w2", of(&url1, "w2")),
        ("w3", of(&url2, "w3")),
        ("w4", of(&url2, "w4")),
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
    unsafe { libc::kill(f.server_pid(), libc::SIGTERM) };
    assert!(
        f.server_exited(Duration::from_secs(20)),
        "the server did not stop within 20 s of SIGTERM"
    );
    let at_restart = f.stored(run).0;
    f.start_server_again();
    for (_, w) in &workers[2..] {
        signal(w, libc::SIGCONT);
    }
    for (name, w) in workers.iter_mut() {
        assert!(f.ended(w, name, Duration::from_secs(300)).success(), "{}", f.log(name));
    }
    assert_eq!(f.state(run), "complete");
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
