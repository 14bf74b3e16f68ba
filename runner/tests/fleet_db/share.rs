//! How claims share the fleet, against a real PostgreSQL (a throwaway cluster per test):
//! priority first, then the run furthest below its throughput's share, an owner's throughput
//! split among their runs, a worker kept on its run while that run is within its share, and a
//! small run submitted behind a large one served at the next claim. Every assertion is on which
//! run a claim returns (the order is deterministic: ties go to another run than the worker's,
//! then the larger weight, then the run served least recently, then the older run), never on
//! timing.

use std::collections::HashMap;

use crate::common::old::modify;
use crate::common::{LEASE, db, new_run, report, worker};
use e2e::pg::TempPg;
use runner::fleet::queue::share::{Change, shares};
use runner::fleet::queue::{self, Claim, Reported, WorkerId};
use serde_json::json;
use tokio_postgres::Client;

/// One pair for `w`, which plays `current` now; the claim must return one.
async fn claim1(db: &Client, w: &WorkerId, current: Option<i64>) -> Claim {
    let ask = queue::ClaimAsk { current, ..queue::ClaimAsk::new(1, LEASE) };
    let mut c = queue::claim_from(db, w, &ask).await.unwrap();
    assert_eq!(c.len(), 1, "one pair claimed");
    c.remove(0)
}

async fn set(db: &Client, run: i64, priority: Option<i32>, throughput: Option<i32>) {
    modify(db, run, Change { priority, throughput, pairs: None }).await.unwrap();
}

async fn workers(db: &Client, n: usize) -> Vec<WorkerId> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(worker(db, &format!("w{i}")).await);
    }
    out
}

#[tokio::test]
async fn the_highest_priority_present_is_served_first() {
    let pg = TempPg::start("share-prio");
    let db = db(&pg).await;
    let a = new_run(&db, 5, json!({})).await;
    let b = new_run(&db, 5, json!({})).await;
    let urgent = new_run(&db, 2, json!({})).await;
    set(&db, urgent, Some(1), None).await;
    set(&db, b, Some(-1), None).await;
    let w = workers(&db, 4).await;
    // The urgent run's two pairs first, even for a worker that plays another run.
    assert_eq!(claim1(&db, &w[0], None).await.run_id, urgent);
    assert_eq!(claim1(&db, &w[1], Some(a)).await.run_id, urgent);
    // Nothing left to hand out there (both leased): the next priority present, 0, not b's -1.
    assert_eq!(claim1(&db, &w[2], None).await.run_id, a);
    assert_eq!(claim1(&db, &w[3], None).await.run_id, a);
    // A lower priority is served once the higher ones have nothing to hand out.
    set(&db, a, Some(-2), None).await;
    assert_eq!(claim1(&db, &w[3], None).await.run_id, b);
}

#[tokio::test]
async fn throughputs_100_100_200_share_four_workers_1_1_2() {
    let pg = TempPg::start("share-tp");
    let db = db(&pg).await;
    let runs = [
        new_run(&db, 100, json!({})).await,
        new_run(&db, 100, json!({})).await,
        new_run(&db, 100, json!({})).await,
    ];
    set(&db, runs[2], None, Some(200)).await;
    let w = workers(&db, 4).await;
    // First claims: the run furthest below its share each time (after the claim); the second
    // is a tie (2 of 200 and 1 of 100) that goes to the larger weight.
    let mut held = Vec::new();
    for wk in &w {
        held.push(claim1(&db, wk, None).await);
    }
    let first: Vec<i64> = held.iter().map(|c| c.run_id).collect();
    assert_eq!(first, [runs[2], runs[2], runs[0], runs[1]]);
    // Each worker in turn stores its pair and claims again: it keeps its run (within its
    // share), and pairs done stay exactly 1:1:2.
    let mut done: HashMap<i64, usize> = HashMap::new();
    for round in 0..10 {
        for (i, wk) in w.iter().enumerate() {
            let c = held[i].clone();
            assert!(matches!(report(&db, wk, &c, ["W", "D"]).await, Reported::Stored { .. }));
            *done.entry(c.run_id).or_default() += 1;
            let next = claim1(&db, wk, Some(c.run_id)).await;
            assert_eq!(next.run_id, c.run_id, "round {round}: worker {i} kept its run");
            held[i] = next;
        }
    }
    assert_eq!((done[&runs[0]], done[&runs[1]], done[&runs[2]]), (10, 10, 20));
    // Status's view: shares now equal the targets.
    let s = shares(&db).await.unwrap();
    for (run, want) in [(runs[0], 0.25), (runs[1], 0.25), (runs[2], 0.5)] {
        let r = s.iter().find(|r| r.run == run).unwrap();
        assert!((r.now.unwrap() - want).abs() < 1e-9 && (r.target - want).abs() < 1e-9, "{r:?}");
    }
}

#[tokio::test]
async fn an_owner_with_two_runs_gets_what_one_run_of_another_owner_gets() {
    let pg = TempPg::start("share-owner");
    let db = db(&pg).await;
    let a1 = new_run(&db, 20, json!({})).await;
    let a2 = new_run(&db, 20, json!({})).await;
    let b = new_run(&db, 20, json!({})).await;
    pg.psql(&format!("UPDATE runs SET owner = 'alice' WHERE id IN ({a1}, {a2})"));
    pg.psql(&format!("UPDATE runs SET owner = 'bob' WHERE id = {b}"));
    let w = workers(&db, 8).await;
    let mut got = Vec::new();
    for wk in &w {
        got.push(claim1(&db, wk, None).await.run_id);
    }
    // Alice's throughput 100 is split between her two runs (50 each); Bob's one run weighs 100.
    assert_eq!(got, [b, b, a1, a2, b, b, a1, a2]);
    let count = |r: i64| got.iter().filter(|x| **x == r).count();
    assert_eq!((count(b), count(a1) + count(a2)), (4, 4));
}

#[tokio::test]
async fn a_worker_keeps_its_run_while_within_its_share() {
    let pg = TempPg::start("share-sticky");
    let db = db(&pg).await;
    let a = new_run(&db, 50, json!({})).await;
    let b = new_run(&db, 50, json!({})).await;
    let w = workers(&db, 6).await;
    let firsts = [
        claim1(&db, &w[0], None).await.run_id,
        claim1(&db, &w[1], None).await.run_id,
        claim1(&db, &w[2], None).await.run_id,
        claim1(&db, &w[3], None).await.run_id,
    ];
    assert_eq!(firsts, [a, b, a, b]);
    // Two in flight on each. A worker new to the fleet gets the older run (a tie) ...
    let fresh = claim1(&db, &w[5], None).await;
    assert_eq!(fresh.run_id, a);
    assert_eq!(queue::release(&db, &w[5], &[fresh.token]).await.unwrap(), 1);
    // ... a worker that plays b stays on b: 3 of 5 is within 25 % of its fair half.
    let sticky = claim1(&db, &w[4], Some(b)).await;
    assert_eq!(sticky.run_id, b);
    // Now b holds 3, a 2: a worker that plays b too would put b at 4 of 6, past 25 % over its
    // share: it moves to a.
    assert_eq!(claim1(&db, &w[5], Some(b)).await.run_id, a);
}

#[tokio::test]
async fn a_small_run_behind_a_large_one_gets_the_next_claim() {
    let pg = TempPg::start("share-small");
    let db = db(&pg).await;
    // 20,000 games, then 20 games.
    let big = new_run(&db, 10_000, json!({})).await;
    let w = workers(&db, 4).await;
    let mut held = Vec::new();
    for wk in &w {
        held.push(claim1(&db, wk, None).await);
    }
    // The workers settle on the big run.
    for (i, wk) in w.iter().enumerate() {
        assert!(matches!(report(&db, wk, &held[i], ["D", "D"]).await, Reported::Stored { .. }));
        held[i] = claim1(&db, wk, Some(big)).await;
        assert_eq!(held[i].run_id, big);
    }
    let small = new_run(&db, 10, json!({})).await;
    // The next claim, by a worker that plays the big run, is the small run's first pair.
    assert!(matches!(report(&db, &w[0], &held[0], ["D", "D"]).await, Reported::Stored { .. }));
    let next = claim1(&db, &w[0], Some(big)).await;
    assert_eq!((next.run_id, next.seq), (small, 0));
    // And the next one too: the small run is still furthest below its half.
    assert!(matches!(report(&db, &w[1], &held[1], ["D", "D"]).await, Reported::Stored { .. }));
    assert_eq!(claim1(&db, &w[1], Some(big)).await.run_id, small);
}

/// Five equal runs and one slot: every claim finds them all tied (none holds a pair), so they
/// take turns, the run served least recently first, instead of the oldest run taking every
/// pair; a run submitted later is served at the next claim.
#[tokio::test]
async fn runs_take_turns_when_they_outnumber_the_slots() {
    let pg = TempPg::start("share-turns");
    let db = db(&pg).await;
    let mut runs = Vec::new();
    for _ in 0..5 {
        runs.push(new_run(&db, 100, json!({})).await);
    }
    let w = worker(&db, "w").await;
    let mut current = None;
    let mut served = Vec::new();
    for _ in 0..10 {
        let c = claim1(&db, &w, current).await;
        assert!(matches!(report(&db, &w, &c, ["D", "D"]).await, Reported::Stored { .. }));
        current = Some(c.run_id);
        served.push(c.run_id);
    }
    let twice: Vec<i64> = runs.iter().chain(&runs).copied().collect();
    assert_eq!(served, twice);
    let late = new_run(&db, 100, json!({})).await;
    assert_eq!(claim1(&db, &w, current).await.run_id, late);
}

#[tokio::test]
async fn modify_checks_who_and_bounds_and_changes_the_length_within_the_schedule() {
    let pg = TempPg::start("share-modify");
    let db = db(&pg).await;
    let run = new_run(&db, 10, json!({})).await;
    let w = worker(&db, "w").await;
    let c = queue::claim(&db, &w, None, &[], 3, LEASE).await.unwrap();
    assert_eq!(c.len(), 3);
    // 6 games per pairing: the 7 pending pairs past pair 3 are skipped (the leased ones stay).
    let m = modify(&db, run, Change { pairs: Some(3), ..Change::default() }).await.unwrap();
    assert_eq!((m.state.as_str(), m.skipped, m.reopened), ("active", 7, 0));
    assert!(queue::claim(&db, &w, None, &[], 3, LEASE).await.unwrap().is_empty());
    // Back to 10 pairs: they are pending again.
    let m = modify(&db, run, Change { pairs: Some(10), ..Change::default() }).await.unwrap();
    assert_eq!((m.skipped, m.reopened), (0, 7));
    // Past the submitted schedule, and out-of-range values, are refused.
    let e = modify(&db, run, Change { pairs: Some(11), ..Change::default() }).await.unwrap_err();
    assert!(format!("{e:#}").contains("submitted with 20 games per pairing"), "{e:#}");
    let e =
        modify(&db, run, Change { throughput: Some(0), ..Change::default() }).await.unwrap_err();
    assert!(format!("{e:#}").contains("throughput 0 is outside [1, 1000]"), "{e:#}");
    // A run of another owner: a submitter may not change it; nor raise a priority above 0.
    pg.psql("CREATE ROLE mallory LOGIN");
    pg.psql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO mallory");
    pg.psql("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO mallory");
    let m = crate::common::connect_as(&pg, "mallory").await;
    let e = modify(&m, run, Change { priority: Some(-1), ..Change::default() }).await.unwrap_err();
    assert!(format!("{e:#}").contains("only its owner or an approver"), "{e:#}");
    pg.psql(&format!("UPDATE runs SET owner = 'mallory' WHERE id = {run}"));
    let e = modify(&m, run, Change { priority: Some(5), ..Change::default() }).await.unwrap_err();
    assert!(format!("{e:#}").contains("only an approver raises"), "{e:#}");
    let ok = modify(&m, run, Change { priority: Some(-3), throughput: Some(250), pairs: None })
        .await
        .unwrap();
    assert_eq!((ok.share.priority, ok.share.throughput), (-3, 250));
}
