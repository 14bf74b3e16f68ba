//! What the fleet's database tests share: a schema made as the superuser (an administrator),
//! runs stored through `fleet_submit`, synthetic game records the database accepts (the pair's
//! games between the pairing's engines, a result the rules do not decide), and reports of them.

#![allow(dead_code)]

pub mod old;

use std::time::Duration;

use e2e::pg::TempPg;
use runner::fleet::connect::parse_target;
use runner::fleet::queue::{self, Claim, NewRun, PairReport, Reported, WorkerId};
use runner::fleet::schema;
use serde_json::{Value, json};
use tokio_postgres::Client;

pub const LEASE: Duration = Duration::from_secs(60);

/// A connection as the cluster's superuser, the schema made at version 6 ([`schema::expand`]),
/// where the functions of earlier versions that some tests compare with or attack still are;
/// the server's code runs on it as on 7 (`contract.rs`, and every end-to-end test, whose
/// `runner db init` makes a new database at 7).
pub async fn db(pg: &TempPg) -> Client {
    let mut c = parse_target(&pg.url()).unwrap().connect().await.unwrap();
    schema::expand(&mut c).await.unwrap();
    c
}

pub async fn connect_as(pg: &TempPg, user: &str) -> Client {
    parse_target(&pg.url_as(user)).unwrap().connect().await.unwrap()
}

/// A match of `pairs` pairs between engines A and B (one pairing), decided by `judge`.
pub async fn new_run(db: &Client, pairs: i32, judge: Value) -> i64 {
    new_run_of(db, "match", &[("A", "B")], pairs, judge).await.0
}

/// A run of `kind` with one pairing per `engines` entry, `pairs` pairs each (pairing-major);
/// returns its id and whether it waits for approval. Stored through `fleet_submit`, as the
/// connection's role (so a role's rights are tested too).
pub async fn new_run_of(
    db: &Client,
    kind: &str,
    engines: &[(&str, &str)],
    pairs: i32,
    judge: Value,
) -> (i64, bool) {
    let spec = RunSpec::new(kind, engines, pairs, judge);
    old::insert_run(db, &spec.run()).await.unwrap()
}

/// What [`new_run_of`] stores: its labels, engines, schedule, submission and judge.
pub struct RunSpec {
    kind: String,
    labels: Vec<String>,
    names: Vec<(String, String)>,
    jobs: Vec<(i32, i32, i32)>,
    sub: Value,
    judge: Value,
}

impl RunSpec {
    pub fn new(kind: &str, engines: &[(&str, &str)], pairs: i32, judge: Value) -> RunSpec {
        let jobs = (0..pairs)
            .flat_map(|p| (0..engines.len() as i32).map(move |g| (g, p, p % 3)))
            .collect();
        RunSpec {
            kind: kind.to_string(),
            labels: engines.iter().map(|(a, b)| format!("{a} vs {b}")).collect(),
            names: engines.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            jobs,
            sub: json!({"test": true}),
            judge,
        }
    }

    pub fn run(&self) -> NewRun<'_> {
        NewRun {
            kind: &self.kind,
            submission: &self.sub,
            plan_hash: "h",
            judge: &self.judge,
            labels: &self.labels,
            engines: &self.names,
            jobs: &self.jobs,
            theta: None,
            draws: &[],
            refusal_limit: 3,
        }
    }
}

/// The SPRT part of a run's judge, as `fleet::decide::judge_config` writes it.
pub fn sprt(spec: &str) -> Value {
    let s = stats::SprtSpec::parse(spec).unwrap();
    runner::fleet::decide::judge_config(Some(&s), None, 1, None)
}

/// Game `game` of `c` between A and B (game 0: A has White), with `result` from White's side.
pub fn record(c: &Claim, game: u8, result: &str, engines: (&str, &str)) -> Value {
    let (white, black) = if game == 0 { engines } else { (engines.1, engines.0) };
    let termination = if result == "1/2-1/2" { "adjudication-draw" } else { "adjudication-resign" };
    json!({
        "pairing": c.pairing, "pair": c.pair, "game": game, "white": white, "black": black,
        "result": result, "termination": termination,
    })
}

/// Reports `c` with the first engine's results `first` ("W", "D" or "L") in games 0 and 1.
pub async fn report(db: &impl queue::Db, w: &WorkerId, c: &Claim, first: [&str; 2]) -> Reported {
    report_all(db, w, c, first, false).await
}

pub async fn report_all(
    db: &impl queue::Db,
    w: &WorkerId,
    c: &Claim,
    first: [&str; 2],
    all: bool,
) -> Reported {
    report_as(db, w, c, first, all, ("A", "B")).await
}

/// [`report_all`] for a pairing of `engines`.
pub async fn report_as(
    db: &impl queue::Db,
    w: &WorkerId,
    c: &Claim,
    first: [&str; 2],
    all: bool,
    engines: (&str, &str),
) -> Reported {
    let g = records(c, first, engines);
    queue::report(db, w, &pair_report(c, &g), all).await.unwrap()
}

/// The records of `c` between `engines` with the first engine's results `first` ("W", "D" or
/// "L") in games 0 and 1.
pub fn records(c: &Claim, first: [&str; 2], engines: (&str, &str)) -> [Value; 2] {
    let white = |game: u8, r: &str| match (game, r) {
        (_, "D") => "1/2-1/2",
        (0, "W") | (1, "L") => "1-0",
        _ => "0-1",
    };
    [record(c, 0, white(0, first[0]), engines), record(c, 1, white(1, first[1]), engines)]
}

/// The report of `c` with records `g`.
pub fn pair_report<'a>(c: &Claim, g: &'a [Value; 2]) -> PairReport<'a> {
    PairReport {
        run_id: c.run_id,
        pairing: c.pairing,
        pair: c.pair,
        token: c.token,
        records: [&g[0], &g[1]],
    }
}

/// The tests' own worker key, named `test`, issued by [`test_key`].
pub const TEST_KEY: &str = "fk_the-fleet-tests-own-worker-key";

/// Issues the tests' worker key [`TEST_KEY`] (once per database, also when workers start at
/// once: a second insert of the name or the hash does nothing); returns it.
pub async fn test_key(db: &Client) -> &'static str {
    db.execute(
        "INSERT INTO worker_keys (name, key_hash, created_by) \
         VALUES ('test', encode(sha256(convert_to($1, 'UTF8')), 'hex'), 'test') \
         ON CONFLICT DO NOTHING",
        &[&TEST_KEY],
    )
    .await
    .unwrap();
    TEST_KEY
}

/// A worker registered under the tests' key.
pub async fn worker(db: &Client, host: &str) -> WorkerId {
    let key = test_key(db).await;
    queue::register_worker(db, key, host, 1, 2, LEASE).await.unwrap()
}
