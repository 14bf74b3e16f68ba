//! The fleet's queue against a real PostgreSQL (a throwaway cluster per test): leases, fencing
//! tokens, heartbeats, the SPRT decided in the report transaction, schema versions. No engines:
//! the games are synthetic records.

use std::time::Duration;

use e2e::pg::TempPg;
use runner::fleet::connect::parse_target;
use runner::fleet::decide::RunJudge;
use runner::fleet::queue::{self, Claim, NewRun, PairReport, Reported};
use runner::fleet::schema;
use serde_json::{Value, json};
use tokio_postgres::Client;

async fn db(pg: &TempPg) -> Client {
    let mut c = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    schema::init(&mut c).await.unwrap();
    c
}

fn judge(sprt: Option<&str>) -> RunJudge {
    RunJudge {
        sprt: sprt.map(|s| stats::SprtSpec::parse(s).unwrap()),
        race: None,
        labels: vec!["a vs b".into()],
        spsa: None,
    }
}

async fn new_run(db: &mut Client, pairs: i32) -> i64 {
    let jobs: Vec<(i32, i32, i32)> = (0..pairs).map(|p| (0, p, p % 3)).collect();
    let sub = json!({"test": true});
    let run = NewRun {
        kind: "match",
        submission: &sub,
        plan_hash: "h",
        labels: &["a vs b".to_string()],
        jobs: &jobs,
        theta: None,
    };
    queue::insert_run(db, &run).await.unwrap()
}

/// Reports a pair won twice by the first engine (penta WW).
async fn report_win(
    db: &mut impl queue::Db,
    w: i64,
    c: &Claim,
    j: &mut (dyn queue::Judge + Send),
) -> Reported {
    let g: [Value; 2] = [json!({"pair": c.pair, "game": 0}), json!({"pair": c.pair, "game": 1})];
    let r = PairReport {
        run_id: c.run_id,
        pairing: c.pairing,
        pair: c.pair,
        token: c.token,
        records: [&g[0], &g[1]],
        scores: [stats::GameScore::Win; 2],
    };
    queue::report(db, w, &r, j).await.unwrap()
}

const LEASE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn leases_are_fenced_nothing_is_lost_or_doubled() {
    let pg = TempPg::start("queue");
    let mut a = db(&pg).await;
    let mut b = db(&pg).await;
    let run = new_run(&mut a, 3).await;
    let wa = queue::register_worker(&a, "a", 1, 2, LEASE).await.unwrap();
    let wb = queue::register_worker(&b, "b", 2, 2, LEASE).await.unwrap();
    let mut j = judge(None);

    // Schedule order, and nobody gets a pair twice.
    let ca = queue::claim(&a, wa, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(ca.iter().map(|c| c.seq).collect::<Vec<_>>(), [0, 1]);
    let cb = queue::claim(&b, wb, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(cb.iter().map(|c| c.seq).collect::<Vec<_>>(), [2]);
    assert_eq!(cb[0].opening, 2);

    // A stored pair cannot be stored again under the same token.
    assert!(matches!(report_win(&mut a, wa, &ca[0], &mut j).await, Reported::Stored { .. }));
    assert!(matches!(report_win(&mut a, wa, &ca[0], &mut j).await, Reported::Refused(_)));

    // A's second lease expires (a short lease in the database), B takes the pair over.
    pg.psql(&format!(
        "UPDATE pairs SET lease_until = now() - interval '1 second' WHERE run_id = {run} AND seq = 1"
    ));
    let taken = queue::claim(&b, wb, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].seq, 1);
    assert!(taken[0].token > ca[1].token, "a new fencing token");
    assert_eq!(taken[0].attempts, 2);
    // A's heartbeat says the lease is lost; its late report is refused and writes nothing.
    let alive = queue::heartbeat(&a, wa, &[ca[1].token], LEASE).await.unwrap();
    assert!(alive.is_empty());
    match report_win(&mut a, wa, &ca[1], &mut j).await {
        Reported::Refused(why) => assert!(why.contains("handed to another worker"), "{why}"),
        other => panic!("late report stored: {other:?}"),
    }
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "2");

    assert!(matches!(report_win(&mut b, wb, &taken[0], &mut j).await, Reported::Stored { .. }));
    let last = report_win(&mut b, wb, &cb[0], &mut j).await;
    assert_eq!(last, Reported::Stored { stops: vec![], run_state: Some("complete") });
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "6");
    let dup = pg.psql(&format!(
        "SELECT count(*) FROM (SELECT pairing, pair, game FROM games WHERE run_id = {run} \
         GROUP BY 1, 2, 3 HAVING count(*) > 1) d"
    ));
    assert_eq!(dup, "0");
    let counts = queue::pairing_counts(&a, run, None).await.unwrap();
    assert_eq!(counts[0].penta, [0, 0, 0, 0, 3]);
    assert_eq!(counts[0].wdl, [6, 0, 0]);
    assert!(queue::claim(&a, wa, None, &[], 2, LEASE).await.unwrap().is_empty());
}

#[tokio::test]
async fn an_sprt_decision_stops_the_run_and_its_leases() {
    let pg = TempPg::start("sprt");
    let mut a = db(&pg).await;
    let run = new_run(&mut a, 200).await;
    let w = queue::register_worker(&a, "a", 1, 4, LEASE).await.unwrap();
    let mut j = judge(Some("elo0=0,elo1=10"));
    let mut decided_after = None;
    for i in 0..200 {
        let c = queue::claim(&a, w, None, &[], 1, LEASE).await.unwrap();
        let Some(c) = c.first() else { break };
        match report_win(&mut a, w, c, &mut j).await {
            Reported::Stored { stops, run_state: Some("decided") } => {
                assert_eq!(stops.len(), 1);
                assert_eq!(stops[0].verdict, "H1");
                decided_after = Some(i + 1);
                break;
            }
            Reported::Stored { .. } => {}
            Reported::Refused(why) => panic!("refused: {why}"),
        }
    }
    let n = decided_after.expect("the SPRT decided");
    assert!(n < 100, "decided after {n} pairs");
    assert_eq!(pg.psql(&format!("SELECT state FROM runs WHERE id = {run}")), "decided");
    assert!(queue::claim(&a, w, None, &[], 4, LEASE).await.unwrap().is_empty());
    let row = queue::run(&a, run).await.unwrap().unwrap();
    assert!(row.stop_reason.unwrap().contains("SPRT accepted H1"));
}

#[tokio::test]
async fn a_cancelled_run_loses_its_leases_at_the_next_heartbeat() {
    let pg = TempPg::start("cancel");
    let mut a = db(&pg).await;
    let run = new_run(&mut a, 4).await;
    let w = queue::register_worker(&a, "a", 1, 2, LEASE).await.unwrap();
    let c = queue::claim(&a, w, None, &[], 2, LEASE).await.unwrap();
    let tokens: Vec<i64> = c.iter().map(|c| c.token).collect();
    assert_eq!(queue::heartbeat(&a, w, &tokens, LEASE).await.unwrap().len(), 2);
    assert_eq!(queue::cancel(&a, run).await.unwrap().as_deref(), Some("active"));
    assert!(queue::heartbeat(&a, w, &tokens, LEASE).await.unwrap().is_empty());
    match report_win(&mut a, w, &c[0], &mut judge(None)).await {
        Reported::Refused(why) => assert!(why.contains("cancelled"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(queue::cancel(&a, run).await.unwrap().as_deref(), Some("cancelled"));
    assert_eq!(queue::cancel(&a, 999).await.unwrap(), None);
}

#[tokio::test]
async fn a_database_of_another_schema_version_is_refused() {
    let pg = TempPg::start("schema");
    let mut a = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("runner db init"), "{e}");
    assert_eq!(schema::init(&mut a).await.unwrap(), 0);
    assert_eq!(schema::init(&mut a).await.unwrap(), schema::VERSION);
    schema::check(&a).await.unwrap();
    pg.psql("UPDATE fleet_schema SET version = 99");
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("version 99, newer than this runner's"), "{e}");
    let e = schema::init(&mut a).await.unwrap_err().to_string();
    assert!(e.contains("use a newer runner"), "{e}");
}

/// A judge that stops nothing and keeps the counts each report hands it.
struct Recorder {
    all: bool,
    seen: Vec<Vec<queue::PairingCounts>>,
}

impl queue::Judge for Recorder {
    fn needs_all(&self) -> bool {
        self.all
    }
    fn stops(&mut self, counts: &[queue::PairingCounts]) -> Vec<queue::Stop> {
        self.seen.push(counts.to_vec());
        vec![]
    }
}

#[tokio::test]
async fn prepared_statements_keep_counts_and_fencing_and_are_made_again_after_a_restart() {
    let mut pg = TempPg::start("prepared");
    let mut admin = db(&pg).await;
    // Past five executions PostgreSQL may switch a prepared statement to a generic plan: play
    // more pairs than that on one connection.
    let run = new_run(&mut admin, 12).await;
    let target = parse_target(&pg.url()).unwrap();
    assert!(target.prepared_statements(), "on by default");
    let mut conn = queue::Conn::new(target.connect().await.unwrap(), true);
    let w = queue::register_worker(&conn, "p", 1, 1, LEASE).await.unwrap();
    let mut judge = Recorder { all: false, seen: vec![] };
    for k in 0..8i64 {
        let c = queue::claim(&conn, w, Some(run), &[], 1, LEASE).await.unwrap().remove(0);
        assert_eq!(c.seq as i64, k, "schedule order");
        assert_eq!(queue::heartbeat(&conn, w, &[c.token], LEASE).await.unwrap(), [c.token]);
        judge.all = k % 2 == 1;
        let g: [Value; 2] = [json!({"game": 0}), json!({"game": 1})];
        let mut r = PairReport {
            run_id: c.run_id,
            pairing: c.pairing,
            pair: c.pair,
            token: c.token + 1000,
            records: [&g[0], &g[1]],
            scores: [stats::GameScore::Win, stats::GameScore::Draw],
        };
        // A wrong token writes nothing, the right one stores the pair once.
        let refused = queue::report(&mut conn, w, &r, &mut judge).await.unwrap();
        assert!(matches!(refused, Reported::Refused(_)), "{refused:?}");
        r.token = c.token;
        let stored = queue::report(&mut conn, w, &r, &mut judge).await.unwrap();
        assert_eq!(stored, Reported::Stored { stops: vec![], run_state: None });
        let again = queue::report(&mut conn, w, &r, &mut judge).await.unwrap();
        assert!(matches!(again, Reported::Refused(_)), "{again:?}");
        // The judge saw the counts with this pair included (k + 1 pairs, each WD).
        let seen = judge.seen.last().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].penta, [0, 0, 0, k + 1, 0], "after pair {k}");
        assert_eq!(seen[0].wdl, [k + 1, k + 1, 0]);
    }
    assert_eq!(judge.seen.len(), 8, "refused reports ask no judge");
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "16");

    // A restart cuts the connection with its prepared statements; a new one prepares them
    // again, and the run is completed by the report of its last open pair.
    pg.restart();
    assert!(queue::claim(&conn, w, Some(run), &[], 1, LEASE).await.is_err());
    let mut conn = queue::Conn::new(target.connect().await.unwrap(), true);
    let left = queue::claim(&conn, w, Some(run), &[], 4, LEASE).await.unwrap();
    assert_eq!(left.iter().map(|c| c.seq).collect::<Vec<_>>(), [8, 9, 10, 11]);
    let mut states = vec![];
    for c in &left {
        if let Reported::Stored { run_state, .. } = report_win(&mut conn, w, c, &mut judge).await {
            states.push(run_state);
        }
    }
    assert_eq!(states, [None, None, None, Some("complete")]);
    let counts = queue::pairing_counts(&*conn, run, None).await.unwrap();
    assert_eq!(counts[0].penta, [0, 0, 0, 8, 4]);
    assert_eq!(counts[0].wdl, [16, 8, 0]);
}
