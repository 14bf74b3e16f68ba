//! The contract step (`runner db init --contract`, schema version 7): every function of
//! versions 2 to 6 dropped once no runner of an earlier version is connected, and the fleet
//! working on what is left (tables, indexes, constraints) through the server.

use std::time::{Duration, Instant};

use crate::common::{RunSpec, pair_report, record, sprt};
use e2e::pg::TempPg;
use runner::fleet::bounded::Name;
use runner::fleet::client::WorkerClient;
use runner::fleet::connect::parse_target;
use runner::fleet::queue::share::Share;
use runner::fleet::queue::{self, ClaimAsk, Machine, Reported, people};
use runner::fleet::rights::Principal;
use runner::fleet::schema;

/// The fleet's functions in the database.
fn functions(pg: &TempPg) -> i64 {
    pg.psql("SELECT count(*) FROM pg_proc WHERE proname LIKE 'fleet\\_%'").parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_step_waits_for_older_runners_then_the_fleet_plays_without_functions() {
    let pg = TempPg::start("contract");
    let mut db = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    // A database of a rolling deploy: at version 6, as `db init` leaves an existing database.
    assert_eq!(schema::expand(&mut db).await.unwrap(), 0);
    assert_eq!(schema::current_version(&db).await.unwrap(), schema::EXPANDED);
    assert_eq!(schema::init(&mut db).await.unwrap(), schema::EXPANDED, "init stops there");
    let before = functions(&pg);
    assert!(before > 40, "{before} functions before the contract step");

    // A runner of schema version 6 (its connections say `mpc-runner`) is connected: refused,
    // naming it, and nothing dropped.
    let url = format!("{} application_name=mpc-runner", pg.url());
    let (old, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    let held = tokio::spawn(conn);
    let e = format!("{:#}", schema::contract(&mut db).await.unwrap_err());
    assert!(e.contains("1 runner connection(s) of an earlier version"), "{e}");
    assert!(e.contains("mpc-runner") && e.contains("nothing was dropped"), "{e}");
    assert_eq!(functions(&pg), before);
    assert_eq!(schema::current_version(&db).await.unwrap(), schema::EXPANDED);
    drop(old);
    let _ = held.await;
    // Gone from pg_stat_activity once its backend has ended.
    let deadline = Instant::now() + Duration::from_secs(20);
    let contracted = loop {
        match schema::contract(&mut db).await {
            Ok(was) => break was,
            Err(e) if Instant::now() < deadline => {
                assert!(format!("{e:#}").contains("earlier version"), "{e:#}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e:#}"),
        }
    };
    assert_eq!(contracted, schema::EXPANDED);
    assert_eq!(functions(&pg), 0, "every fleet function dropped");
    assert_eq!(pg.psql("SELECT version || ' ' || oldest FROM fleet_schema"), "7 7");
    schema::check(&db).await.unwrap();
    assert_eq!(schema::contract(&mut db).await.unwrap(), schema::VERSION, "applied once");
    assert_eq!(schema::init(&mut db).await.unwrap(), schema::VERSION, "init keeps version 7");

    // The fleet on it: a key and a run by an approver, a worker through the server plays the
    // run's two pairs (claim, heartbeat, report), and the server decides the run.
    let ops = Principal::User { name: "ops".into(), approver: true };
    let key = people::key_add(&mut db, &ops, &Name::new("box").unwrap()).await.unwrap();
    let spec = RunSpec::new("match", &[("A", "B")], 2, sprt("elo0=0,elo1=5"));
    let (run, pending) =
        queue::submit::submit(&mut db, &ops, &spec.run(), Share::default(), &[]).await.unwrap();
    assert!(!pending);
    let addr = crate::api::serve(&pg, 4).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client =
        WorkerClient::new(&format!("http://{addr}"), None, Some(key), Duration::from_secs(10))
            .unwrap();
    let lease = Duration::from_secs(60);
    let w = client
        .register(&Machine { host: "box".into(), ..Machine::default() }, 1, 2, lease)
        .await
        .unwrap();
    let ask = ClaimAsk { only: Some(run), tune_in_flight: 16, ..ClaimAsk::new(2, lease) };
    let claims = client.claim(&w, &ask).await.unwrap();
    assert_eq!(claims.len(), 2);
    let tokens: Vec<i64> = claims.iter().map(|c| c.token).collect();
    assert_eq!(client.heartbeat(&w, &tokens, lease).await.unwrap(), tokens);
    let mut open = Vec::new();
    for c in &claims {
        let g = [record(c, 0, "1-0", ("A", "B")), record(c, 1, "1/2-1/2", ("A", "B"))];
        match client.report(&w, &pair_report(c, &g), false).await.unwrap() {
            Reported::Stored { open: o, .. } => open.push(o),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(open, [true, false]);
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "4");
    let state = client.settle(&w, run).await.unwrap().state;
    assert_eq!(state, "complete");
}
