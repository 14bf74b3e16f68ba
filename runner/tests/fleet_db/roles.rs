//! Who may do what, against a real PostgreSQL with the roles of schema version 5 and earlier
//! (`common/old_roles.sql`), when people and workers connected to it themselves: the owner
//! initialises the schema; an approver issues worker keys and approves runs; submitters own
//! their runs; a worker plays and reports only what it was leased, through the database's
//! functions, and every direct write a hostile worker or another owner tried before is refused.
//! The worker functions the server no longer calls (registering, claiming, refusing,
//! releasing) are called here directly (`common::old`): these tests keep the schema a server
//! of the version before uses; the server's own statements are tested in `api.rs`.

use crate::common::{LEASE, connect_as, new_run, old, sprt};
use e2e::pg::TempPg;
use runner::fleet::queue::{self, Claim, Reported, WorkerId};
use runner::fleet::schema;
use serde_json::json;
use tokio_postgres::Client;

/// The error of a statement that must be refused.
async fn refused(db: &Client, sql: &str) -> String {
    match db.batch_execute(sql).await {
        Ok(()) => panic!("`{sql}` was allowed"),
        Err(e) => e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string()),
    }
}

/// A fleet with its roles: the owner made the schema, the scripts granted on it, and people's
/// own roles: alice and bob submit, carol approves.
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
         CREATE ROLE carol LOGIN IN ROLE fleet_approver",
    );
    pg
}

#[tokio::test]
async fn a_worker_key_reports_only_what_it_was_leased_and_writes_no_table() {
    let pg = fleet("roles-worker").await;
    let carol = connect_as(&pg, "carol").await;
    let alice = connect_as(&pg, "alice").await;
    let run = new_run(&alice, 40, sprt("elo0=0,elo1=30")).await;
    assert_eq!(queue::run(&alice, run).await.unwrap().unwrap().state, "pending");
    assert_eq!(old::approve(&carol, run).await.unwrap(), "pending");

    // A worker without a key is refused; with a key an approver issued, it registers.
    let w = connect_as(&pg, "fleet_worker").await;
    schema::check(&w).await.unwrap();
    let e = old::register_worker(&w, None, "h", 1, 1, LEASE).await.unwrap_err();
    assert!(format!("{e:#}").contains("a worker needs a key"), "{e:#}");
    let e = old::register_worker(&w, Some("fk_guess"), "h", 1, 1, LEASE).await.unwrap_err();
    assert!(format!("{e:#}").contains("unknown worker key"), "{e:#}");
    let key = old::key_add(&carol, "box1").await.unwrap();
    let e = old::key_add(&alice, "mine").await.unwrap_err();
    assert!(format!("{e:#}").contains("permission denied"), "{e:#}");
    let id = old::register_worker(&w, Some(&key), "h", 1, 2, LEASE).await.unwrap();
    assert_eq!(id.key_name, "box1");
    let c = old::claim(&w, &id, Some(run), &[], 2, LEASE).await.unwrap();
    assert_eq!(c.len(), 2);
    assert!(matches!(old::report_pair(&w, &id, &c[0], ["W", "D"]).await, Reported::Stored { .. }));

    assert_direct_writes_refused(&w, run, id.id).await;
    // Its builds and bench speeds go through the worker function (schema version 4), which
    // submitters read back.
    let load = queue::builds::EngineLoad {
        engine: "dev".into(),
        commit: Some("c0ffee".into()),
        build: Some("built"),
        build_secs: Some(1.5),
        nodes: Some(42),
        nps: Some(1000),
        error: None,
    };
    old::engine_loaded(&w, &id, run, &load).await.unwrap();
    let builds = queue::builds::run_builds(&alice, run).await.unwrap();
    assert_eq!(builds.len(), 1);
    assert_eq!(builds[0].worker, format!("box1#{}", id.id));
    assert_eq!((builds[0].build.as_str(), builds[0].nps), ("built", Some(1000)));
    let e = refused(&w, "SELECT record FROM games").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&w, "SELECT key_hash FROM worker_keys").await;
    assert!(e.contains("permission denied"), "{e}");
    // Deciding is the database's: a worker may ask, never say.
    let e = refused(&w, &format!("SELECT * FROM fleet_settle_run({run})")).await;
    assert!(e.contains("permission denied"), "{e}");
    assert_eq!(old::settle(&w, &id, run).await.unwrap(), "active");

    // Reports: another key's pair, a game between other engines, or a wrong secret.
    let other = old::key_add(&carol, "box2").await.unwrap();
    let id2 = old::register_worker(&w, Some(&other), "h2", 2, 1, LEASE).await.unwrap();
    // A key with no lease on the run records no build there (schema version 5): a machine
    // reports only on what it was leased.
    let fake = queue::builds::EngineLoad {
        build: Some("failed"),
        error: Some("<b>forged</b>".into()),
        ..load.clone()
    };
    old::engine_loaded(&w, &id2, run, &fake).await.unwrap();
    assert_eq!(queue::builds::run_builds(&alice, run).await.unwrap().len(), 1);
    match old::report_pair(&w, &id2, &c[1], ["W", "W"]).await {
        Reported::Refused(why) => assert!(why.contains("another worker"), "{why}"),
        r => panic!("a pair leased to box1 was stored by box2: {r:?}"),
    }
    assert_forged_reports_refused(&w, &id, run, &c[1]).await;
    assert_eq!(
        pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")),
        "2",
        "only the leased pair's games are stored"
    );
    assert_eq!(pg.psql(&format!("SELECT state FROM runs WHERE id = {run}")), "active");

    // Revoking box1 shuts its worker out and gives its pair back; purging replays its pairs.
    assert_eq!(old::key_revoke(&carol, "box1").await.unwrap(), 1);
    let e = old::claim(&w, &id, Some(run), &[], 1, LEASE).await.unwrap_err();
    assert!(format!("{e:#}").contains("not registered with a valid key"), "{e:#}");
    let e = old::register_worker(&w, Some(&key), "h", 1, 2, LEASE).await.unwrap_err();
    assert!(format!("{e:#}").contains("was revoked"), "{e:#}");
    let mut alice = alice;
    let (n, settled) = old::purge(&mut alice, run, "box1").await.unwrap();
    assert_eq!((n, settled.as_str()), (1, "active"));
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "0");
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM tallies WHERE run_id = {run}")), "0");
    assert_eq!(
        pg.psql(&format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = 'pending'")),
        "40"
    );
    let list = old::keys(&carol).await.unwrap();
    assert_eq!(list, [("box1".to_string(), true), ("box2".to_string(), false)]);
}

/// Every direct write that used to succeed as fleet_worker (connection `w`, worker `worker`)
/// on run `run` is refused.
async fn assert_direct_writes_refused(w: &Client, run: i64, worker: i64) {
    for sql in [
        format!("UPDATE runs SET state = 'decided', stop_reason = 'H1' WHERE id = {run}"),
        format!("UPDATE runs SET state = 'active' WHERE id = {run}"),
        format!("UPDATE tallies SET wins = wins + 1000 WHERE run_id = {run}"),
        format!("UPDATE pairs SET state = 'done' WHERE run_id = {run}"),
        format!("UPDATE pairs SET state = 'skipped' WHERE run_id = {run}"),
        format!("UPDATE pairings SET active = false WHERE run_id = {run}"),
        format!(
            "INSERT INTO games (run_id, pairing, pair, game, record) VALUES ({run}, 0, 5, 0, '{{}}')"
        ),
        "DELETE FROM games".to_string(),
        "DROP TABLE games".to_string(),
        "CREATE TABLE mine (a int)".to_string(),
        "UPDATE worker_keys SET revoked_at = NULL".to_string(),
        format!(
            "INSERT INTO engine_loads (worker_id, run_id, engine) VALUES ({}, {run}, 'x')",
            worker
        ),
        "UPDATE engine_loads SET nps = 1".to_string(),
    ] {
        let e = refused(w, &sql).await;
        assert!(e.contains("permission denied") || e.contains("must be owner"), "{sql}: {e}");
    }
}

/// A report of `claim` (leased to worker `id`) with a game between other engines, and a claim
/// with a wrong secret, are refused.
async fn assert_forged_reports_refused(w: &Client, id: &WorkerId, run: i64, claim: &Claim) {
    let g = [
        json!({"pairing": 0, "pair": claim.pair, "game": 0, "white": "X", "black": "B",
               "result": "1-0"}),
        json!({"pairing": 0, "pair": claim.pair, "game": 1, "white": "B", "black": "A",
               "result": "0-1"}),
    ];
    let forged = queue::PairReport {
        run_id: run,
        pairing: 0,
        pair: claim.pair,
        token: claim.token,
        records: [&g[0], &g[1]],
    };
    let e = old::report(w, id, &forged, false).await.unwrap_err();
    assert!(format!("{e:#}").contains("not played by the pairing's engines"), "{e:#}");
    let e = w
        .batch_execute(&format!(
            "SELECT * FROM fleet_claim({}, 'not-the-secret', NULL, '{{}}', 1, 60, 16)",
            id.id
        ))
        .await
        .unwrap_err();
    assert!(e.as_db_error().unwrap().message().contains("not registered with a valid key"), "{e}");
}

#[tokio::test]
async fn owners_change_only_their_own_runs_and_approvers_decide_what_runs() {
    let pg = fleet("roles-owners").await;
    let (mut alice, bob, carol) = (
        connect_as(&pg, "alice").await,
        connect_as(&pg, "bob").await,
        connect_as(&pg, "carol").await,
    );
    let run = new_run(&alice, 4, json!({})).await;
    let row = queue::run(&bob, run).await.unwrap().unwrap();
    assert_eq!((row.owner.as_str(), row.state.as_str()), ("alice", "pending"));

    // Pending: no worker gets a pair of it.
    let key = old::key_add(&carol, "box").await.unwrap();
    let w = connect_as(&pg, "fleet_worker").await;
    let id = old::register_worker(&w, Some(&key), "h", 1, 1, LEASE).await.unwrap();
    assert!(old::claim(&w, &id, None, &[], 4, LEASE).await.unwrap().is_empty());

    // Another submitter may neither approve, cancel, purge nor write it.
    let e = old::approve(&bob, run).await.unwrap_err();
    assert!(format!("{e:#}").contains("only an approver approves"), "{e:#}");
    let e = old::approve(&alice, run).await.unwrap_err();
    assert!(format!("{e:#}").contains("only an approver approves"), "{e:#}");
    let e = old::cancel(&bob, run).await.unwrap_err();
    assert!(format!("{e:#}").contains("belongs to alice"), "{e:#}");
    let mut bob = bob;
    let e = old::purge(&mut bob, run, "box").await.unwrap_err();
    assert!(format!("{e:#}").contains("belongs to alice"), "{e:#}");
    for sql in [
        format!("UPDATE runs SET state = 'active' WHERE id = {run}"),
        format!("UPDATE runs SET state = 'cancelled' WHERE id = {run}"),
        format!(
            "INSERT INTO pairs (run_id, seq, pairing, pair, opening) VALUES ({run}, 99, 0, 99, 0)"
        ),
        format!("UPDATE pairings SET active = false WHERE run_id = {run}"),
        "DELETE FROM games".to_string(),
        "DROP TABLE runs".to_string(),
    ] {
        let e = refused(&bob, &sql).await;
        assert!(e.contains("permission denied") || e.contains("must be owner"), "{sql}: {e}");
    }

    // The approver lets it start; the worker plays it; the owner cancels it.
    assert_eq!(old::approve(&carol, run).await.unwrap(), "pending");
    assert_eq!(old::approve(&carol, run).await.unwrap(), "active", "approved once");
    assert_eq!(old::claim(&w, &id, None, &[], 4, LEASE).await.unwrap().len(), 4);
    assert_eq!(old::cancel(&alice, run).await.unwrap(), "active");
    // An approver's own runs start at once, and an approver may cancel anyone's.
    let mine = new_run(&carol, 2, json!({})).await;
    assert_eq!(queue::run(&carol, mine).await.unwrap().unwrap().state, "active");
    let hers = new_run(&alice, 2, json!({})).await;
    assert_eq!(old::cancel(&carol, hers).await.unwrap(), "pending");
    // A finished run cannot be reopened by its owner either.
    let e = refused(&alice, &format!("UPDATE runs SET state = 'active' WHERE id = {run}")).await;
    assert!(e.contains("permission denied"), "{e}");
    let e = old::purge(&mut alice, 999, "box").await.unwrap_err();
    assert!(format!("{e:#}").contains("no run 999"), "{e:#}");
}

#[tokio::test]
async fn refusals_by_distinct_workers_fail_a_run_and_spare_the_others() {
    let pg = fleet("roles-refusals").await;
    let carol = connect_as(&pg, "carol").await;
    let bad = new_run(&carol, 4, json!({})).await;
    let good = new_run(&carol, 2, json!({})).await;
    let w = connect_as(&pg, "fleet_worker").await;
    for (i, name) in ["k1", "k2", "k3"].iter().enumerate() {
        let key = old::key_add(&carol, name).await.unwrap();
        let id = old::register_worker(&w, Some(&key), name, 1, 1, LEASE).await.unwrap();
        let c = old::claim(&w, &id, None, &[], 1, LEASE).await.unwrap();
        assert_eq!(c[0].run_id, bad, "the oldest run first");
        let state =
            old::refuse(&w, &id, bad, "engine A: cannot start", &[c[0].token]).await.unwrap();
        assert_eq!(state, if i < 2 { "active" } else { "failed" });
        // A key that refused a run gets none of its pairs again, but the other runs' pairs.
        let next = old::claim(&w, &id, None, &[], 1, LEASE).await.unwrap();
        assert_eq!(next.iter().map(|c| c.run_id).collect::<Vec<_>>(), [good]);
        old::release(&w, &id, &[next[0].token]).await.unwrap();
    }
    let row = queue::run(&carol, bad).await.unwrap().unwrap();
    let why = row.stop_reason.unwrap();
    assert!(why.starts_with("refused by 3 worker(s): k1: engine A: cannot start"), "{why}");
    let refusals = queue::refusals(&carol, bad).await.unwrap();
    assert_eq!(refusals.len(), 3);
    let text = runner::fleet::status::status(&carol, Some(bad)).await.unwrap();
    assert!(text.contains("failed") && text.contains("refused by 3 worker(s)"), "{text}");
}
