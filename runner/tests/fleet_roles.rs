//! docs/fleet-worker-role.sql against a real PostgreSQL: the owner initialises the schema, the
//! submitter stores and cancels runs, the worker claims, renews, releases and reports pairs
//! (tuning iterations included) through the queue's functions, and neither can delete games,
//! drop a table or create one.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use e2e::pg::TempPg;
use runner::fleet::connect::parse_target;
use runner::fleet::queue::{self, Judge, NewRun, PairReport, PairingCounts, Reported, Stop};
use runner::fleet::schema;
use serde_json::{Value, json};
use tokio_postgres::Client;

const LEASE: Duration = Duration::from_secs(60);

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fleet-worker-role.sql")
}

async fn connect_as(pg: &TempPg, user: &str) -> Client {
    parse_target(&pg.url_as(user)).unwrap().connect().await.unwrap()
}

/// Never stops a pairing; a tuning step adds the result to theta.
struct Plain;

impl Judge for Plain {
    fn needs_all(&self) -> bool {
        false
    }
    fn stops(&mut self, _: &[PairingCounts]) -> Vec<Stop> {
        Vec::new()
    }
    fn tune(&mut self, theta: &Value, _spsa: &Value, result: f64) -> Result<(Value, Value)> {
        let t = theta[0].as_f64().unwrap_or(0.0) + result;
        Ok((json!([t]), json!({"result": result})))
    }
}

async fn report(db: &mut Client, w: i64, c: &queue::Claim) -> Reported {
    let g = [json!({"pair": c.pair, "game": 0}), json!({"pair": c.pair, "game": 1})];
    let r = PairReport {
        run_id: c.run_id,
        pairing: c.pairing,
        pair: c.pair,
        token: c.token,
        records: [&g[0], &g[1]],
        scores: [stats::GameScore::Draw; 2],
    };
    queue::report(db, w, &r, &mut Plain).await.unwrap()
}

/// The error of a statement that must be refused.
async fn refused(db: &Client, sql: &str) -> String {
    match db.batch_execute(sql).await {
        Ok(()) => panic!("`{sql}` was allowed"),
        Err(e) => e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string()),
    }
}

#[tokio::test]
async fn the_worker_role_plays_and_reports_but_cannot_delete_or_alter() {
    let pg = TempPg::start("roles");
    // 1-2: the roles; the database belongs to the owner.
    pg.psql_file(&script()).unwrap_or_else(|e| panic!("docs/fleet-worker-role.sql: {e}"));
    pg.psql("ALTER DATABASE fleet OWNER TO fleet_owner");
    // 3: the owner creates the tables; 4: the script grants on them.
    let mut owner = connect_as(&pg, "fleet_owner").await;
    schema::init(&mut owner).await.unwrap();
    pg.psql_file(&script()).unwrap_or_else(|e| panic!("docs/fleet-worker-role.sql: {e}"));

    // The submitter stores a match and a tuning run.
    let mut sub = connect_as(&pg, "fleet_submitter").await;
    schema::check(&sub).await.unwrap();
    let labels = ["a vs b".to_string()];
    let jobs = [(0, 0, 0), (0, 1, 1)];
    let plan = json!({"test": true});
    let new = |theta: Option<&'static Value>| NewRun {
        kind: if theta.is_some() { "tune" } else { "match" },
        submission: &plan,
        plan_hash: "h",
        labels: &labels,
        jobs: &jobs,
        theta,
    };
    let run = queue::insert_run(&mut sub, &new(None)).await.unwrap();
    static THETA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!([0.0]));
    let tune = queue::insert_run(&mut sub, &new(Some(&THETA))).await.unwrap();

    // The worker: register, claim, heartbeat, release, report until the match is complete.
    let mut w = connect_as(&pg, "fleet_worker").await;
    schema::check(&w).await.unwrap();
    let id = queue::register_worker(&w, "host", 1, 2, LEASE).await.unwrap();
    let c = queue::claim(&w, id, Some(run), &[], 2, LEASE).await.unwrap();
    assert_eq!(c.len(), 2);
    let tokens: Vec<i64> = c.iter().map(|c| c.token).collect();
    assert_eq!(queue::heartbeat(&w, id, &tokens, LEASE).await.unwrap().len(), 2);
    assert!(matches!(report(&mut w, id, &c[0]).await, Reported::Stored { .. }));
    queue::release(&w, id, &[c[1].token]).await.unwrap();
    let again = queue::claim(&w, id, Some(run), &[], 2, LEASE).await.unwrap();
    assert_eq!(again.len(), 1);
    let last = report(&mut w, id, &again[0]).await;
    assert_eq!(last, Reported::Stored { stops: vec![], run_state: Some("complete") });
    assert_eq!(queue::run_states(&w, &[run]).await.unwrap(), [(run, "complete".to_string())]);
    assert!(queue::run(&w, run).await.unwrap().is_some());
    assert!(queue::complete_if_done(&w, run).await.is_ok());
    queue::outstanding(&w, None, &[]).await.unwrap();

    // A tuning iteration: logged before play, applied in the report.
    let t = queue::claim(&w, id, Some(tune), &[], 1, LEASE).await.unwrap();
    let it =
        queue::log_iteration(&mut w, tune, 0, t[0].pair, t[0].token, &mut |_| Ok(json!({"k": 0})))
            .await
            .unwrap();
    assert_eq!(it, Some(json!({"k": 0})));
    assert!(matches!(report(&mut w, id, &t[0]).await, Reported::Stored { .. }));
    queue::worker_stopped(&w, id).await.unwrap();

    // What the worker may not do.
    let e = refused(&w, "DELETE FROM games").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&w, "SELECT record FROM games").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&w, "DELETE FROM pairs").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&w, "UPDATE runs SET submission = '{}'").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&w, "DROP TABLE games").await;
    assert!(e.contains("must be owner"), "{e}");
    let e = refused(&w, "CREATE TABLE mine (a int)").await;
    assert!(e.contains("permission denied"), "{e}");
    let e =
        refused(&w, "INSERT INTO runs (kind, submission, plan_hash) VALUES ('x', '{}', 'h')").await;
    assert!(e.contains("permission denied"), "{e}");

    // The submitter reads everything and cancels, but deletes and alters nothing.
    assert_eq!(queue::games(&sub, run, queue::GameOrder::Schedule).await.unwrap().len(), 4);
    assert_eq!(queue::tune_state(&sub, tune).await.unwrap().unwrap().1.len(), 1);
    assert_eq!(queue::progress(&sub, run).await.unwrap().pairs_done, 2);
    assert_eq!(queue::pairings(&sub, run).await.unwrap().len(), 1);
    assert_eq!(queue::cancel(&sub, tune).await.unwrap().as_deref(), Some("active"));
    let e = refused(&sub, "DELETE FROM games").await;
    assert!(e.contains("permission denied"), "{e}");
    let e = refused(&sub, "DROP TABLE runs").await;
    assert!(e.contains("must be owner"), "{e}");
    let e = refused(&sub, "UPDATE pairs SET state = 'done'").await;
    assert!(e.contains("permission denied"), "{e}");
}
