//! `runner serve` end to end: a real server process on a free localhost port, over run folders
//! made by real short matches (and, with PostgreSQL, over a fleet database with a worker of the
//! fleet's server playing), read through plain HTTP/1.0 requests, its event stream, and headless Chromium.
//! A screenshot of the list is kept in each test's scratch folder (serve-index.png).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use e2e::fleet::{Fleet, Server as FleetServer};
use e2e::http::{Reply, request};
use e2e::*;

/// A `runner serve` process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `runner serve --bind 127.0.0.1:0 ARGS` in `dir` and reads the port from its first
/// line (`serving http://127.0.0.1:PORT/ ...`), waiting at most a minute.
fn serve(dir: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(runner_bin())
        .current_dir(dir)
        .arg("serve")
        .args(["--bind", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("serve.err")).expect("serve.err"))
        .spawn()
        .expect("starting runner serve");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
    let port = line
        .strip_prefix("serving http://127.0.0.1:")
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok());
    let Some(port) = port else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "runner serve did not say where it listens: {line:?}; {}",
            read_text(&dir.join("serve.err"))
        );
    };
    Server { child, port }
}

/// `GET path` (the shared HTTP/1.0 request: the server closes the connection after the body).
fn get(port: u16, path: &str) -> Reply {
    request(port, "GET", path, &[], "")
}

fn get_ok(port: u16, path: &str) -> Reply {
    let r = get(port, path);
    assert_eq!(r.status, 200, "GET {path}: {}\n{}", r.head, r.body);
    r
}

fn api_run(port: u16, id: &str) -> serde_json::Value {
    serde_json::from_str(&get_ok(port, &format!("/api/run/{id}")).body).expect("JSON")
}

/// The events of `path`'s stream, read until `done` holds for one (its name and data) or
/// `limit` passes; returns them all.
fn events_until(
    port: u16,
    path: &str,
    limit: Duration,
    mut done: impl FnMut(&str, &str) -> bool,
) -> Vec<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        .unwrap();
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let mut reader = BufReader::new(s);
    let (mut name, mut data, mut seen) = (String::new(), String::new(), Vec::new());
    // A read that times out may leave part of a line in `buf`: it is kept until its end comes.
    let mut buf = String::new();
    while start.elapsed() < limit {
        match reader.read_line(&mut buf) {
            Ok(0) => break,
            Ok(_) if buf.ends_with('\n') => {}
            Ok(_) | Err(_) => continue,
        }
        let whole = std::mem::take(&mut buf);
        let line = whole.trim_end();
        if let Some(v) = line.strip_prefix("event:") {
            name = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim());
        } else if line.is_empty() && !name.is_empty() {
            seen.push((name.clone(), data.clone()));
            if done(&name, &data) {
                return seen;
            }
            name.clear();
            data.clear();
        }
    }
    panic!("waited {limit:?} on {path} for an event, in vain; seen {seen:?}");
}

/// The games count of a `counts` event's first run.
fn games_in(data: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(data).ok()?;
    let fields = v.get(0)?.get("fields")?.as_array()?;
    let games = fields.iter().find(|f| f[0] == "games")?;
    games[1].as_str()?.parse().ok()
}

/// A test's scratch folder with an empty `results/` and a four-opening book in it.
struct Bench {
    dir: std::path::PathBuf,
    results: std::path::PathBuf,
    book: String,
}

fn bench(name: &str) -> Bench {
    let dir = scratch(name);
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let book = write_book(&dir, 4);
    Bench { dir, results, book }
}

/// A fleet (`e2e::fleet::Fleet`: its database, an approver and its own server) whose database
/// has the read-only role of docs/fleet-reader-role.sql, with an empty `results/` and a
/// four-opening book in its folder.
fn fleet_with_roles(name: &str) -> (Fleet, String) {
    let f = Fleet::new(name);
    let roles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fleet-reader-role.sql");
    f.pg.psql_file(&roles).unwrap_or_else(|e| panic!("docs/fleet-reader-role.sql: {e}"));
    std::fs::create_dir_all(f.dir.join("results")).unwrap();
    let book = write_book(&f.dir, 4);
    (f, book)
}

/// A server of `f`'s pages reading the database as fleet_reader (read-only), listing the
/// folder's `results/` too.
fn reader(f: &Fleet) -> FleetServer {
    f.server_on(&f.pg.url_as("fleet_reader"), &["--results", "results"], "reader")
}

/// `runner submit` (through the fleet's server, as its approver) of a match of `a` against `b`
/// (extra arguments after the book); the run's id.
fn submit(f: &Fleet, a: &str, b: &str, book: &str, extra: &[&str]) -> i64 {
    let mut args = vec!["match", "--engine", a, "--engine", b, "--book", book];
    args.extend_from_slice(extra);
    f.submit(&args)
}

fn strict_policy(r: &Reply) {
    let csp = r.head.lines().find(|l| l.starts_with("content-security-policy:")).expect("a CSP");
    assert!(csp.contains("default-src 'none'") && !csp.contains("unsafe"), "{csp}");
    assert!(csp.contains("connect-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
}

#[test]
fn local_runs_are_listed_and_shown_in_a_browser() {
    let _w = watchdog("serve-local", Duration::from_secs(600));
    let Bench { dir, results, book } = bench("serve-local");
    let engine = engine_bin();
    let a = format!("name=A,cmd={}", engine.display());
    let b = format!("name=B,cmd={}", engine.display());
    let mut args = match_args(&a, &b, "results/m1", &["--book", &book]);
    args.extend("--nodes 2000 --games 6 --concurrency 2 --sprt elo0=0,elo1=10".split(' '));
    assert_eq!(run_games(&dir, &args, &results.join("m1")).len(), 6);

    let server = serve(&dir, &["--results", "results"]);
    let port = server.port;
    let index = get_ok(port, "/");
    strict_policy(&index);
    assert!(index.body.contains("href=\"/run/m1\""), "{}", index.body);
    assert!(index.body.contains("A vs B") && index.body.contains("Finished (1)"), "{}", index.body);
    let run = api_run(port, "m1");
    assert_eq!(run["games"], 6, "{run}");
    // Six games of an SPRT that cannot decide so soon: ended (accepted or rejected if it did).
    let state = run["state"].as_str().unwrap_or("");
    assert!(["ended", "accepted", "rejected"].contains(&state), "{run}");
    assert!(run["pairings"][0]["summary"]["sprt"]["llr"].is_number(), "{run}");

    let page = get_ok(port, "/run/m1");
    strict_policy(&page);
    assert!(page.body.contains("<section id=\"verdict\""), "the report renderer's page");
    assert!(page.body.contains("href=\"/run/m1/games\""));
    let games = get_ok(port, "/run/m1/games?offset=2&limit=3");
    assert_eq!(games.body.matches("<li class=\"game\"").count(), 3, "{}", games.body);
    assert!(games.body.contains("id=\"game-3\"") && games.body.contains("[Event "));
    let jsonl = get_ok(port, "/run/m1/games.jsonl");
    assert!(jsonl.head.contains("content-disposition: attachment"), "{}", jsonl.head);
    assert_eq!(jsonl.body.lines().count(), 6);
    assert!(get_ok(port, "/run/m1/games.pgn").body.matches("[Event ").count() == 6);
    let metrics = get_ok(port, "/metrics").body;
    assert!(metrics.contains(&format!("runner_runs{{source=\"local\",state=\"{state}\"}} 1")));
    assert!(metrics.contains("runner_runs{source=\"local\",state=\"running\"} 0"), "{metrics}");
    assert!(metrics.contains("runner_games{source=\"local\"} 6"), "{metrics}");
    for bad in ["/run/..", "/run/.hidden", "/run/nosuch", "/run/m1%2F..", "/nosuch"] {
        assert_eq!(get(port, bad).status, 404, "{bad}");
    }

    // What a person sees: the list and the run's page in Chromium, no console message (a
    // blocked script or style would be one).
    let base = format!("http://127.0.0.1:{port}");
    let shot = dir.join("serve-index.png");
    let seen = browse(&format!("{base}/"), &dir, Some(&shot));
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(shot.is_file());
    let seen = browse(&format!("{base}/"), &dir, None);
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.dom.contains("href=\"/run/m1\"") && seen.dom.contains("A vs B"));
    // The row reads at a glance: its state's class and word, and its games as a bar.
    let row = format!("<tr class=\"st-{state}\" data-state-of=\"m1\">");
    assert!(seen.dom.contains(&row), "{}", seen.dom);
    assert!(
        seen.dom.contains("<progress class=\"games\" data-live=\"m1.games\" max=\"6\" value=\"6\"")
    );
    let seen = browse(&format!("{base}/run/m1"), &dir, None);
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.dom.contains("data-script=\"ok\""), "the report page's script ran");
    assert!(html_section(&seen.dom, "verdict").contains("A vs B: SPRT [0, 10]"));
    browse(&format!("{base}/run/m1"), &dir, Some(&dir.join("serve-run.png")));
}

#[test]
fn a_local_run_s_counts_rise_live_and_its_stream_ends_with_it() {
    let _w = watchdog("serve-live", Duration::from_secs(600));
    let Bench { dir, results, book } = bench("serve-live");
    let out = results.join("live");
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let mut args = match_args(&a, &b, "results/live", &["--book", &book]);
    args.extend("--nodes 1 --games 8 --concurrency 1".split(' '));
    let mut run = spawn_runner(&dir, &args);
    wait_for_games(&out, 1, Duration::from_secs(120));
    // The runner is stopped (SIGSTOP) until the stream has said its first counts, so the run is
    // surely live while the server is watched, whatever the machine's speed; a game that spans
    // the stop is played again by the runner (not scored).
    let pid = run.id().to_string();
    let signal =
        |s: &str| assert!(Command::new("kill").args([s, &pid]).status().unwrap().success());
    signal("-STOP");

    let server = serve(&dir, &["--results", "results"]);
    let port = server.port;
    let first = api_run(port, "live");
    assert_eq!(first["state"], "running", "{first}");
    // The stream's first counts, then release the engines and see the count rise on the stream
    // without any other request, up to the end.
    let mut counts = Vec::new();
    let mut released = false;
    let seen = events_until(port, "/run/live/events", Duration::from_secs(300), |name, data| {
        if name == "counts" {
            counts.extend(games_in(data));
            if !released {
                signal("-CONT");
                released = true;
            }
        }
        name == "end"
    });
    // Counts never fall and do rise; one count may come twice (the stream also speaks when
    // the verdict or state changes at equal games, e.g. the run's end).
    assert!(counts.len() >= 2 && counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?} {seen:?}");
    assert!(counts.first() < counts.last(), "{counts:?} {seen:?}");
    assert_eq!(counts.last(), Some(&8), "{seen:?}");
    assert!(wait_exit(&mut run, "the match", Duration::from_secs(120)).success());
    let last = api_run(port, "live");
    assert_eq!(last["state"], "ended", "{last}");
    assert_eq!(last["games"], 8, "{last}");
}

/// What a run page shows of its counts, read in the browser: the Games heading's count, the
/// verdict line the stream keeps current, and the live box's games and LLR; and whether the
/// page is still the one first loaded (a mark set on it survives no reload).
const PAGE_STATE: &str = r#"(function(){
  var h=document.querySelector('#games h2'),v=document.querySelector('[data-live$=".verdict_line"]');
  var f=function(k){var e=document.querySelector('#live [data-live$=".'+k+'"]');return e?e.textContent:null;};
  var labels=Array.prototype.map.call(document.querySelectorAll('#live dt'),function(e){return e.textContent;});
  return {heading:h?h.textContent:null,verdict:v?v.textContent:null,games:f('games'),llr:f('llr'),
    state:f('state'),labels:labels,
    updates:document.getElementById('live').getAttribute('data-updates'),kept:window.__kept===1};
})()"#;

/// A run page open in Chromium while games are played: its Games heading, its verdict line and
/// its live box all follow the stream, and agree with each other and with the run's games after
/// they were played, without a reload; the page says what of it is live.
#[test]
fn a_live_run_page_agrees_with_itself_without_a_reload() {
    let _w = watchdog("serve-live-page", Duration::from_secs(900));
    let Bench { dir, results, book } = bench("serve-live-page");
    let out = results.join("live");
    let engine = engine_bin();
    let a = format!("name=A,cmd={}", engine.display());
    let b = format!("name=B,cmd={},option.LMR=false", engine.display());
    let mut args = match_args(&a, &b, "results/live", &["--book", &book]);
    args.extend(
        "--nodes 300 --games 2000 --concurrency 1 --maxmoves 30 --sprt elo0=0,elo1=10".split(' '),
    );
    let mut run = spawn_runner(&dir, &args);
    wait_for_games(&out, 4, Duration::from_secs(180));
    // The runner is stopped whenever the page is read, so the files hold still meanwhile.
    let pid = run.id().to_string();
    let signal =
        |s: &str| assert!(Command::new("kill").args([s, &pid]).status().unwrap().success());
    signal("-STOP");
    let server = serve(&dir, &["--results", "results"]);
    let port = server.port;
    let mut page = e2e::cdp::Browser::launch(&dir);
    page.open(&format!("http://127.0.0.1:{}/run/live", port));
    let first = page.eval(PAGE_STATE);
    let at_load = read_games(&out).len();
    assert_eq!(first["heading"], format!("Games ({at_load})"), "{first}");
    assert!(first["verdict"].as_str().is_some_and(|v| v.contains("SPRT")), "{first}");
    // The live box is labelled figures, its state in the shared words.
    assert_eq!(first["state"], "running", "{first}");
    let labels = ["State", "Games", "W-D-L", "Pentanomial", "Elo (95 %)", "nElo (95 %)", "LLR"];
    assert_eq!(first["labels"], serde_json::json!(labels), "{first}");
    let note = page.eval("document.getElementById('live-note').textContent");
    assert!(note.as_str().is_some_and(|n| n.contains("as of this page's loading")), "{note}");
    assert!(!get_ok(port, "/run/live").body.contains("reloads every"), "no false reload claim");
    page.eval("window.__kept=1");

    signal("-CONT");
    wait_for_games(&out, at_load + 6, Duration::from_secs(300));
    signal("-STOP");
    let played = read_games(&out).len();
    let mut seen = serde_json::Value::Null;
    page.poll("the page to show every game", Duration::from_secs(60), |p| {
        seen = p.eval(PAGE_STATE);
        seen["games"].as_str().and_then(|g| g.parse::<usize>().ok()) == Some(played)
    });
    assert_eq!(seen["heading"], format!("Games ({played})"), "{seen}");
    let llr = seen["llr"].as_str().unwrap_or("none");
    let verdict = seen["verdict"].as_str().unwrap_or("");
    assert!(verdict.contains(&format!(" LLR {llr} in ")), "verdict and box differ: {seen}");
    let api = api_run(port, "live");
    let api_llr = api["pairings"][0]["summary"]["sprt"]["llr"].as_f64().expect("an LLR");
    assert_eq!(llr, format!("{api_llr:.2}"), "{api}");
    assert_eq!(seen["kept"], true, "the page was reloaded: {seen}");
    assert_ne!(seen["updates"], serde_json::Value::Null, "no event reached the page: {seen}");
    drop(page);
    signal("-CONT");
    let _ = run.kill();
    let _ = run.wait();
}

#[test]
fn markup_in_names_options_and_tags_is_escaped() {
    let _w = watchdog("serve-escape", Duration::from_secs(600));
    let Bench { dir, results, book } = bench("serve-escape");
    let a =
        format!("name=<b>A</b>,cmd={},arg=good,option.Note=<i>x</i>", badengine_bin().display());
    let b = bad_spec("B", "good", None);
    let mut args = match_args(&a, &b, "results/x", &["--book", &book]);
    args.extend(["--nodes", "1", "--games", "2", "--event", "<script>alert(1)</script>"]);
    // badengine declares no `Note`: sent anyway on purpose.
    args.push("--allow-unknown-options");
    assert_eq!(run_games(&dir, &args, &results.join("x")).len(), 2);

    let server = serve(&dir, &["--results", "results"]);
    let port = server.port;
    for path in ["/", "/run/x", "/run/x/games"] {
        let body = get_ok(port, path).body;
        for raw in ["<b>A</b>", "<i>x</i>", "<script>alert(1)</script>"] {
            assert!(!body.contains(raw), "{raw} unescaped on {path}");
        }
        assert!(body.contains("&lt;b&gt;A&lt;/b&gt;"), "the name is shown, escaped, on {path}");
    }
    assert!(get_ok(port, "/run/x/games").body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn a_fleet_run_is_listed_counted_live_and_decided() {
    let _w = watchdog("serve-fleet", Duration::from_secs(900));
    let (f, book) = fleet_with_roles("serve-fleet");
    let dir = &f.dir;
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let run = submit(&f, &a, &b, &book, &["--nodes", "1", "--games", "8", "--seed", "7"]);
    let id = format!("fleet-{run}");

    // The pages come from a second server, reading as fleet_reader: read-only. The worker
    // plays through the fleet's own server.
    let server = reader(&f);
    let port = server.port;
    let index = get_ok(port, "/");
    assert!(index.body.contains(&format!("href=\"/run/{id}\"")), "{}", index.body);
    assert_eq!(api_run(port, &id)["games"], 0);

    let mut worker = f.worker("worker", &["--concurrency", "1"]);
    wait_for("a pair reported", Duration::from_secs(180), || {
        api_run(port, &id)["games"].as_u64().unwrap_or(0) >= 2
    });
    // The worker is stopped until the stream has said its first counts (as the local test).
    let pid = worker.id().to_string();
    let signal =
        |s: &str| assert!(Command::new("kill").args([s, &pid]).status().unwrap().success());
    signal("-STOP");
    let mut counts = Vec::new();
    let mut released = false;
    let seen =
        events_until(port, &format!("/run/{id}/events"), Duration::from_secs(300), |name, data| {
            if name == "counts" {
                counts.extend(games_in(data));
                if !released {
                    signal("-CONT");
                    released = true;
                }
            }
            name == "end"
        });
    // Counts never fall and do rise; one count may come twice (the stream also speaks when
    // the verdict or state changes at equal games, e.g. the run's end).
    assert!(counts.len() >= 2 && counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?} {seen:?}");
    assert!(counts.first() < counts.last(), "{counts:?} {seen:?}");
    assert_eq!(counts.last(), Some(&8), "{seen:?}");
    let ended = f.ended(&mut worker, "worker", Duration::from_secs(120));
    assert!(ended.success(), "{}", f.log("worker"));
    let last = api_run(port, &id);
    assert_eq!(last["state"], "ended", "{last}");
    assert!(last["state_note"].as_str().unwrap_or("").contains("complete"), "{last}");

    // The run's page from the database, by the report renderer; the workers table.
    let page = get_ok(port, &format!("/run/{id}"));
    assert!(page.body.contains("<section id=\"verdict\""), "{}", page.body);
    let games = get_ok(port, &format!("/run/{id}/games?limit=500"));
    assert_eq!(games.body.matches("<li class=\"game\"").count(), 8);
    let workers = get_ok(port, "/workers");
    assert!(workers.body.contains("<td class=\"n\">1</td>"), "{}", workers.body);
    // /metrics counts the list, which is the last one made (the next made in the background,
    // at most a list's age later): the run's end shows there soon, not at once.
    let ended = "runner_runs{source=\"fleet\",state=\"ended\"} 1";
    wait_for("/metrics to count the run ended", Duration::from_secs(120), || {
        get_ok(port, "/metrics").body.contains(ended)
    });
    let base = format!("http://127.0.0.1:{port}");
    let seen = browse(&format!("{base}/"), dir, Some(&dir.join("serve-index.png")));
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    let seen = browse(&format!("{base}/run/{id}"), dir, None);
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(html_section(&seen.dom, "verdict").contains("A vs B"), "{}", seen.dom);
}

/// A local run's games are paged from any point of a long games.jsonl (a seek to a noted line),
/// the files its page links to resolve under `/run/ID/files/`, and no path outside the run's
/// folder is served, however it is spelled.
#[test]
fn a_local_run_s_games_are_paged_and_only_its_own_files_served() {
    let _w = watchdog("serve-paged", Duration::from_secs(600));
    let Bench { dir, results, book } = bench("serve-paged");
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let mut args = match_args(&a, &b, "results/long", &["--book", &book]);
    args.extend("--nodes 1 --games 2".split(' '));
    let played = run_games(&dir, &args, &results.join("long"));
    assert_eq!(played.len(), 2);
    // The two games' records repeated as 300 pairs: 600 lines, past two noted offsets.
    let path = results.join("long/games.jsonl");
    let lines: Vec<serde_json::Value> =
        read_text(&path).lines().map(|l| serde_json::from_str(l).expect("a record")).collect();
    let mut text = String::new();
    for pair in 0..300u64 {
        for r in &lines {
            let mut r = r.clone();
            r["pair"] = pair.into();
            r["seq"] = (pair * 2 + r["game"].as_u64().unwrap()).into();
            text.push_str(&r.to_string());
            text.push('\n');
        }
    }
    std::fs::write(&path, text).unwrap();
    std::fs::write(dir.join("secret.json"), "{\"secret\": 1}").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.json"), results.join("long/link.json")).unwrap();

    let server = serve(&dir, &["--results", "results"]);
    let port = server.port;
    assert_eq!(api_run(port, "long")["games"], 600);
    let page = get_ok(port, "/run/long/games?offset=500&limit=7").body;
    assert_eq!(page.matches("<li class=\"game\"").count(), 7, "{page}");
    assert!(page.contains("id=\"game-501\"") && page.contains("id=\"game-507\""), "{page}");
    assert!(!page.contains("id=\"game-500\"") && !page.contains("id=\"game-508\""));
    assert!(page.contains("games 501–507 of 600"), "{page}");
    let last = get_ok(port, "/run/long/games?offset=598&limit=100").body;
    assert_eq!(last.matches("<li class=\"game\"").count(), 2, "{last}");
    assert!(!last.contains(">next<"), "the last page has no next");
    let beyond = get_ok(port, "/run/long/games?offset=9999").body;
    assert_eq!(beyond.matches("<li class=\"game\"").count(), 0);

    // The page's file links resolve, to the run's own files.
    let run = get_ok(port, "/run/long").body;
    assert!(run.contains("href=\"/run/long/files/summary.json\""), "{run}");
    assert!(run.contains("href=\"/run/long/files/run.json\""), "{run}");
    let summary = get_ok(port, "/run/long/files/summary.json");
    assert!(summary.body.contains("stopped_by"), "{}", summary.body);
    strict_policy(&summary);
    assert!(get_ok(port, "/run/long/files/games.pgn").body.contains("[Event "));
    for bad in [
        "/run/long/files/../../secret.json",
        "/run/long/files/..%2f..%2fsecret.json",
        "/run/long/files/%2e%2e/%2e%2e/secret.json",
        "/run/long/files/%2E%2E%2F%2E%2E%2Fsecret.json",
        "/run/long/files/%2Fetc%2Fpasswd",
        "/run/long/files//etc/passwd",
        "/run/long/files/.%2e/long/run.json",
        "/run/long/files/link.json",
        "/run/long/files/run.lock",
        "/run/long/files/report.html",
        "/run/..%2Fsecret.json/files/x.json",
        "/run/%2e%2e/files/secret.json",
        "/run/long/files/nosuch.json",
    ] {
        let r = get(port, bad);
        assert_eq!(r.status, 404, "{bad}: {}", r.body);
        assert!(!r.body.contains("secret"), "{bad}");
    }
}

/// The fleet's list: runs pending, active (two owners at one priority: their shares), finished
/// by an SPRT's H1 and failed with refusals; markup in an owner's name, an engine's name, an
/// option, a refusal's reason and a worker key's name escaped on `/`, `/run/ID` and
/// `/workers`; the filters; and a screenshot of the list.
#[test]
fn the_fleet_list_shows_states_shares_and_refusals_escaped() {
    let _w = watchdog("serve-fleet-list", Duration::from_secs(900));
    let (f, book) = fleet_with_roles("serve-fleet-list");
    let dir = &f.dir;
    let evil_a =
        format!("name=<b>A</b>,cmd={},arg=good,option.Note=<i>x</i>", badengine_bin().display());
    let b = bad_spec("B", "good", None);
    let c = bad_spec("Carol", "good", None);
    // badengine declares no `Note`: sent anyway on purpose.
    let plain = ["--nodes", "1", "--games", "8", "--allow-unknown-options"];
    let sprt =
        ["--nodes", "1", "--games", "200", "--sprt", "elo0=0,elo1=10", "--allow-unknown-options"];
    let pending = submit(&f, &evil_a, &b, &book, &plain);
    let alice = submit(&f, &c, &b, &book, &sprt);
    let bob = submit(&f, &c, &b, &book, &plain);
    let passed = submit(&f, &evil_a, &b, &book, &sprt);
    let failed = submit(&f, &c, &b, &book, &plain);
    f.sql(&format!(
        "UPDATE runs SET state = 'pending', approved_by = NULL, owner = '<i>eve</i>' WHERE id = {pending};
         UPDATE runs SET owner = 'alice', priority = 1, throughput = 100 WHERE id = {alice};
         UPDATE runs SET owner = 'bob', priority = 1, throughput = 300 WHERE id = {bob};
         INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
           VALUES ({passed}, 0, 1, 0, 6, 30, 60, 90, 240, 126, 6);
         UPDATE runs SET state = 'decided', owner = 'alice', finished_at = now(),
           stop_reason = 'A vs B: SPRT accepted H1' WHERE id = {passed};
         INSERT INTO worker_keys (name) VALUES ('<s>box</s>');
         INSERT INTO refusals (run_id, key_id, reason)
           SELECT {failed}, id, 'engine <script>x()</script> not found' FROM worker_keys
           WHERE name = '<s>box</s>';
         UPDATE runs SET state = 'failed', owner = 'bob', finished_at = now(),
           stop_reason = 'every worker refused' WHERE id = {failed};"
    ));

    let server = reader(&f);
    let port = server.port;
    let index = get_ok(port, "/").body;
    for panel in ["Pending approval (1)", "Running (2)", "Finished (2)"] {
        assert!(index.contains(panel), "{panel}: {index}");
    }
    for raw in ["<b>A</b>", "<i>eve</i>", "<i>x</i>", "<script>x"] {
        assert!(!index.contains(raw), "{raw} unescaped on /");
    }
    assert!(index.contains("&lt;i&gt;eve&lt;/i&gt;") && index.contains("&lt;b&gt;A&lt;/b&gt;"));
    assert!(index.contains("accepted (H1)") && !index.contains("H1 accepted"), "{index}");
    for state in ["pending", "running", "accepted", "failed"] {
        assert!(index.contains(&format!("<tr class=\"st-{state}\"")), "{state}: {index}");
    }
    // Two owners' runs at one priority: targets 100 and 300 of 400.
    assert!(index.contains("n/a (25 %)") && index.contains("n/a (75 %)"), "{index}");
    assert!(index.contains("throughput 300") && index.contains("elo 0 to 10"), "{index}");
    // Active runs are listed by priority, and show pairs per hour and time left.
    assert!(index.contains("no pairs per hour yet"), "{index}");

    let link = |run: i64| format!("href=\"/run/fleet-{run}\"");
    let shown = |q: &str| {
        let body = get_ok(port, q).body;
        [pending, alice, bob, passed, failed].map(|r| body.contains(&link(r)))
    };
    assert_eq!(shown("/?owner=alice"), [false, true, false, true, false]);
    assert_eq!(shown("/?state=finished"), [false, false, false, true, true]);
    assert_eq!(shown("/?state=running&owner=bob"), [false, false, true, false, false]);
    assert_eq!(shown("/?state=accepted"), [false, false, false, true, false]);
    assert_eq!(shown("/?engine=%3Cb%3Ea"), [true, false, false, true, false]);
    assert_eq!(shown("/?q=carol&state=running"), [false, true, true, false, false]);
    let filtered = get_ok(port, "/?owner=%3Ci%3Eeve%3C%2Fi%3E&engine=%22%3E%3Cx%3E").body;
    assert!(filtered.contains(&link(pending)) || filtered.contains("None."), "{filtered}");
    assert!(!filtered.contains("\"><x>") && !filtered.contains("<i>eve</i>"));
    assert!(filtered.contains("value=\"&quot;&gt;&lt;x&gt;\""), "the filter kept, escaped");

    let page = get_ok(port, &format!("/run/fleet-{failed}")).body;
    assert!(page.contains("<section id=\"refusals\">"), "{page}");
    assert!(page.contains("engine &lt;script&gt;x()&lt;/script&gt; not found"), "{page}");
    assert!(page.contains("&lt;s&gt;box&lt;/s&gt;"), "{page}");
    for raw in ["<script>x()", "<s>box</s>"] {
        assert!(!page.contains(raw), "{raw} unescaped on the run page");
    }
    let page = get_ok(port, &format!("/run/fleet-{pending}")).body;
    for raw in ["<b>A</b>", "<i>x</i>", "<i>eve</i>"] {
        assert!(!page.contains(raw), "{raw} unescaped on the run page");
    }
    assert!(page.contains("&lt;i&gt;x&lt;/i&gt;"), "the option is shown, escaped: {page}");
    let page = get_ok(port, &format!("/run/fleet-{passed}")).body;
    assert!(page.contains("H1 accepted"), "{page}");
    let workers = get_ok(port, "/workers?all=true").body;
    assert!(!workers.contains("<s>box</s>") && !workers.contains("<script>x"), "{workers}");

    let base = format!("http://127.0.0.1:{port}");
    let shot = dir.join("serve-index.png");
    let seen = browse(&format!("{base}/"), dir, Some(&shot));
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    let seen = browse(&format!("{base}/"), dir, None);
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
    assert!(seen.dom.contains("accepted (H1)") && seen.dom.contains(&link(failed)));
    let seen = browse(&format!("{base}/run/fleet-{failed}"), dir, None);
    assert!(seen.console.is_empty(), "console: {:?}", seen.console);
}
