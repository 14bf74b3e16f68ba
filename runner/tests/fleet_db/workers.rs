//! What the fleet knows of its workers, against a real PostgreSQL with the old roles and
//! fleet_reader (`common::old::roles`): what each worker registered (machine, CPU, cores),
//! what it did (games, engine faults, losses on time, refusals) as `runner workers` shows it
//! to a reader.
//! As the fleet_worker role, the worker functions the server no longer calls (registering,
//! claiming, refusing, stopping) are called directly (`common::old`: the schema a server of
//! the version before uses); the server's own statements are tested in `api.rs`.

use crate::common::{LEASE, connect_as, new_run, old, pair_report, report};
use e2e::pg::TempPg;
use runner::fleet::queue::{self, Claim, Machine, Reported, WorkerId};
use runner::fleet::schema;
use runner::fleet::workers::{format_workers, state};
use serde_json::{Value, json};
use tokio_postgres::Client;

/// A fleet with its roles: the owner made the schema, the scripts granted on it; alice and bob
/// submit, carol approves, rita reads.
async fn fleet(name: &str) -> TempPg {
    let pg = TempPg::start(name);
    old::roles(&pg);
    pg.psql("ALTER DATABASE fleet OWNER TO fleet_owner");
    let mut owner = connect_as(&pg, "fleet_owner").await;
    schema::expand(&mut owner).await.unwrap();
    old::roles(&pg);
    pg.psql(
        "CREATE ROLE alice LOGIN IN ROLE fleet_submitter; \
         CREATE ROLE bob LOGIN IN ROLE fleet_submitter; \
         CREATE ROLE carol LOGIN IN ROLE fleet_approver; \
         CREATE ROLE rita LOGIN IN ROLE fleet_reader",
    );
    pg
}

/// Game `game` of `c` between A and B with `result` (White's) and `termination`.
fn game(c: &Claim, game: u8, result: &str, termination: &str) -> Value {
    let (white, black) = if game == 0 { ("A", "B") } else { ("B", "A") };
    json!({"pairing": c.pairing, "pair": c.pair, "game": game, "white": white, "black": black,
           "result": result, "termination": termination})
}

async fn report_games(db: &Client, w: &WorkerId, c: &Claim, g: [Value; 2]) -> Reported {
    old::report(db, w, &pair_report(c, &g), false).await.unwrap()
}

#[tokio::test]
async fn workers_register_their_machine_and_the_report_counts_what_they_did() {
    let pg = fleet("workers-list").await;
    let carol = connect_as(&pg, "carol").await;
    let run = new_run(&carol, 20, json!({})).await;
    let other = new_run(&carol, 20, json!({})).await;
    let key = old::key_add(&carol, "box1").await.unwrap();
    let w = connect_as(&pg, "fleet_worker").await;
    let m = Machine {
        host: "h1".into(),
        cpu: Some("AMD Ryzen 9 7950X 16-Core Processor".into()),
        cores: Some(32),
        version: None,
    };
    let id = old::register_machine(&w, Some(&key), &m, 10, 30, LEASE).await.unwrap();
    // A worker whose machine says nothing of its CPU is "unknown".
    let id2 = old::register_worker(&w, Some(&key), "h2", 11, 1, LEASE).await.unwrap();

    let c = old::claim(&w, &id, Some(run), &[], 3, LEASE).await.unwrap();
    // A crash in game 0 (the first engine lost it), a loss on time in game 1, then a pair
    // without faults.
    let g = [game(&c[0], 0, "0-1", "crash"), game(&c[0], 1, "0-1", "time-forfeit")];
    assert!(matches!(report_games(&w, &id, &c[0], g).await, Reported::Stored { .. }));
    let g = [game(&c[1], 0, "1/2-1/2", "stall"), game(&c[1], 1, "1/2-1/2", "threefold")];
    assert!(matches!(report_games(&w, &id, &c[1], g).await, Reported::Stored { .. }));
    assert!(matches!(old::report_pair(&w, &id, &c[2], ["W", "D"]).await, Reported::Stored { .. }));
    // The counts of the run are those of version 2.
    let counts = queue::pairing_counts(&carol, run, None).await.unwrap();
    assert_eq!(counts[0].penta, [0, 0, 2, 1, 0]);
    assert_eq!(counts[0].wdl, [2, 3, 1]);
    // One pair still leased on `other`; a refusal of `run`... by the second worker.
    let held = old::claim(&w, &id, Some(other), &[], 1, LEASE).await.unwrap();
    assert_eq!(held.len(), 1);
    old::refuse(&w, &id2, run, "engine B: not found", &[]).await.unwrap();

    // A reader sees every worker, what it is and what it did.
    let rita = connect_as(&pg, "rita").await;
    let rows = queue::workers::workers(&rita, false).await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let r = &rows[0];
    assert_eq!(r.id, id.id);
    assert_eq!(r.key_name.as_deref(), Some("box1"));
    assert_eq!((r.host.as_str(), r.cpu.as_deref(), r.cores), ("h1", m.cpu.as_deref(), Some(32)));
    assert_eq!(r.concurrency, 30);
    assert_eq!(r.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(state(r), "alive");
    assert_eq!((r.runs_now, r.pairs, r.games, r.crashes, r.time_losses), (1, 3, 6, 2, 1));
    assert!(r.recent > 2.99 && r.recent <= 3.0, "{}", r.recent);
    assert_eq!(rows[1].cpu.as_deref(), Some("unknown"));
    assert_eq!(rows[1].cores, None);
    assert_eq!(rows[1].refusals, [(run, "engine B: not found".to_string())]);
    let text = format_workers(&rows);
    assert!(text.contains(&format!("box1#{}  h2", id2.id)), "{text}");
    assert!(text.contains(&format!("box1#{} refused run {run}: engine B: not found", id2.id)));

    // Stopped, lost, blocked; by default a worker stopped long ago is left out.
    old::worker_stopped(&w, &id2).await.unwrap();
    let rows = queue::workers::workers(&rita, false).await.unwrap();
    assert_eq!(state(&rows[1]), "stopped");
    pg.psql(&format!(
        "UPDATE workers SET heartbeat_at = now() - interval '10 minutes' WHERE id = {}",
        id.id
    ));
    let rows = queue::workers::workers(&rita, false).await.unwrap();
    assert_eq!(state(&rows[0]), "lost");
    pg.psql(&format!(
        "UPDATE workers SET heartbeat_at = now() - interval '2 hours' WHERE id = {}",
        id2.id
    ));
    assert_eq!(queue::workers::workers(&rita, false).await.unwrap().len(), 1);
    assert_eq!(queue::workers::workers(&rita, true).await.unwrap().len(), 2);
    old::key_revoke(&carol, "box1").await.unwrap();
    let rows = queue::workers::workers(&rita, true).await.unwrap();
    assert!(rows.iter().all(|r| state(r) == "blocked"), "{rows:?}");
    // A reader still writes nothing.
    let e = rita.batch_execute("UPDATE workers SET cpu = 'x'").await.unwrap_err();
    assert!(e.as_db_error().unwrap().message().contains("permission denied"), "{e}");
}

/// Five honest worker keys play a run with one engine a little stronger (seeded draws of the
/// pair results); a sixth reports only won pairs for the first engine. `runner status` flags
/// the sixth, not the others; purging its key hands its pairs out again, the honest keys play
/// them, and nothing is flagged any more.
#[tokio::test]
async fn a_worker_that_reports_a_biased_result_is_flagged_and_purged() {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    let pg = TempPg::start("workers-bias");
    let mut db = crate::common::db(&pg).await;
    let run = new_run(&db, 340, json!({})).await;
    let mut ids = Vec::new();
    for name in ["h1", "h2", "h3", "h4", "h5", "liar"] {
        let key = old::key_add(&db, name).await.unwrap();
        ids.push(queue::register_worker(&db, &key, name, 1, 1, LEASE).await.unwrap());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(36);
    let outcomes = [["L", "L"], ["L", "D"], ["D", "D"], ["W", "D"], ["W", "W"]];
    // LL 4 %, LD 20 %, DD 48 %, WD 23 %, WW 5 %.
    let pick = |u: f64| match u {
        u if u < 0.04 => 0,
        u if u < 0.24 => 1,
        u if u < 0.72 => 2,
        u if u < 0.95 => 3,
        _ => 4,
    };
    let play = async |w: &WorkerId, first: [&str; 2]| {
        let c = queue::claim(&db, w, Some(run), &[], 1, LEASE).await.unwrap();
        assert!(matches!(report(&db, w, &c[0], first).await, Reported::Stored { .. }));
    };
    // A seventh key cannot play the run (its reason in markup, as a hostile machine could
    // word it): it refuses, and is counted and shown, escaped.
    let key = old::key_add(&db, "picky").await.unwrap();
    let picky = queue::register_worker(&db, &key, "picky", 1, 1, LEASE).await.unwrap();
    let c = queue::claim(&db, &picky, Some(run), &[], 1, LEASE).await.unwrap();
    let why = "engine <b>A</b>: not found";
    queue::refuse(&db, &picky, run, why, &[c[0].token]).await.unwrap();
    for round in 0..60 {
        for w in &ids[..5] {
            play(w, outcomes[pick(rng.random::<f64>())]).await;
        }
        if round < 40 {
            play(&ids[5], ["W", "W"]).await;
        }
    }
    let text = runner::fleet::status::status(&db, Some(run)).await.unwrap();
    let flagged: Vec<&str> = text.lines().filter(|l| l.contains("FLAGGED")).collect();
    assert_eq!(flagged.len(), 1, "{text}");
    let cells: Vec<&str> = flagged[0].split_whitespace().collect();
    assert_eq!(cells[..3], ["liar", "40", "100.0%"], "{text}");
    assert!(flagged[0].contains(&format!("runner purge {run} --worker liar")), "{text}");
    for h in ["h1", "h2", "h3", "h4", "h5"] {
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(h)).unwrap();
        assert_eq!(line.split_whitespace().nth(1), Some("60"), "{text}");
    }

    // `runner serve` over the same database: /metrics counts the flagged key and the refusal,
    // the run's page flags the key and shows the refusal escaped.
    let addr = serve(&pg).await;
    let metrics = http_get(addr, "/metrics").await;
    assert!(metrics.contains("\nrunner_flagged_workers 1\n"), "{metrics}");
    assert!(metrics.contains("\nrunner_refusals 1\n"), "{metrics}");
    assert!(metrics.contains("\nrunner_workers_alive 7\n"), "{metrics}");
    assert!(metrics.contains("\nrunner_source_errors 0\n"), "{metrics}");
    let page = http_get(addr, &format!("/run/fleet-{run}")).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert_eq!(page.matches("<strong>FLAGGED</strong>").count(), 1, "{page}");
    assert!(page.contains(&format!("<code>runner purge {run} --worker liar</code>")), "{page}");
    assert!(page.contains("engine &lt;b&gt;A&lt;/b&gt;: not found") && !page.contains(why));

    // Its pairs are taken back and played by an honest key.
    let mut owner = crate::common::db(&pg).await;
    let (n, _) = old::purge(&mut owner, run, "liar").await.unwrap();
    assert_eq!(n, 40);
    for _ in 0..40 {
        play(&ids[0], outcomes[pick(rng.random::<f64>())]).await;
    }
    assert_eq!(queue::settle::decide_for(&mut db, &ids[0], run).await.unwrap().state, "complete");
    let text = runner::fleet::status::status(&db, Some(run)).await.unwrap();
    assert!(!text.contains("FLAGGED") && !text.contains("liar"), "{text}");
    assert!(text.contains("340 done, 0 leased, 0 skipped of 340"), "{text}");
}

/// `runner serve` over `pg`'s fleet (no local results), in this process on a free port.
async fn serve(pg: &TempPg) -> std::net::SocketAddr {
    let fleet = runner::serve::fleet::Fleet::connect(&pg.url()).await.unwrap();
    let app = runner::serve::App::new(pg.socket_dir().join("no-results"), Some(fleet)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = runner::serve::router(std::sync::Arc::new(app));
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// The whole answer to a GET of `path` from the server at `addr` (status line, headers, body).
async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

/// `runner serve` over a fleet run of 12,000 stored games (past what a page request reads
/// itself): the first visit answers at once with the database's counts and a note that the
/// games are being read; a background task reads them in chunks, and a later visit has them
/// all and no note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_run_s_first_page_is_made_while_its_games_are_read() {
    let pg = TempPg::start("workers-long-page");
    let db = crate::common::db(&pg).await;
    let run = new_run(&db, 6000, json!({})).await;
    // Whole game records (drawn by agreement at the start position), as a worker stores them.
    pg.psql(&format!(
        "INSERT INTO games (run_id, pairing, pair, game, record) \
         SELECT {run}, 0, g / 2, g % 2, json_build_object('seq', g / 2, 'pairing', 0, \
           'label', 'A vs B', 'pair', g / 2, 'game', g % 2, 'opening', 0, \
           'fen', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', \
           'white', CASE WHEN g % 2 = 0 THEN 'A' ELSE 'B' END, \
           'black', CASE WHEN g % 2 = 0 THEN 'B' ELSE 'A' END, 'result', '1/2-1/2', \
           'termination', 'adjudication-draw', 'plies', 0, 'book_plies', 0, \
           'moves', '[]'::json, 'scores', '[]'::json, 'depths', '[]'::json, \
           'times_ms', '[]'::json, 'engine_times_ms', '[]'::json, \
           'latency', json_build_object('overhead_ms_mean', 0, 'overhead_ms_max', 0, \
             'turnaround_us_mean', 0, 'turnaround_us_max', 0), \
           'duration_ms', 1, 'date', '2026.11.28') \
         FROM generate_series(0, 11999) g"
    ));
    let addr = serve(&pg).await;
    let path = format!("/run/fleet-{run}");
    let first = http_get(addr, &path).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(first.contains("id=\"gathering\"") && first.contains(" of 12000 so far"), "{first}");
    let mut page = first;
    for _ in 0..600 {
        if !page.contains("id=\"gathering\"") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        page = http_get(addr, &path).await;
    }
    assert!(!page.contains("id=\"gathering\""), "still gathering after 60 s");
    // Every game read: the terminations count all 12,000, and none was skipped.
    let terms = page.split("<section id=\"terminations\"").nth(1).unwrap_or_default();
    let terms = terms.split("</section>").next().unwrap_or_default();
    assert!(terms.contains("12000"), "{terms}");
    assert!(!page.contains("not a game record"), "{page}");
}

/// A run every worker that tried refused, nothing played: status says no worker can play it.
#[tokio::test]
async fn a_run_no_worker_can_play_says_so() {
    let pg = TempPg::start("workers-unplayable");
    let db = crate::common::db(&pg).await;
    let run = new_run(&db, 10, json!({})).await;
    let w1 = crate::common::worker(&db, "a").await;
    let text = runner::fleet::status::status(&db, Some(run)).await.unwrap();
    assert!(text.contains("): running\n"), "{text}");
    let c = queue::claim(&db, &w1, Some(run), &[], 2, LEASE).await.unwrap();
    let tokens: Vec<i64> = c.iter().map(|c| c.token).collect();
    queue::refuse(&db, &w1, run, "engine A: not trusted here", &tokens).await.unwrap();
    let text = runner::fleet::status::status(&db, Some(run)).await.unwrap();
    assert!(
        text.contains(
            "): running, but no worker can play it: 1 worker key(s) tried and refused it"
        ),
        "{text}"
    );
    assert!(text.contains("engine A: not trusted here"), "{text}");
}

/// `runner delete`: its owner deletes a finished, pulled run; another owner cannot; an approver
/// can (with --force when not pulled); an active run is refused until cancelled.
#[tokio::test]
async fn delete_takes_a_finished_run_and_its_games_owner_or_approver_only() {
    use old::{delete_run, mark_pulled};
    let pg = fleet("workers-delete").await;
    let (alice, bob, carol) = (
        connect_as(&pg, "alice").await,
        connect_as(&pg, "bob").await,
        connect_as(&pg, "carol").await,
    );
    let run = new_run(&alice, 10, json!({})).await;
    old::approve(&carol, run).await.unwrap();
    let key = old::key_add(&carol, "box1").await.unwrap();
    let w = connect_as(&pg, "fleet_worker").await;
    let id = old::register_worker(&w, Some(&key), "h", 1, 1, LEASE).await.unwrap();
    let c = old::claim(&w, &id, Some(run), &[], 1, LEASE).await.unwrap();
    assert!(matches!(old::report_pair(&w, &id, &c[0], ["W", "D"]).await, Reported::Stored { .. }));

    let msg = |e: anyhow::Error| format!("{e:#}");
    let e = msg(delete_run(&alice, run, true).await.unwrap_err());
    assert!(e.contains(&format!("run {run} is active: cancel it first")), "{e}");
    old::cancel(&alice, run).await.unwrap();
    let e = msg(delete_run(&bob, run, true).await.unwrap_err());
    assert!(e.contains("belongs to alice"), "{e}");
    let e = msg(delete_run(&alice, run, false).await.unwrap_err());
    assert!(e.contains("was not pulled since it ended"), "{e}");
    // A worker may not delete, nor note a pull.
    let e = msg(delete_run(&w, run, true).await.unwrap_err());
    assert!(e.contains("permission denied"), "{e}");
    mark_pulled(&alice, run).await.unwrap();
    assert_eq!(delete_run(&alice, run, false).await.unwrap(), 2);
    assert!(queue::run(&alice, run).await.unwrap().is_none());
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "0");
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run}")), "0");
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM tallies WHERE run_id = {run}")), "0");

    // An approver deletes another's cancelled run, with --force as it was never pulled.
    let run2 = new_run(&bob, 4, json!({})).await;
    old::cancel(&bob, run2).await.unwrap();
    let e = msg(delete_run(&carol, run2, false).await.unwrap_err());
    assert!(e.contains("not pulled"), "{e}");
    assert_eq!(delete_run(&carol, run2, true).await.unwrap(), 0);
    assert!(queue::run(&carol, run2).await.unwrap().is_none());
}

/// The commands' wiring (`runner workers`, `runner cancel`, `runner delete` as `main` calls
/// them, the database given as `--db`).
#[tokio::test]
async fn the_workers_and_delete_commands() {
    use runner::cli::{CancelArgs, DeleteArgs, FleetDoorArg, WorkersArgs};
    use runner::exit::Exit;
    let pg = TempPg::start("workers-cli");
    let db = crate::common::db(&pg).await;
    let run = new_run(&db, 4, json!({})).await;
    let w = crate::common::worker(&db, "cli-host").await;
    let c = queue::claim(&db, &w, Some(run), &[], 1, LEASE).await.unwrap();
    assert!(matches!(report(&db, &w, &c[0], ["W", "L"]).await, Reported::Stored { .. }));
    let url = FleetDoorArg { db: Some(pg.url()), ..Default::default() };
    for all in [false, true] {
        let args = WorkersArgs { db: url.clone(), all };
        assert_eq!(runner::cmd::workers::run(&args).await.unwrap(), Exit::Done);
    }
    let delete = |force: bool| DeleteArgs { db: url.clone(), run, force };
    let e = runner::cmd::delete::run(&delete(true)).await.unwrap_err();
    assert!(format!("{e:#}").contains("is active: cancel it first"), "{e:#}");
    let cancel = CancelArgs { db: url.clone(), run };
    assert_eq!(runner::cmd::cancel::run(&cancel).await.unwrap(), Exit::Done);
    let e = runner::cmd::delete::run(&delete(false)).await.unwrap_err();
    assert!(format!("{e:#}").contains("--force"), "{e:#}");
    assert_eq!(runner::cmd::delete::run(&delete(true)).await.unwrap(), Exit::Done);
    assert!(queue::run(&db, run).await.unwrap().is_none());
    // The operator acts through the server's operations, as an approver named after the
    // database role, and the audit log names it.
    let role = pg.psql("SELECT session_user");
    assert_eq!(
        pg.psql("SELECT string_agg(actor || ' ' || action, ', ' ORDER BY id) FROM audit"),
        format!("{role} cancel, {role} delete")
    );
}
