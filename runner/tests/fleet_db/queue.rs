//! The fleet's queue against a real PostgreSQL (a throwaway cluster per test): leases, fencing
//! tokens, heartbeats, the server's decisions over every stored pair, schema versions.
//! No engines: the games are synthetic records.

use std::collections::HashMap;

use crate::common::{
    LEASE, db, new_run, new_run_of, old, report, report_all, report_as, sprt, worker,
};
use e2e::pg::TempPg;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use runner::fleet::connect::parse_target;
use runner::fleet::decide::RunJudge;
use runner::fleet::queue::{self, Reported};
use runner::fleet::schema;
use serde_json::json;

#[tokio::test]
async fn leases_are_fenced_nothing_is_lost_or_doubled() {
    let pg = TempPg::start("queue");
    let a = db(&pg).await;
    let mut b = db(&pg).await;
    let run = new_run(&a, 3, json!({})).await;
    let wa = worker(&a, "a").await;
    let wb = worker(&b, "b").await;

    // Schedule order, and nobody gets a pair twice.
    let ca = queue::claim(&a, &wa, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(ca.iter().map(|c| c.seq).collect::<Vec<_>>(), [0, 1]);
    let cb = queue::claim(&b, &wb, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(cb.iter().map(|c| c.seq).collect::<Vec<_>>(), [2]);
    assert_eq!(cb[0].opening, 2);

    // A stored pair cannot be stored again under the same token.
    assert!(matches!(report(&a, &wa, &ca[0], ["W", "W"]).await, Reported::Stored { .. }));
    match report(&a, &wa, &ca[0], ["W", "W"]).await {
        Reported::Refused(why) => assert_eq!(why, "the pair is done, not leased"),
        other => panic!("stored twice: {other:?}"),
    }
    // Another worker cannot report a pair leased to A, even with A's token.
    match report(&b, &wb, &ca[1], ["W", "W"]).await {
        Reported::Refused(why) => assert_eq!(why, "the pair is leased to another worker"),
        other => panic!("a pair leased to another worker was stored: {other:?}"),
    }

    // A's second lease expires (a short lease in the database), B takes the pair over.
    pg.psql(&format!(
        "UPDATE pairs SET lease_until = now() - interval '1 second' WHERE run_id = {run} AND seq = 1"
    ));
    let taken = queue::claim(&b, &wb, None, &[], 2, LEASE).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].seq, 1);
    assert!(taken[0].token > ca[1].token, "a new fencing token");
    assert_eq!(taken[0].attempts, 2);
    // A's heartbeat says the lease is lost; its late report is refused and writes nothing.
    let alive = queue::heartbeat(&a, &wa, &[ca[1].token], LEASE).await.unwrap();
    assert!(alive.is_empty());
    match report(&a, &wa, &ca[1], ["W", "W"]).await {
        Reported::Refused(why) => assert_eq!(why, "the pair is leased to another worker"),
        other => panic!("late report stored: {other:?}"),
    }
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "2");

    assert!(matches!(report(&b, &wb, &taken[0], ["W", "W"]).await, Reported::Stored { .. }));
    match report(&b, &wb, &cb[0], ["W", "W"]).await {
        Reported::Stored { open, .. } => assert!(!open, "nothing left open"),
        other => panic!("{other:?}"),
    }
    let settled = queue::settle::decide_for(&mut b, &wb, run).await.unwrap();
    assert_eq!(settled.state, "complete");
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "6");
    let counts = queue::pairing_counts(&a, run, None).await.unwrap();
    assert_eq!(counts[0].penta, [0, 0, 0, 0, 3]);
    assert_eq!(counts[0].wdl, [6, 0, 0]);
    assert!(queue::claim(&a, &wa, None, &[], 2, LEASE).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_server_takes_the_sprt_decision_and_a_worker_only_asks() {
    let pg = TempPg::start("sprt");
    let mut a = db(&pg).await;
    let run = new_run(&a, 200, sprt("elo0=0,elo1=10")).await;
    let w = worker(&a, "a").await;
    // Asking early decides nothing: the counts do not cross a bound.
    let c = queue::claim(&a, &w, None, &[], 1, LEASE).await.unwrap().remove(0);
    assert!(matches!(report(&a, &w, &c, ["W", "W"]).await, Reported::Stored { .. }));
    let early = queue::settle::decide_for(&mut a, &w, run).await.unwrap();
    assert_eq!((early.state.as_str(), early.stops.len()), ("active", 0));
    let mut decided_after = None;
    for i in 1..200 {
        let c = queue::claim(&a, &w, None, &[], 1, LEASE).await.unwrap();
        let Some(c) = c.first() else { break };
        assert!(matches!(report(&a, &w, c, ["W", "W"]).await, Reported::Stored { .. }));
        let s = queue::settle::decide_for(&mut a, &w, run).await.unwrap();
        if s.state == "decided" {
            assert_eq!(s.stops.len(), 1);
            assert_eq!(s.stops[0].verdict, "H1");
            decided_after = Some(i + 1);
            break;
        }
    }
    let n = decided_after.expect("the SPRT decided");
    assert!(n < 100, "decided after {n} pairs");
    assert_eq!(pg.psql(&format!("SELECT state FROM runs WHERE id = {run}")), "decided");
    assert!(queue::claim(&a, &w, None, &[], 4, LEASE).await.unwrap().is_empty());
    let row = queue::run(&a, run).await.unwrap().unwrap();
    let why = row.stop_reason.unwrap();
    assert!(why.contains(&format!("SPRT accepted H1 after {} games", 2 * n)), "{why}");
    // The LLR the decision wrote is the one the stats crate computes from the stored counts.
    let counts = queue::pairing_counts(&a, run, None).await.unwrap();
    let r = stats::sprt(
        &runner::fleet::decide::stats_counts(&counts[0]),
        &stats::SprtSpec::parse("elo0=0,elo1=10").unwrap(),
    )
    .unwrap();
    assert!(why.contains(&format!("(LLR {:.2},", r.llr)), "{why} vs {}", r.llr);
}

/// Many short SPRT runs, several workers each reporting and asking for decisions at once:
/// every decision covers exactly the pairs stored under its run (the games the `why` counts
/// equal the games in the table), and no pair of a run is claimed after it was decided.
#[tokio::test]
async fn every_decision_covers_every_stored_pair() {
    let pg = TempPg::start("consistent");
    let admin = db(&pg).await;
    const RUNS: usize = 12;
    const WORKERS: usize = 4;
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        runs.push(new_run(&admin, 2000, sprt("elo0=0,elo1=30,model=logistic")).await);
    }
    let spec = stats::SprtSpec::parse("elo0=0,elo1=30,model=logistic").unwrap();
    let judge = RunJudge { sprt: Some(spec), race: None, labels: vec!["A vs B".into()] };
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..WORKERS {
        let url = pg.url();
        let runs = runs.clone();
        let judge = judge.clone();
        tasks.spawn(async move {
            let mut conn =
                queue::Conn::open(parse_target(&url).unwrap().connect().await.unwrap(), true)
                    .await
                    .unwrap();
            let key = crate::common::test_key(&conn).await;
            let w =
                queue::register_worker(&conn, key, &format!("w{k}"), 1, 2, LEASE).await.unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(1000 + k as u64);
            for &run in &runs {
                loop {
                    let claims = queue::claim(&conn, &w, Some(run), &[], 2, LEASE).await.unwrap();
                    if claims.is_empty() {
                        break;
                    }
                    for c in &claims {
                        // The first engine is clearly stronger: about 60 % of the points.
                        let pick = |rng: &mut ChaCha8Rng| match rng.random_range(0..10) {
                            0..=3 => "W",
                            4..=7 => "D",
                            _ => "L",
                        };
                        let first = [pick(&mut rng), pick(&mut rng)];
                        if let Reported::Stored { counts, open, .. } =
                            report(&conn, &w, c, first).await
                            && (judge.may_stop(&counts) || !open)
                        {
                            queue::settle::decide_for(&mut conn, &w, run).await.unwrap();
                        }
                    }
                }
            }
        });
    }
    while let Some(t) = tasks.join_next().await {
        t.unwrap();
    }
    let mut decided = 0;
    for &run in &runs {
        let row = queue::run(&admin, run).await.unwrap().unwrap();
        let games: i64 =
            pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")).parse().unwrap();
        let counts = queue::pairing_counts(&admin, run, None).await.unwrap();
        assert_eq!(counts[0].games(), games, "run {run}: tallies = stored games");
        if row.state == "decided" {
            decided += 1;
            let why = row.stop_reason.unwrap();
            assert!(
                why.contains(&format!("after {games} games")),
                "run {run}: the decision ({why}) does not cover the {games} stored games"
            );
            let late = pg.psql(&format!(
                "SELECT count(*) FROM pairs p JOIN runs r ON r.id = p.run_id \
                 WHERE r.id = {run} AND p.claimed_at > r.finished_at"
            ));
            assert_eq!(late, "0", "run {run}: pairs claimed after its decision");
        } else {
            assert_eq!(row.state, "complete", "run {run}");
        }
    }
    assert!(decided >= RUNS / 2, "only {decided} of {RUNS} runs were decided");
}

/// The two orders `every_decision_covers_every_stored_pair` meets by chance, made to happen.
/// A report in flight (its transaction held open here) holds the run's row `FOR KEY SHARE`: a
/// decision waits for it and counts its pair. A decision in flight holds the row `FOR UPDATE`
/// (taken before it writes the run's state, so the report's lock conflicts with that write too
/// and reads the row's new version): a report waits for it and, the run decided, stores nothing.
#[tokio::test]
async fn a_report_and_a_decision_in_flight_wait_for_each_other() {
    let pg = TempPg::start("inflight");
    let a = db(&pg).await;
    let mut b = db(&pg).await;
    let watch = db(&pg).await;
    const SPEC: &str = "elo0=0,elo1=30,model=logistic";
    let spec = stats::SprtSpec::parse(SPEC).unwrap();
    let judge = RunJudge { sprt: Some(spec), race: None, labels: vec!["A vs B".into()] };
    let w = worker(&a, "a").await;

    let run = new_run(&a, 200, sprt(SPEC)).await;
    let games = report_to_the_edge(&a, &w, run, &judge).await;
    let c = queue::claim(&a, &w, Some(run), &[], 1, LEASE).await.unwrap().remove(0);
    a.batch_execute("BEGIN").await.unwrap();
    assert!(matches!(report(&a, &w, &c, ["W", "W"]).await, Reported::Stored { .. }));
    let asker = w.clone();
    let deciding = tokio::spawn(async move {
        let s = queue::settle::decide_for(&mut b, &asker, run).await.unwrap();
        (b, s)
    });
    until_one_waits_for_a_lock(&watch).await;
    a.batch_execute("COMMIT").await.unwrap();
    let (mut b, s) = deciding.await.unwrap();
    assert_eq!(s.state, "decided");
    assert!(s.stops[0].why.contains(&format!("after {} games", games + 2)), "{}", s.stops[0].why);

    let run = new_run(&a, 200, sprt(SPEC)).await;
    let games = report_to_the_edge(&a, &w, run, &judge).await;
    let c = queue::claim(&a, &w, Some(run), &[], 2, LEASE).await.unwrap();
    assert!(matches!(report(&a, &w, &c[0], ["W", "W"]).await, Reported::Stored { .. }));
    let tx = b.transaction().await.unwrap();
    assert_eq!(queue::settle::decide_in(&tx, run).await.unwrap().state, "decided");
    let (url, reporter, late) = (pg.url(), w.clone(), c[1].clone());
    let reporting = tokio::spawn(async move {
        let db = parse_target(&url).unwrap().connect().await.unwrap();
        report(&db, &reporter, &late, ["W", "W"]).await
    });
    until_one_waits_for_a_lock(&watch).await;
    tx.commit().await.unwrap();
    match reporting.await.unwrap() {
        Reported::Refused(why) => assert!(why.contains("decided"), "{why}"),
        other => panic!("a report stored after the decision: {other:?}"),
    }
    let stored = pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}"));
    assert_eq!(stored, (games + 2).to_string());
}

/// Reports pairs of `run` that the first engine wins twice until one more would end its SPRT
/// (by `judge`, the run's rules); returns the games stored.
async fn report_to_the_edge(
    db: &tokio_postgres::Client,
    w: &queue::WorkerId,
    run: i64,
    judge: &RunJudge,
) -> i64 {
    loop {
        let c = queue::claim(db, w, Some(run), &[], 1, LEASE).await.unwrap().remove(0);
        let Reported::Stored { counts, .. } = report(db, w, &c, ["W", "W"]).await else {
            panic!("a report was refused");
        };
        let mut next = counts[0];
        next.penta[4] += 1;
        next.wdl[0] += 2;
        if judge.may_stop(&[next]) {
            return counts[0].games();
        }
    }
}

/// Returns once a statement of another session waits for a lock (a row's, here).
async fn until_one_waits_for_a_lock(watch: &tokio_postgres::Client) {
    for _ in 0..400 {
        let row = watch
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", &[])
            .await
            .unwrap();
        if row.get::<_, i64>(0) > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("no statement waited for a lock within 10 s");
}

#[tokio::test]
async fn racing_is_decided_by_the_server_over_every_pairing() {
    let pg = TempPg::start("race");
    let mut a = db(&pg).await;
    let race = runner::sweep::racing::RaceConfig { alpha: 0.05, min_pairs: 4 };
    let judge = runner::fleet::decide::judge_config(None, Some(&race), 3, None);
    let (run, _) = new_run_of(&a, "sweep", &[("A", "B"), ("A", "C"), ("A", "D")], 20, judge).await;
    let w = worker(&a, "a").await;
    // Pairing 1's first engine loses everything; the others trade wins and draws.
    let mut seen: HashMap<i32, usize> = HashMap::new();
    let mut dropped = None;
    while dropped.is_none() {
        let claims = queue::claim(&a, &w, Some(run), &[], 3, LEASE).await.unwrap();
        if claims.is_empty() {
            break;
        }
        for c in &claims {
            let n = seen.entry(c.pairing).or_default();
            *n += 1;
            let first = if c.pairing == 1 {
                ["L", "L"]
            } else if n.is_multiple_of(2) {
                ["W", "D"]
            } else {
                ["D", "L"]
            };
            let second = ["B", "C", "D"][c.pairing as usize];
            let Reported::Stored { counts, .. } =
                report_as(&a, &w, c, first, true, ("A", second)).await
            else {
                panic!("refused");
            };
            assert_eq!(counts.len(), 3, "racing reads every pairing");
            let s = queue::settle::decide_for(&mut a, &w, run).await.unwrap();
            if let Some(st) = s.stops.first() {
                dropped = Some(st.clone());
            }
        }
    }
    let st = dropped.expect("racing dropped a point");
    assert_eq!((st.pairing, st.verdict.as_str()), (1, "dropped"));
    assert!(st.why.starts_with("A vs C: dropped by racing after"), "{}", st.why);
    let skipped = pg.psql(&format!(
        "SELECT count(*) FROM pairs WHERE run_id = {run} AND pairing = 1 AND state = 'pending'"
    ));
    assert_eq!(skipped, "0", "the dropped point's pending pairs are skipped");
}

#[tokio::test]
async fn a_cancelled_run_loses_its_leases_at_the_next_heartbeat() {
    let pg = TempPg::start("cancel");
    let a = db(&pg).await;
    let run = new_run(&a, 4, json!({})).await;
    let w = worker(&a, "a").await;
    let c = queue::claim(&a, &w, None, &[], 2, LEASE).await.unwrap();
    let tokens: Vec<i64> = c.iter().map(|c| c.token).collect();
    assert_eq!(queue::heartbeat(&a, &w, &tokens, LEASE).await.unwrap().len(), 2);
    assert_eq!(old::cancel(&a, run).await.unwrap(), "active");
    assert!(queue::heartbeat(&a, &w, &tokens, LEASE).await.unwrap().is_empty());
    match report(&a, &w, &c[0], ["W", "W"]).await {
        Reported::Refused(why) => assert!(why.contains("cancelled"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(old::cancel(&a, run).await.unwrap(), "cancelled");
    let e = old::cancel(&a, 999).await.unwrap_err();
    assert!(format!("{e:#}").contains("no run 999"), "{e:#}");
}

#[tokio::test]
async fn a_database_of_another_schema_version_is_refused() {
    let pg = TempPg::start("schema");
    let mut a = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("runner db init"), "{e}");
    assert_eq!(schema::init(&mut a).await.unwrap(), 0);
    // A new database is made at the latest version at once, without the earlier functions.
    assert_eq!(schema::init(&mut a).await.unwrap(), schema::VERSION);
    assert_eq!(pg.psql("SELECT count(*) FROM pg_proc WHERE proname LIKE 'fleet\\_%'"), "0");
    assert_eq!(pg.psql("SELECT version || ' ' || oldest FROM fleet_schema"), "7 7");
    schema::check(&a).await.unwrap();
    // A newer schema that says this binary's version still may use it (`oldest`, from
    // version 6 on: a migration that only adds tables) is accepted; one that says otherwise,
    // or says nothing, is refused.
    pg.psql("UPDATE fleet_schema SET version = 99, oldest = 6");
    schema::check(&a).await.unwrap();
    pg.psql("UPDATE fleet_schema SET version = 99, oldest = 8");
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("version 99, newer than this runner's"), "{e}");
    pg.psql("UPDATE fleet_schema SET oldest = NULL");
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("version 99, newer than this runner's"), "{e}");
    let e = schema::init(&mut a).await.unwrap_err().to_string();
    assert!(e.contains("use a newer runner"), "{e}");
    // A version edited by hand is named, never taken for another, never a panic.
    pg.psql("ALTER TABLE fleet_schema ALTER version DROP NOT NULL");
    for (bad, said) in [("-1", "holds -1"), ("NULL", "holds NULL")] {
        pg.psql(&format!("UPDATE fleet_schema SET version = {bad}"));
        let e = schema::init(&mut a).await.unwrap_err().to_string();
        assert!(e.contains(said) && e.contains("edited by hand"), "{e}");
        let e = schema::check(&a).await.unwrap_err().to_string();
        assert!(e.contains(said), "{e}");
    }
    pg.psql("UPDATE fleet_schema SET version = 2; INSERT INTO fleet_schema VALUES (1)");
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("2 rows"), "{e}");
}

/// Every migration's text is checksummed: `db init` records each version's SHA-256, and a
/// database whose recorded checksum is not this binary's (made by a runner built from other
/// migration files) is refused by every command and by `db init`, naming the version. A
/// database migrated before checksums were kept gets them at the next init, marked so.
#[tokio::test]
async fn migrations_are_checksummed_and_other_migration_files_are_refused() {
    let pg = TempPg::start("checksums");
    let mut a = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    schema::init(&mut a).await.unwrap();
    let mut ours = Vec::new();
    for v in 1..=schema::VERSION {
        ours.push(format!("{v} {} f", schema::checksum(v).unwrap()));
    }
    let recorded = || {
        pg.psql(
            "SELECT string_agg(version || ' ' || sha256 || ' ' || \
             CASE WHEN recorded_later THEN 't' ELSE 'f' END, ',' ORDER BY version) \
             FROM fleet_migrations",
        )
    };
    assert_eq!(recorded(), ours.join(","));
    assert!(schema::checksum(0).is_none() && schema::checksum(schema::VERSION + 1).is_none());
    // Another text of migration 3 made this database: refused, by the check and by init.
    pg.psql(&format!(
        "UPDATE fleet_migrations SET sha256 = '{}' WHERE version = 3",
        "0".repeat(64)
    ));
    let e = schema::check(&a).await.unwrap_err().to_string();
    assert!(e.contains("migration to version 3") && e.contains("other migration files"), "{e}");
    let e = schema::init(&mut a).await.unwrap_err().to_string();
    assert!(e.contains("migration to version 3"), "{e}");
    // A database of before the checksums: recorded at the next init, marked as such.
    pg.psql("DROP TABLE fleet_migrations");
    schema::check(&a).await.unwrap();
    assert_eq!(schema::init(&mut a).await.unwrap(), schema::VERSION);
    let later: Vec<String> = ours.iter().map(|l| format!("{}t", &l[..l.len() - 1])).collect();
    assert_eq!(recorded(), later.join(","));
    schema::check(&a).await.unwrap();
}

#[tokio::test]
async fn prepared_statements_keep_counts_and_fencing_and_are_made_again_after_a_restart() {
    let mut pg = TempPg::start("prepared");
    let admin = db(&pg).await;
    // Past five executions PostgreSQL may switch a prepared statement to a generic plan: play
    // more pairs than that on one connection.
    let run = new_run(&admin, 12, json!({})).await;
    let target = parse_target(&pg.url()).unwrap();
    assert!(target.prepared_statements(), "on by default");
    let conn = queue::Conn::open(target.connect().await.unwrap(), true).await.unwrap();
    let w = worker(&conn, "p").await;
    for k in 0..8i64 {
        let mut c = queue::claim(&conn, &w, Some(run), &[], 1, LEASE).await.unwrap().remove(0);
        assert_eq!(c.seq as i64, k, "schedule order");
        assert_eq!(queue::heartbeat(&conn, &w, &[c.token], LEASE).await.unwrap(), [c.token]);
        // A wrong token writes nothing, the right one stores the pair once.
        c.token += 1000;
        let refused = report(&conn, &w, &c, ["W", "D"]).await;
        assert!(matches!(refused, Reported::Refused(_)), "{refused:?}");
        c.token -= 1000;
        match report_all(&conn, &w, &c, ["W", "D"], k % 2 == 1).await {
            // The counts returned include this pair (k + 1 pairs, each WD).
            Reported::Stored { counts, open, .. } => {
                assert!(open);
                assert_eq!(counts.len(), 1);
                assert_eq!(counts[0].penta, [0, 0, 0, k + 1, 0], "after pair {k}");
                assert_eq!(counts[0].wdl, [k + 1, k + 1, 0]);
            }
            other => panic!("{other:?}"),
        }
        let again = report(&conn, &w, &c, ["W", "D"]).await;
        assert!(matches!(again, Reported::Refused(_)), "{again:?}");
    }
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "16");

    // A restart cuts the connection with its prepared statements; a new one prepares them
    // again, and the run is completed after the report of its last open pair.
    pg.restart();
    assert!(queue::claim(&conn, &w, Some(run), &[], 1, LEASE).await.is_err());
    let mut conn = queue::Conn::open(target.connect().await.unwrap(), true).await.unwrap();
    let left = queue::claim(&conn, &w, Some(run), &[], 4, LEASE).await.unwrap();
    assert_eq!(left.iter().map(|c| c.seq).collect::<Vec<_>>(), [8, 9, 10, 11]);
    let mut open = vec![];
    for c in &left {
        if let Reported::Stored { open: o, .. } = report(&conn, &w, c, ["W", "W"]).await {
            open.push(o);
        }
    }
    assert_eq!(open, [true, true, true, false]);
    assert_eq!(queue::settle::decide_for(&mut conn, &w, run).await.unwrap().state, "complete");
    let counts = queue::pairing_counts(&*conn, run, None).await.unwrap();
    assert_eq!(counts[0].penta, [0, 0, 0, 8, 4]);
    assert_eq!(counts[0].wdl, [16, 8, 0]);
}

/// The server's decision (Rust: `queue::settle`, `fleet::decide::Judge`) against the database's
/// (`fleet_settle_run`, which runners of earlier versions called, on a version-6 database until
/// `runner db init --contract` drops it), on the same stored counts: random SPRT and racing runs
/// of 1 to 4 pairings, some pairings stopped before, some runs with every pair played. Every
/// row a decision writes must be the same, reasons included.
#[tokio::test]
async fn the_servers_decision_is_the_databases_on_the_same_counts() {
    let pg = TempPg::start("decide-diff");
    let mut admin = db(&pg).await;
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    let engines = [("A", "B"), ("A", "C"), ("A", "D"), ("A", "E")];
    let mut stops = 0;
    let mut ended = HashMap::<String, usize>::new();
    for case in 0..80 {
        let points = if rng.random_range(0..5u8) < 2 { 1 } else { rng.random_range(2..=4usize) };
        let sprt_spec = ["elo0=0,elo1=10", "elo0=-3,elo1=2,model=logistic", "elo0=0,elo1=30"]
            [rng.random_range(0..3usize)];
        let spec = stats::SprtSpec::parse(sprt_spec).unwrap();
        let race =
            runner::sweep::racing::RaceConfig { alpha: 0.05, min_pairs: rng.random_range(4..12) };
        let (with_sprt, with_race) = match rng.random_range(0..3u8) {
            0 => (true, false),
            1 => (false, true),
            _ => (true, true),
        };
        let judge = runner::fleet::decide::judge_config(
            with_sprt.then_some(&spec),
            with_race.then_some(&race),
            points,
            None,
        );
        let runs = [
            new_run_of(&admin, "sweep", &engines[..points], 3, judge.clone()).await.0,
            new_run_of(&admin, "sweep", &engines[..points], 3, judge.clone()).await.0,
        ];
        let played = rng.random_range(0..4u8) == 0;
        let mut before = Vec::new();
        for p in 0..points {
            // Around the SPRT's bounds and racing's thresholds: the first pairing better.
            let n = rng.random_range(0..160i64);
            let edge =
                if p == 0 { rng.random_range(-0.8..0.8) } else { rng.random_range(-0.1..0.2) };
            let mut penta = [0i64; 5];
            for _ in 0..n {
                let x: f64 = rng.random::<f64>() + edge * rng.random::<f64>();
                let k = ((x * 5.0) as usize).min(4);
                penta[k] += 1;
            }
            let stopped = rng.random_range(0..6u8) == 0;
            before.push((p, penta, stopped));
        }
        let mut sql = String::new();
        for run in runs {
            for &(p, penta, stopped) in &before {
                let [ll, ld, dd, wd, ww] = penta;
                let (wins, losses) = (wd + 2 * ww, ld + 2 * ll);
                let draws = ld + 2 * dd + wd;
                sql.push_str(&format!(
                    "INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, \
                     draws, losses) VALUES ({run}, {p}, 1, {ll}, {ld}, {dd}, {wd}, {ww}, {wins}, \
                     {draws}, {losses});"
                ));
                if stopped {
                    sql.push_str(&format!(
                        "UPDATE pairings SET active = false, verdict = 'dropped', why = 'before' \
                         WHERE run_id = {run} AND pairing = {p};"
                    ));
                }
            }
            if played {
                sql.push_str(&format!("UPDATE pairs SET state = 'done' WHERE run_id = {run};"));
            }
        }
        admin.batch_execute(&sql).await.unwrap();
        let rust = queue::settle::decide(&mut admin, runs[0]).await.unwrap();
        let sql = admin
            .query("SELECT state FROM fleet_settle_run($1)", &[&runs[1]])
            .await
            .unwrap()
            .last()
            .map(|r| r.get::<_, String>(0));
        assert_eq!(Some(&rust.state), sql.as_ref(), "case {case}");
        let mut rows = Vec::new();
        for run in runs {
            let one = admin
                .query_one(
                    "SELECT (SELECT row_to_json(r)::text FROM (SELECT state, stop_reason, \
                                finished_at IS NULL AS open FROM runs WHERE id = $1) r), \
                            (SELECT json_agg(g ORDER BY g.pairing)::text FROM (SELECT pairing, \
                                active, verdict, why, stop_games, stop_best, stop_z \
                                FROM pairings WHERE run_id = $1) g), \
                            (SELECT json_agg(p ORDER BY p.pairing, p.pair)::text FROM (SELECT \
                                pairing, pair, state, lease_until IS NULL AS unleased \
                                FROM pairs WHERE run_id = $1) p)",
                    &[&run],
                )
                .await
                .unwrap();
            rows.push((0..3).map(|i| one.get::<_, String>(i)).collect::<Vec<_>>());
        }
        assert_eq!(rows[0], rows[1], "case {case}: {judge}");
        stops += rust.stops.len();
        *ended.entry(rust.state).or_default() += 1;
    }
    // The cases reach every outcome.
    assert!(stops >= 20, "{stops} stops");
    for state in ["active", "decided", "complete"] {
        assert!(ended.get(state).copied().unwrap_or(0) >= 3, "{state}: {ended:?}");
    }
}

/// A run whose stored judge cannot be read fails at its next decision, saying why.
#[tokio::test]
async fn a_run_that_cannot_be_judged_fails_with_the_reason() {
    let pg = TempPg::start("judge-bad");
    let mut admin = db(&pg).await;
    let run = new_run(&admin, 3, json!({"race": {"min_pairs": "many"}})).await;
    let s = queue::settle::decide(&mut admin, run).await.unwrap();
    assert_eq!(s.state, "failed");
    let row = queue::run(&admin, run).await.unwrap().unwrap();
    let why = row.stop_reason.unwrap();
    assert!(why.contains("cannot be decided: its stored judge does not parse"), "{why}");
    assert!(why.contains("race: invalid type"), "{why}");
    // Decided once: a failed run is left as it is.
    assert_eq!(queue::settle::decide(&mut admin, run).await.unwrap().state, "failed");
}

/// A report refused says what the server sees now, and writes nothing: a pair this worker
/// leased again after its first lease expired (the old token), a pair given back to pending.
#[tokio::test]
async fn a_refused_report_says_what_holds_the_pair_now() {
    let pg = TempPg::start("refusals");
    let a = db(&pg).await;
    let run = new_run(&a, 2, json!({})).await;
    let w = worker(&a, "a").await;
    let first = queue::claim(&a, &w, Some(run), &[], 1, LEASE).await.unwrap();
    let expire =
        format!("UPDATE pairs SET lease_until = now() - interval '1 second' WHERE run_id = {run}");
    pg.psql(&expire);
    let again = queue::claim(&a, &w, Some(run), &[], 1, LEASE).await.unwrap();
    assert_eq!((again[0].seq, again[0].attempts), (first[0].seq, 2), "the same pair, again");
    match report(&a, &w, &first[0], ["W", "W"]).await {
        Reported::Refused(why) => assert_eq!(
            why,
            format!(
                "token {} is no longer the pair's: this worker holds it under a newer one",
                first[0].token
            )
        ),
        other => panic!("{other:?}"),
    }
    pg.psql(&format!(
        "UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL WHERE run_id = {run}"
    ));
    match report(&a, &w, &again[0], ["W", "W"]).await {
        Reported::Refused(why) => assert_eq!(why, "the pair is pending, not leased"),
        other => panic!("{other:?}"),
    }
    assert_eq!(pg.psql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "0");
}
