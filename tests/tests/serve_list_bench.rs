//! The list's latency with 1,000 fleet runs: a benchmark, not a test (ignored by default, and
//! it asserts nothing of its figures). A throwaway PostgreSQL on a Unix socket
//! (`e2e::fleet::Fleet`) is filled with 1,000 runs (one submitted by `runner submit` through the
//! fleet's server, which is then stopped, and 999 copies of it in every state, a few dozen
//! active, as runner/benches/serve_fill.sql does), a second `runner serve` reads it as
//! fleet_reader, and four clients read `/` over and over for ten seconds, each on a new connection; it prints how
//! many requests, their p50, p99 and max, and the machine's load.
//!
//!   cargo test -p e2e --test serve_list_bench -- --ignored --nocapture
//!
//! The figures are in docs/measurements/serve-load.md.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use e2e::fleet::Fleet;
use e2e::*;

const CLIENTS: usize = 4;
const SPELL: Duration = Duration::from_secs(10);

/// The time of a `GET path` over HTTP/1.0 on a new connection, the status and the reply.
fn timed_get(port: u16, path: &str) -> (Duration, u16, String) {
    let start = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the reply");
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (took, status, text)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_string()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Fills the fleet with 999 copies of run `big` (made complete, with a tally), in every state.
fn fill(pg: &e2e::pg::TempPg, big: i64) {
    pg.psql(&format!(
        "INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
           VALUES ({big}, 0, 0, 2500, 11000, 22000, 11500, 3000, 34000, 33000, 33000)
           ON CONFLICT (run_id, pairing, worker_id) DO NOTHING;
         UPDATE runs SET state = 'complete', finished_at = now(), stop_reason = 'complete'
           WHERE id = {big};
         INSERT INTO runs (kind, state, stop_reason, submission, plan_hash, owner, approved_by,
                           priority, throughput, judge, created_at, finished_at)
         SELECT r.kind,
                CASE WHEN n % 50 = 0 THEN 'pending' WHEN n % 25 = 0 THEN 'active'
                     WHEN n % 7 = 0 THEN 'failed' ELSE 'decided' END,
                'bench', r.submission, r.plan_hash,
                CASE WHEN n % 2 = 0 THEN 'alice' ELSE 'bob' END, r.owner,
                n % 3, 100, r.judge, now() - make_interval(secs => n * 60),
                CASE WHEN n % 25 <> 0 THEN now() END
           FROM runs r, generate_series(1, 999) n WHERE r.id = {big};
         INSERT INTO pairings (run_id, pairing, label, active)
         SELECT r.id, 0, 'A vs B', r.state = 'active' FROM runs r WHERE r.id <> {big};
         INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
         SELECT r.id, 0, 0, 10, 40, 80, 45, 12, 120, 130, 124 FROM runs r WHERE r.id <> {big};
         ANALYZE;"
    ));
}

#[test]
#[ignore = "a benchmark: cargo test -p e2e --test serve_list_bench -- --ignored --nocapture"]
fn the_list_of_1000_fleet_runs_read_by_4_clients() {
    let mut f = Fleet::new("serve-list-bench");
    let roles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fleet-reader-role.sql");
    f.pg.psql_file(&roles).unwrap_or_else(|e| panic!("docs/fleet-reader-role.sql: {e}"));
    let engine = format!("cmd={}", engine_bin().display());
    let (a, b) = (format!("name=A,{engine}"), format!("name=B,{engine}"));
    let mut args = vec!["match", "--engine", &a, "--engine", &b];
    args.extend(["--nodes", "1000", "--games", "100000", "--sprt", "elo0=0,elo1=5"]);
    let big = f.submit(&args);
    // The fleet's own server is not measured: stopped, so that it reads nothing meanwhile.
    f.kill_server();
    fill(&f.pg, big);
    assert_eq!(f.sql("SELECT count(*) FROM runs"), "1000");

    std::fs::create_dir_all(f.dir.join("results")).unwrap();
    let server = f.server_on(&f.pg.url_as("fleet_reader"), &["--results", "results"], "reader");
    let port = server.port;
    // The first request may wait for the first list (made as the server starts).
    let (first, status, page) = timed_get(port, "/");
    assert_eq!(status, 200);
    // Every run is listed (the finished ones 50 to a page).
    for panel in ["Pending approval (19)", "Running (20)", "Finished (961)"] {
        assert!(page.contains(panel), "{panel}");
    }
    println!("load before: {}", load());
    println!("first GET / (may wait for the first list): {}, {} bytes", ms(first), page.len());

    let start = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            std::thread::spawn(move || {
                let mut took = Vec::new();
                while start.elapsed() < SPELL {
                    let (t, status, _) = timed_get(port, "/");
                    assert_eq!(status, 200);
                    took.push(t);
                }
                took
            })
        })
        .collect();
    let mut took: Vec<Duration> =
        clients.into_iter().flat_map(|c| c.join().expect("a client")).collect();
    let spell = start.elapsed();
    took.sort();
    let at = |q: f64| took[((took.len() as f64 * q) as usize).min(took.len() - 1)];
    println!(
        "GET / with 1,000 fleet runs, {CLIENTS} clients for {:.1} s: {} requests ({:.0}/s), \
         p50 {}, p99 {}, max {}",
        spell.as_secs_f64(),
        took.len(),
        took.len() as f64 / spell.as_secs_f64(),
        ms(at(0.50)),
        ms(at(0.99)),
        ms(took[took.len() - 1]),
    );
    println!("load after: {}", load());
}
