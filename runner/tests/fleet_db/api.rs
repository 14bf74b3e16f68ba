//! The worker API of `runner serve --db` (`/api/v1/worker/...`) against a real PostgreSQL, in
//! this process on a free port: the attacks that reach the database functions directly today,
//! written as HTTP requests, each refused with a typed answer before any SQL runs (each test
//! names the SQL call that succeeds on a database a worker reaches itself); a replayed report;
//! an old worker's protocol; half-sent requests; a body over the limit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::common::{new_run, old, record};
use e2e::pg::TempPg;
use runner::fleet::api::{self, Code, ErrorBody};
use runner::fleet::queue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The server over `pg`'s fleet (schema made), its worker API on a pool of `size` connections.
pub(crate) async fn serve(pg: &TempPg, size: usize) -> SocketAddr {
    serve_polling(pg, size, runner::fleet::worker::IDLE_POLL).await
}

/// [`serve`] with `--worker-poll`.
async fn serve_polling(pg: &TempPg, size: usize, poll: Duration) -> SocketAddr {
    let mut app = runner::serve::App::new(pg.socket_dir().join("no-results"), None).unwrap();
    app.pool = Some(runner::serve::pool::open(&pg.url(), size).await.unwrap());
    app.worker_poll = poll;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = runner::serve::router(Arc::new(app));
    tokio::spawn(runner::serve::listen::serve_on(listener, router, None, std::future::pending()));
    addr
}

/// A request to the worker API: its status, whether it carries the API's header, its body.
struct Answer {
    status: u16,
    ours: bool,
    body: Value,
}

impl Answer {
    async fn of(res: reqwest::Response) -> Answer {
        let status = res.status().as_u16();
        let ours = res.headers().contains_key(api::SERVER_HEADER);
        let text = res.text().await.unwrap();
        Answer { status, ours, body: serde_json::from_str(&text).unwrap_or(Value::String(text)) }
    }

    fn code(&self) -> Option<Code> {
        serde_json::from_value::<ErrorBody>(self.body.clone())
            .ok()
            .map(|e| e.code)
            .filter(|_| self.ours)
    }
}

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    fn new(addr: SocketAddr) -> Api {
        // reqwest is built without a default TLS provider (the runner passes its own rustls
        // configuration); these plain-HTTP requests need one named all the same.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Api { http: reqwest::Client::new(), base: format!("http://{addr}{}", api::PREFIX) }
    }

    /// POST `body` (raw text) to `path` with `auth` (bearer) and `worker` (id header).
    async fn post_raw(
        &self,
        path: &str,
        auth: &str,
        worker: Option<i64>,
        version: u32,
        body: String,
    ) -> Answer {
        let mut r = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(auth)
            .header(api::VERSION_HEADER, version.to_string())
            .header("content-type", "application/json")
            .body(body);
        if let Some(w) = worker {
            r = r.header(api::WORKER_HEADER, w.to_string());
        }
        let res = r.send().await.unwrap();
        Answer::of(res).await
    }

    async fn post(&self, path: &str, auth: &str, worker: Option<i64>, body: Value) -> Answer {
        self.post_raw(path, auth, worker, api::PROTOCOL, body.to_string()).await
    }

    /// GET `path` as worker `worker` with secret `auth`.
    async fn get(&self, path: &str, auth: &str, worker: i64) -> Answer {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(auth)
            .header(api::WORKER_HEADER, worker.to_string())
            .send()
            .await
            .unwrap();
        Answer::of(res).await
    }
}

/// A fleet with a run of `pairs` pairs, a worker key, and a worker registered over HTTP: the
/// server, the run, the worker's id and secret.
struct Setup {
    pg: TempPg,
    api: Api,
    run: i64,
    key: String,
    worker: i64,
    secret: String,
}

async fn setup(name: &str, pairs: i32) -> Setup {
    let pg = TempPg::start(name);
    let db = crate::common::db(&pg).await;
    let run = new_run(&db, pairs, json!({})).await;
    let key = old::key_add(&db, "box").await.unwrap();
    let addr = serve(&pg, 4).await;
    let api = Api::new(addr);
    let a = api.post("/register", &key, None, registration(30.0)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let worker = a.body["worker"].as_i64().unwrap();
    let secret = a.body["secret"].as_str().unwrap().to_string();
    Setup { pg, api, run, key, worker, secret }
}

fn registration(lease: f64) -> Value {
    json!({"host": "h", "pid": 1, "concurrency": 2, "lease_secs": lease, "version": "0.1.0",
           "cpu": null, "cores": 2})
}

fn claim_body(lease: Value) -> Value {
    json!({"only": null, "skip": [], "current": null, "n": 1, "lease_secs": lease,
           "tune_in_flight": 16})
}

impl Setup {
    /// Another worker registered over HTTP under `key`: its id and secret.
    async fn another(&self, key: &str) -> (i64, String) {
        let b = self.api.post("/register", key, None, registration(30.0)).await;
        assert_eq!(b.status, 200, "{}", b.body);
        (b.body["worker"].as_i64().unwrap(), b.body["secret"].as_str().unwrap().to_string())
    }

    fn leased(&self) -> String {
        self.pg.psql(&format!(
            "SELECT count(*) FROM pairs WHERE run_id = {} AND state = 'leased'",
            self.run
        ))
    }

    async fn claim(&self) -> queue::Claim {
        let a =
            self.api.post("/claim", &self.secret, Some(self.worker), claim_body(json!(30))).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let c: api::Claim = serde_json::from_value(a.body["claims"][0].clone()).unwrap();
        c.into()
    }

    fn report_body(&self, c: &queue::Claim) -> Value {
        json!({"pair": {"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token},
               "records": [record(c, 0, "1-0", ("A", "B")), record(c, 1, "1/2-1/2", ("A", "B"))],
               "all": false})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_with_a_missing_nan_or_huge_lease_is_refused_before_sql() {
    // Today: SELECT * FROM fleet_claim(w, secret, NULL, '{}', 1, NULL, 16, NULL) (and
    // 'NaN'::float8, 1e9) lease a pair that never expires.
    let s = setup("api-claim-lease", 4).await;
    let no_lease = json!({"only": null, "skip": [], "current": null, "n": 1, "tune_in_flight": 16});
    let a = s.api.post("/claim", &s.secret, Some(s.worker), no_lease).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    let nan =
        r#"{"only":null,"skip":[],"current":null,"n":1,"lease_secs":NaN,"tune_in_flight":16}"#;
    let a = s.api.post_raw("/claim", &s.secret, Some(s.worker), api::PROTOCOL, nan.into()).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    for lease in [json!(1e9), json!(0), json!(-5), json!(1e308)] {
        let a = s.api.post("/claim", &s.secret, Some(s.worker), claim_body(lease.clone())).await;
        assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{lease}: {}", a.body);
        assert!(a.body["message"].as_str().unwrap().contains("lease_secs"), "{}", a.body);
    }
    assert_eq!(s.leased(), "0", "no pair was leased");
    // A bounded claim is served.
    s.claim().await;
    assert_eq!(s.leased(), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_with_a_nan_lease_or_concurrency_is_refused_before_sql() {
    // Today: SELECT * FROM fleet_register(key, 'h', 1, 2, 'NaN'::float8, ...) registers a
    // worker whose lease makes `runner workers` and /workers fail for everyone.
    let s = setup("api-register", 2).await;
    let before = s.pg.psql("SELECT count(*) FROM workers");
    let nan = r#"{"host":"h","pid":1,"concurrency":NaN,"lease_secs":30,"version":"1","cpu":null,"cores":1}"#;
    let a = s.api.post_raw("/register", &s.key, None, api::PROTOCOL, nan.into()).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    let mut huge = registration(30.0);
    huge["concurrency"] = json!(1_000_000);
    let a = s.api.post("/register", &s.key, None, huge).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    let a = s.api.post("/register", &s.key, None, registration(1e300)).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    let mut bell = registration(30.0);
    bell["host"] = json!("h\u{7}\n");
    let a = s.api.post("/register", &s.key, None, bell).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    assert_eq!(s.pg.psql("SELECT count(*) FROM workers"), before, "no worker registered");
    // A key that is not one: typed, 401.
    let a = s.api.post("/register", "fk_nothing", None, registration(30.0)).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incident_of_a_megabyte_and_a_wrong_secret_are_refused() {
    // Today: SELECT fleet_incident(w, secret, run, 0, 0, token, repeat('x', 1000000)) stores a
    // megabyte per call on any run.
    let s = setup("api-incident", 2).await;
    let c = s.claim().await;
    let pair = json!({"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token});
    let big = json!({"pair": pair, "what": "x".repeat(1 << 20)});
    let a = s.api.post("/incident", &s.secret, Some(s.worker), big).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    assert_eq!(s.pg.psql("SELECT count(*) FROM incidents"), "0");
    // A wrong secret: the database's check, typed as 401.
    let a = s
        .api
        .post(
            "/heartbeat",
            "not-the-secret",
            Some(s.worker),
            json!({"tokens": [c.token], "lease_secs": 30}),
        )
        .await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    // No worker header at all.
    let a =
        s.api.post("/heartbeat", &s.secret, None, json!({"tokens": [], "lease_secs": 30})).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_for_a_pair_not_held_is_refused_and_a_replay_answers_as_stored() {
    let s = setup("api-report", 3).await;
    let c = s.claim().await;
    // A pair this key does not hold (another pair of the run, a token made up). Refused by
    // fleet_report today too; the API keeps it so, and stores nothing.
    let mut other = c.clone();
    other.pair = (c.pair + 1) % 3;
    other.token = c.token + 1000;
    let a = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&other)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["outcome"], "refused", "{}", a.body);
    assert_eq!(s.pg.psql("SELECT count(*) FROM games"), "0");
    // The report, then its replay (its first answer lost on the way). Today fleet_report
    // answers the replay 'the pair is done', which a worker counts as refused and then skips
    // the decision step.
    let first = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&c)).await;
    assert_eq!(first.body["outcome"], "stored", "{}", first.body);
    let again = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&c)).await;
    assert_eq!(again.body, first.body, "the replay is answered as the report was");
    assert_eq!(s.pg.psql("SELECT count(*) FROM games"), "2", "stored once");
    assert_eq!(s.pg.psql("SELECT ll + ld + dd + wd + ww FROM tallies"), "1", "counted once");
    // Another worker replaying it is refused: the pair is not its.
    let (w2, s2) = s.another(&s.key).await;
    let a = s.api.post("/report", &s2, Some(w2), s.report_body(&c)).await;
    assert_eq!(a.body["outcome"], "refused", "{}", a.body);
    // The decision step follows a replay as it follows a report.
    let a = s.api.post("/settle", &s.secret, Some(s.worker), json!({"run": s.run})).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["state"], "active", "{}", a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_worker_gets_no_new_work_but_keeps_its_leases() {
    let s = setup("api-versions", 2).await;
    let c = s.claim().await;
    // Protocol 0: a worker from before the header.
    let a = s
        .api
        .post_raw("/claim", &s.secret, Some(s.worker), 0, claim_body(json!(30)).to_string())
        .await;
    assert_eq!((a.status, a.code()), (426, Some(Code::UpgradeWorker)), "{}", a.body);
    assert!(a.body["message"].as_str().unwrap().contains("upgrade"), "{}", a.body);
    let beat = json!({"tokens": [c.token], "lease_secs": 30});
    let a = s.api.post_raw("/heartbeat", &s.secret, Some(s.worker), 0, beat.to_string()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["tokens"], json!([c.token]));
    let a = s
        .api
        .post_raw("/report", &s.secret, Some(s.worker), 0, s.report_body(&c).to_string())
        .await;
    assert_eq!(a.body["outcome"], "stored", "{}", a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_limit_is_refused_typed() {
    let s = setup("api-body-limit", 2).await;
    let c = s.claim().await;
    let mut body = s.report_body(&c);
    body["records"][0]["pad"] = json!("x".repeat(runner::serve::api::WORKER_BODY_MAX + 1));
    let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
    assert_eq!((a.status, a.code()), (413, Some(Code::TooLarge)), "{}", a.body);
    assert_eq!(s.pg.psql("SELECT count(*) FROM games"), "0");
}

/// 200 connections that send half a request each are held only until the header timeout; the
/// server answers a whole request meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_do_not_block_the_server_and_are_dropped() {
    let pg = TempPg::start("api-half-sent");
    let _db = crate::common::db(&pg).await;
    let addr = serve(&pg, 2).await;
    let mut held = Vec::new();
    for _ in 0..200 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /api/v1/worker/claim HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        held.push(s);
    }
    let a = Api::new(addr);
    let res = a.http.get(format!("{}/version", a.base)).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let v: api::Version = res.json().await.unwrap();
    assert_eq!(v.protocol, api::PROTOCOL);
    // Each is closed by the server (EOF or reset) once the header timeout passed; the limit
    // here is far above it.
    let limit = runner::serve::listen::HEADER_TIMEOUT * 6;
    for mut s in held {
        let mut buf = [0u8; 256];
        let r = tokio::time::timeout(limit, async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => continue,
                }
            }
        })
        .await;
        assert!(r.is_ok(), "a half-sent request was held past {limit:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_outside_the_api_is_a_typed_not_found_and_bad_paths_are_refused() {
    let s = setup("api-paths", 2).await;
    assert_eq!(s.api.get("/run/0", &s.secret, s.worker).await.status, 422);
    assert_eq!(s.api.get("/artifact/nothex/chunk/0", &s.secret, s.worker).await.status, 422);
    let res = s.api.http.get(format!("{}/nothing", s.api.base)).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 404);
    assert!(res.headers().contains_key(api::SERVER_HEADER));
    let _ = Duration::ZERO;
}

/// The server decides a run after a report by itself (no `POST /settle`): its SPRT, and its
/// end when nothing is left open; a run whose stored judge cannot be read fails at its next
/// report with the reason (it stayed active for ever, with no word).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_decides_after_a_report_and_a_run_it_cannot_judge_fails_saying_why() {
    let s = setup("api-decide", 40).await;
    let sprt = crate::common::sprt("elo0=0,elo1=200");
    s.pg.psql(&format!("UPDATE runs SET judge = '{sprt}' WHERE id = {}", s.run));
    let mut decided = None;
    for n in 1..=40 {
        let c = s.claim().await;
        let mut body = s.report_body(&c);
        body["records"] =
            json!([record(&c, 0, "1-0", ("A", "B")), record(&c, 1, "0-1", ("A", "B"))]);
        let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
        assert_eq!(a.body["outcome"], "stored", "{}", a.body);
        if let Some(settled) = a.body.get("settled") {
            decided = Some((n, settled.clone()));
            break;
        }
    }
    let (n, settled) = decided.expect("the server decided the SPRT");
    assert_eq!(settled["state"], "decided", "{settled}");
    assert_eq!(settled["stops"][0]["verdict"], "H1", "{settled}");
    let why = settled["stops"][0]["why"].as_str().unwrap();
    assert!(why.contains(&format!("SPRT accepted H1 after {} games", 2 * n)), "{why}");
    assert_eq!(s.pg.psql(&format!("SELECT state FROM runs WHERE id = {}", s.run)), "decided");
    assert_eq!(
        s.pg.psql(&format!(
            "SELECT count(*) FROM pairs WHERE run_id = {} AND state = 'leased'",
            s.run
        )),
        "0"
    );

    // A run with nothing left open is complete after its last report.
    let db = crate::common::db(&s.pg).await;
    let run = new_run(&db, 1, json!({})).await;
    let c = s.claim().await;
    assert_eq!(c.run_id, run);
    let a = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&c)).await;
    assert_eq!(a.body["settled"]["state"], "complete", "{}", a.body);

    // A judge that does not parse (written by hand, or by a version that wrote it otherwise).
    let run = new_run(&db, 2, json!({})).await;
    s.pg.psql(&format!(
        "UPDATE runs SET judge = '{{\"sprt\": {{\"elo0\": \"x\"}}}}' WHERE id = {run}"
    ));
    let c = s.claim().await;
    assert_eq!(c.run_id, run);
    let a = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&c)).await;
    assert_eq!(a.body["outcome"], "stored", "{}", a.body);
    assert_eq!(a.body["settled"]["state"], "failed", "{}", a.body);
    let (state, why) = (
        s.pg.psql(&format!("SELECT state FROM runs WHERE id = {run}")),
        s.pg.psql(&format!("SELECT stop_reason FROM runs WHERE id = {run}")),
    );
    assert_eq!(state, "failed");
    assert!(
        why.starts_with(&format!("run {run} cannot be decided: its stored judge does not parse")),
        "{why}"
    );
    // No pair of it is handed out again.
    let a = s.api.post("/claim", &s.secret, Some(s.worker), claim_body(json!(30))).await;
    assert_eq!(a.body["claims"], json!([]), "{}", a.body);
}

/// An idle worker waits as long as the server says (`runner serve --worker-poll`) before it
/// asks again; the answer's bounds are in the API's document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_sets_how_often_an_idle_worker_asks() {
    let s = setup("api-poll", 1).await;
    let a = s.api.post("/outstanding", &s.secret, Some(s.worker), json!({"skip": []})).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["poll_secs"], 2.0, "the default: {}", a.body);
    assert_eq!(a.body["runs"], json!([s.run]), "{}", a.body);

    let pg = TempPg::start("api-poll-7");
    let db = crate::common::db(&pg).await;
    let api = Api::new(serve_polling(&pg, 2, Duration::from_secs(7)).await);
    let key = old::key_add(&db, "box").await.unwrap();
    let r = api.post("/register", &key, None, registration(30.0)).await;
    let (w, secret) =
        (r.body["worker"].as_i64().unwrap(), r.body["secret"].as_str().unwrap().to_string());
    let a = api.post("/outstanding", &secret, Some(w), json!({"skip": []})).await;
    assert_eq!(a.body["poll_secs"], 7.0, "{}", a.body);
    assert_eq!(a.body["runs"], json!([]), "{}", a.body);
}

/// Racing through the server: a worker that asks for its pairing's counts only (an older one,
/// or one that does not race) still has the run raced over every pairing's counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_races_a_sweep_over_every_pairing_whatever_the_worker_asks() {
    let s = setup("api-race", 1).await;
    let db = crate::common::db(&s.pg).await;
    s.pg.psql(&format!("UPDATE runs SET state = 'complete' WHERE id = {}", s.run));
    let race = runner::sweep::racing::RaceConfig { alpha: 0.05, min_pairs: 4 };
    let judge = runner::fleet::decide::judge_config(None, Some(&race), 2, None);
    let engines = [("A", "B"), ("A", "C")];
    let (run, _) = crate::common::new_run_of(&db, "sweep", &engines, 10, judge).await;
    let mut dropped = None;
    for n in 0..20 {
        let c = s.claim().await;
        assert_eq!(c.run_id, run);
        // A beats B and loses to C, every game.
        let (e, r) = if c.pairing == 0 {
            (engines[0], ["1-0", "0-1"])
        } else {
            (engines[1], ["0-1", "1-0"])
        };
        let body = json!({
            "pair": {"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token},
            "records": [record(&c, 0, r[0], e), record(&c, 1, r[1], e)],
            "all": false,
        });
        let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
        assert_eq!(a.body["outcome"], "stored", "{}", a.body);
        assert_eq!(a.body["counts"].as_array().map(Vec::len), Some(1), "as asked: {}", a.body);
        if let Some(st) =
            a.body.get("settled").and_then(|x| x["stops"].as_array()).filter(|x| !x.is_empty())
        {
            dropped = Some((n, st.clone()));
            break;
        }
    }
    let (n, stops) = dropped.expect("racing dropped a point");
    // Pairing 0 scores everything, pairing 1 nothing; the drop comes once both have 4 pairs.
    assert_eq!(n, 7, "{stops:?}");
    assert_eq!(stops[0]["pairing"], 1, "C beats A: A vs C is the worse point: {stops:?}");
    assert_eq!(stops[0]["verdict"], "dropped", "{stops:?}");
    assert_eq!(s.pg.psql(&format!("SELECT state FROM runs WHERE id = {run}")), "active");
}

/// A run whose every pair is played but that no report decided (its last two pairs reported at
/// the same instant) is closed by the server's look; a run with open pairs is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_closes_a_run_whose_every_pair_is_played() {
    let pg = TempPg::start("api-close");
    let db = crate::common::db(&pg).await;
    let played = new_run(&db, 2, json!({})).await;
    let open = new_run(&db, 2, json!({})).await;
    pg.psql(&format!("UPDATE pairs SET state = 'done' WHERE run_id = {played}"));
    let pool = runner::serve::pool::open(&pg.url(), 2).await.unwrap();
    let closed = runner::serve::api::closing::close_once(&pool).await.unwrap();
    assert_eq!(closed, [played]);
    let state = |run: i64| pg.psql(&format!("SELECT state FROM runs WHERE id = {run}"));
    assert_eq!(state(played), "complete");
    assert_eq!(state(open), "active");
    assert!(runner::serve::api::closing::close_once(&pool).await.unwrap().is_empty());
}

/// The heartbeat (the server's own statement): a worker renews only the leases it holds, and a
/// wrong secret writes nothing, not even the worker's heartbeat time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeat_renews_only_the_workers_own_leases_and_a_wrong_secret_writes_nothing() {
    let s = setup("api-heartbeat", 2).await;
    let c = s.claim().await;
    let lease = |t: i64| s.pg.psql(&format!("SELECT lease_until FROM pairs WHERE token = {t}"));
    let before = lease(c.token);
    // Another worker of the same key sends the first one's token: nothing renewed.
    let (w2, s2) = s.another(&s.key).await;
    let beat = json!({"tokens": [c.token], "lease_secs": 3600});
    let a = s.api.post("/heartbeat", &s2, Some(w2), beat.clone()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["tokens"], json!([]), "another worker's lease is not its to renew");
    assert_eq!(lease(c.token), before);
    // A wrong secret for the holder: refused, and its heartbeat time untouched.
    let seen = || s.pg.psql(&format!("SELECT heartbeat_at FROM workers WHERE id = {}", s.worker));
    let was = seen();
    let a = s.api.post("/heartbeat", "not-the-secret", Some(s.worker), beat.clone()).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    assert_eq!(
        (seen(), lease(c.token)),
        (was, before.clone()),
        "a refused heartbeat wrote something"
    );
    // The holder renews it.
    let a = s.api.post("/heartbeat", &s.secret, Some(s.worker), beat).await;
    assert_eq!(a.body["tokens"], json!([c.token]), "{}", a.body);
    assert_ne!(lease(c.token), before);
}

/// Everything a refused worker call must leave as it was: the workers, the pairs, the runs,
/// the refusals and the incidents.
fn everything(pg: &TempPg) -> String {
    pg.psql(
        "SELECT (SELECT json_agg(w ORDER BY w.id) FROM workers w)::text \
             || (SELECT json_agg(p ORDER BY p.run_id, p.seq) FROM pairs p)::text \
             || (SELECT json_agg(r ORDER BY r.id) FROM runs r)::text \
             || (SELECT count(*) FROM refusals)::text || (SELECT count(*) FROM incidents)::text \
             || (SELECT count(*) FROM engine_loads)::text",
    )
}

/// The worker calls that are the server's own statements check the worker as the database
/// functions did: a wrong secret, another worker's secret or id, an id no worker has, a
/// stopped worker and a revoked key are each refused 401 with the functions' message, and
/// nothing is written: a claim leases nothing (`fleet_claim(w, 'not-the-secret', ...)` raised
/// the same message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_worker_calls_refuse_a_bad_secret_a_stopped_worker_and_a_revoked_key() {
    let s = setup("api-worker-checks", 3).await;
    let c = s.claim().await;
    let (w2, s2) = s.another(&s.key).await;
    let (w3, s3) = s.another(&s.key).await;
    let a = s.api.post("/stopped", &s3, Some(w3), json!({})).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_ne!(s.pg.psql(&format!("SELECT stopped_at FROM workers WHERE id = {w3}")), "");
    let db = crate::common::db(&s.pg).await;
    let other = old::key_add(&db, "box2").await.unwrap();
    let (w4, s4) = s.another(&other).await;
    assert_eq!(old::key_revoke(&db, "box2").await.unwrap(), 0, "it held no lease");
    let bad = [
        (s.worker, "not-the-secret".to_string()),
        (s.worker, s2.clone()),
        (w2, s.secret.clone()),
        (999_999, s.secret.clone()),
        (w3, s3),
        (w4, s4),
    ];
    // An engine loaded is recorded for a run the worker holds a lease of; from a worker that
    // holds none (w2), it is dropped with no word, as the function did.
    let loads = || s.pg.psql("SELECT count(*) FROM engine_loads");
    let load = json!({"run": s.run, "engine": "A", "nodes": 1000, "nps": 50_000});
    let a = s.api.post("/engine-loaded", &s.secret, Some(s.worker), load.clone()).await;
    assert_eq!((a.status, loads()), (200, "1".to_string()), "{}", a.body);
    let a = s.api.post("/engine-loaded", &s2, Some(w2), load).await;
    assert_eq!((a.status, loads()), (200, "1".to_string()), "{}", a.body);
    let pair = json!({"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token});
    let calls = [
        ("/outstanding", json!({"skip": []})),
        ("/settle", json!({"run": s.run})),
        ("/heartbeat", json!({"tokens": [c.token], "lease_secs": 3600})),
        ("/incident", json!({"pair": pair, "what": "the disk is full"})),
        ("/release", json!({"tokens": [c.token]})),
        ("/refuse", json!({"run": s.run, "reason": "engine A: cannot start", "tokens": [c.token]})),
        ("/engine-loaded", json!({"run": s.run, "engine": "A", "nodes": 1000, "nps": 50_000})),
        // A claim leases nothing (the worker itself, below, gets nothing of the run it refused).
        ("/claim", claim_body(json!(30))),
        // Last: the worker itself is served each call in this order below.
        ("/stopped", json!({})),
    ];
    let before = everything(&s.pg);
    for (id, secret) in &bad {
        let mut answers = Vec::new();
        for (path, body) in &calls {
            answers.push((*path, s.api.post(path, secret, Some(*id), body.clone()).await));
        }
        answers.push(("/run", s.api.get(&format!("/run/{}", s.run), secret, *id).await));
        let list = format!("/run/{}/artifacts", s.run);
        answers.push(("/artifacts", s.api.get(&list, secret, *id).await));
        let chunk = format!("/artifact/{}/chunk/0", "ab".repeat(32));
        answers.push(("/chunk", s.api.get(&chunk, secret, *id).await));
        for (path, a) in answers {
            assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{path}: {}", a.body);
            let want = format!(
                "worker {id}: not registered with a valid key (revoked, stopped, or a wrong secret)"
            );
            assert_eq!(a.body["message"], want.as_str(), "{path}");
        }
        assert_eq!(everything(&s.pg), before, "worker {id}: a refused call wrote something");
    }
    // The worker itself is served.
    for (path, body) in &calls {
        let a = s.api.post(path, &s.secret, Some(s.worker), body.clone()).await;
        assert_eq!(a.status, 200, "{path}: {}", a.body);
    }
    // Its engine loaded came after it gave its leases back: dropped.
    assert_eq!(loads(), "1");
    // Stopped by the last call: from then on refused, its stop written once.
    let stopped = || s.pg.psql(&format!("SELECT stopped_at FROM workers WHERE id = {}", s.worker));
    let at = stopped();
    assert_ne!(at, "");
    let a = s.api.get(&format!("/run/{}", s.run), &s.secret, s.worker).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    let a = s.api.post("/stopped", &s.secret, Some(s.worker), json!({})).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    assert_eq!(stopped(), at);
}

/// A worker gives back only the leases it holds (the server's own statements, as the database
/// functions did): another worker's lease, or its own under a token it does not hold, stays
/// leased; what it says is recorded under its own name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_gives_back_only_its_own_leases() {
    let s = setup("api-own-leases", 3).await;
    let c = s.claim().await;
    let db = crate::common::db(&s.pg).await;
    let (w2, s2) = s.another(&old::key_add(&db, "box2").await.unwrap()).await;
    let held = || {
        s.pg.psql(&format!(
            "SELECT concat_ws(' ', state, worker_id, token, lease_until) FROM pairs \
             WHERE run_id = {} AND pairing = {} AND pair = {}",
            c.run_id, c.pairing, c.pair
        ))
    };
    let was = held();
    let pair =
        |token: i64| json!({"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": token});
    let incident = async |secret: &str, id: i64, pair: Value, what: &str| {
        let a =
            s.api.post("/incident", secret, Some(id), json!({"pair": pair, "what": what})).await;
        assert_eq!(a.status, 200, "{}", a.body);
    };
    // An incident on another worker's lease, and on its own pair under a made-up token: each
    // recorded under its caller, the pair left leased.
    incident(&s2, w2, pair(c.token), "w2").await;
    incident(&s.secret, s.worker, pair(c.token + 99), "w1").await;
    // On a run that is not there: nothing recorded.
    let mut gone = pair(c.token);
    gone["run"] = json!(999_999);
    incident(&s.secret, s.worker, gone, "x").await;
    assert_eq!(
        s.pg.psql("SELECT string_agg(worker_id || ':' || what, ',' ORDER BY id) FROM incidents"),
        format!("{w2}:w2,{}:w1", s.worker)
    );
    // A release of another worker's lease, or of a made-up token: none given back.
    let a = s.api.post("/release", &s2, Some(w2), json!({"tokens": [c.token]})).await;
    assert_eq!((a.status, &a.body["released"]), (200, &json!(0)), "{}", a.body);
    let a =
        s.api.post("/release", &s.secret, Some(s.worker), json!({"tokens": [c.token + 99]})).await;
    assert_eq!((a.status, &a.body["released"]), (200, &json!(0)), "{}", a.body);
    // A refusal with another worker's lease: recorded for the caller's key, the lease kept. Of
    // a run that is not there: 404, as the function answered, nothing written.
    let refusal =
        |run: i64| json!({"run": run, "reason": "engine B: not found", "tokens": [c.token]});
    let a = s.api.post("/refuse", &s2, Some(w2), refusal(c.run_id)).await;
    assert_eq!((a.status, &a.body["state"]), (200, &json!("active")), "{}", a.body);
    let a = s.api.post("/refuse", &s2, Some(w2), refusal(999_999)).await;
    assert_eq!((a.status, a.code()), (404, Some(Code::NotFound)), "{}", a.body);
    assert_eq!(a.body["message"], "no run 999999 in the database");
    assert_eq!(
        s.pg.psql("SELECT string_agg(r.run_id || ':' || k.name || ':' || r.worker_id || ':' || r.reason, ',') \
                   FROM refusals r JOIN worker_keys k ON k.id = r.key_id"),
        format!("{}:box2:{w2}:engine B: not found", c.run_id)
    );
    assert_eq!(held(), was, "a lease not held was given back");
    // The holder's release gives back its own, not the token it does not hold.
    let c2 = s.claim().await;
    let a = s
        .api
        .post("/release", &s.secret, Some(s.worker), json!({"tokens": [c2.token, c.token + 99]}))
        .await;
    assert_eq!((a.status, &a.body["released"]), (200, &json!(1)), "{}", a.body);
    assert_eq!(s.leased(), "1");
    // The holder's incident gives its pair back.
    incident(&s.secret, s.worker, pair(c.token), "mine").await;
    assert_eq!(held(), "pending", "no worker, no token, no lease");
    assert_eq!(s.leased(), "0");
}

/// Refusals through the server (its own statements): a run fails once three distinct keys
/// refused it, with their reasons, also when the three refuse at the same instant (each
/// refusal's own statement sees only the refusals committed before it began).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_by_three_keys_fail_a_run_even_when_they_come_at_once() {
    let s = setup("api-refusals", 2).await;
    let db = crate::common::db(&s.pg).await;
    let mut workers = vec![(s.worker, s.secret.clone())];
    for name in ["box2", "box3"] {
        workers.push(s.another(&old::key_add(&db, name).await.unwrap()).await);
    }
    let refuse = |i: usize, run: i64| {
        let (id, secret) = workers[i].clone();
        let api = &s.api;
        async move {
            let body = json!({"run": run, "reason": format!("engine A: cannot start on {i}"),
                              "tokens": []});
            let a = api.post("/refuse", &secret, Some(id), body).await;
            assert_eq!(a.status, 200, "{}", a.body);
            a.body["state"].as_str().unwrap().to_string()
        }
    };
    let state = |run: i64| s.pg.psql(&format!("SELECT state FROM runs WHERE id = {run}"));
    // One after the other: the third fails it, saying why.
    assert_eq!(refuse(0, s.run).await, "active");
    assert_eq!(refuse(0, s.run).await, "active", "a key counts once");
    assert_eq!(refuse(1, s.run).await, "active");
    assert_eq!(refuse(2, s.run).await, "failed");
    let why = s.pg.psql(&format!("SELECT stop_reason FROM runs WHERE id = {}", s.run));
    assert_eq!(
        why,
        "refused by 3 worker(s): box: engine A: cannot start on 0; \
         box2: engine A: cannot start on 1; box3: engine A: cannot start on 2"
    );
    assert_eq!(refuse(1, s.run).await, "failed");
    // At the same instant.
    for _ in 0..5 {
        let run = new_run(&db, 2, json!({})).await;
        let (a, b, c) = tokio::join!(refuse(0, run), refuse(1, run), refuse(2, run));
        assert!([a, b, c].contains(&"failed".to_string()));
        assert_eq!(state(run), "failed");
    }
}

/// Registration (the server's own statement): an unknown key and a revoked one are refused 401
/// with the function's words and write nothing; what the machine says is bounded as the
/// function bounded it; an administrator's own worker registers under its role's key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_takes_only_a_valid_key_and_bounds_what_the_machine_says() {
    let s = setup("api-register-keys", 1).await;
    let db = crate::common::db(&s.pg).await;
    let before = everything(&s.pg);
    let keys = || s.pg.psql("SELECT json_agg(k ORDER BY k.id) FROM worker_keys k");
    let had = keys();
    let a = s.api.post("/register", "fk_nothing", None, registration(30.0)).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    assert_eq!(a.body["message"], "unknown worker key");
    let other = old::key_add(&db, "box2").await.unwrap();
    old::key_revoke(&db, "box2").await.unwrap();
    let had_two = keys();
    let a = s.api.post("/register", &other, None, registration(30.0)).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    assert_eq!(a.body["message"], "worker key box2 was revoked");
    assert_eq!(everything(&s.pg), before, "a refused registration wrote something");
    assert_ne!(had, had_two);
    assert_eq!(keys(), had_two);

    // What the machine says, bounded: an empty CPU is "unknown", cores past 100,000 unknown;
    // the version is the worker's own, not the server's.
    let mut r = registration(30.0);
    r["version"] = json!("0.0.9-theirs");
    r["cpu"] = json!("");
    r["cores"] = json!(200_000);
    let (id, secret) = {
        let a = s.api.post("/register", &s.key, None, r).await;
        assert_eq!((a.status, &a.body["key_name"]), (200, &json!("box")), "{}", a.body);
        (a.body["worker"].as_i64().unwrap(), a.body["secret"].as_str().unwrap().to_string())
    };
    let row = |id: i64| {
        s.pg.psql(&format!(
            "SELECT concat_ws(' ', length(host), pid, concurrency, lease_secs, cpu, \
                    coalesce(cores::text, '-'), version, length(secret_hash)) \
             FROM workers WHERE id = {id}"
        ))
    };
    assert_eq!(row(id), "1 1 2 30 unknown - 0.0.9-theirs 64");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(secret.len(), 64);
    let a = s.api.post("/outstanding", &secret, Some(id), json!({"skip": []})).await;
    assert_eq!(a.status, 200, "the secret answered is the worker's: {}", a.body);
    // Called directly: a host and a CPU past 200 characters are cut.
    let m = queue::Machine {
        host: "h".repeat(300),
        cpu: Some("c".repeat(300)),
        cores: Some(16),
        version: None,
    };
    let w = queue::register_machine(&db, &s.key, &m, 7, 3, Duration::from_secs(60)).await.unwrap();
    assert_eq!(row(w.id), format!("200 7 3 60 {} 16 {version} 64", "c".repeat(200)));
    // Two workers of one key are two workers; a revoked key registers none, an unknown one
    // neither. (Before, a database administrator's worker registered with no key, under an
    // implicit key of its role: `SELECT * FROM fleet_register(NULL, ...)`.)
    let w1 = crate::common::worker(&db, "mine").await;
    let w2 = crate::common::worker(&db, "mine").await;
    assert_eq!((w1.key_name.as_str(), w2.key_name.as_str()), ("test", "test"));
    assert_ne!(w1.id, w2.id);
    old::key_revoke(&db, "test").await.unwrap();
    let key = crate::common::TEST_KEY;
    let e =
        queue::register_worker(&db, key, "mine", 1, 1, Duration::from_secs(60)).await.unwrap_err();
    assert!(format!("{e:#}").contains("worker key test was revoked"), "{e:#}");
    let e = queue::register_worker(&db, "fk_unknown", "mine", 1, 1, Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(format!("{e:#}").contains("unknown worker key"), "{e:#}");
}

/// A worker reads the artifacts of an approved, active run, and only those (the server's own
/// statements, as `fleet_worker_artifacts` and `fleet_artifact_chunk` answered): a chunk not
/// stored is 404, an artifact no active run names is 403, and once the run ends its list is
/// empty and its chunks 403.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_reads_only_the_artifacts_of_an_active_run() {
    use sha2::Digest;
    let s = setup("api-artifacts", 2).await;
    let db = crate::common::db(&s.pg).await;
    let bytes = b"an engine's bytes".to_vec();
    let sha: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let len = bytes.len() as i64;
    old::artifact_put(&db, &sha, len, 1, "binary", 0, &bytes).await.unwrap();
    old::artifact_seal(&db, &sha).await.unwrap();
    let chunk = |n: i32| format!("/artifact/{sha}/chunk/{n}");
    let list = format!("/run/{}/artifacts", s.run);
    // Sealed but named by no run: refused, and the run lists nothing.
    let a = s.api.get(&chunk(0), &s.secret, s.worker).await;
    assert_eq!((a.status, a.code()), (403, Some(Code::Forbidden)), "{}", a.body);
    let want = format!("artifact {sha} belongs to no approved, active run");
    assert_eq!(a.body["message"], want.as_str());
    let a = s.api.get(&list, &s.secret, s.worker).await;
    assert_eq!((a.status, a.body.clone()), (200, json!({"artifacts": []})), "{}", a.body);
    // Named by the active run: listed, its chunk read, a chunk past the last one 404.
    old::run_artifacts(&db, s.run, std::slice::from_ref(&sha)).await.unwrap();
    let a = s.api.get(&list, &s.secret, s.worker).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["artifacts"][0]["sha"], sha.as_str(), "{}", a.body);
    assert_eq!(a.body["artifacts"].as_array().map(Vec::len), Some(1), "{}", a.body);
    let a = s.api.get(&chunk(0), &s.secret, s.worker).await;
    assert_eq!((a.status, a.body.as_str()), (200, Some("an engine's bytes")));
    let a = s.api.get(&chunk(1), &s.secret, s.worker).await;
    assert_eq!((a.status, a.code()), (404, Some(Code::NotFound)), "{}", a.body);
    assert_eq!(a.body["message"], format!("artifact {sha} has no chunk 1").as_str());
    // The run cancelled: nothing to read any more.
    old::cancel(&db, s.run).await.unwrap();
    let a = s.api.get(&list, &s.secret, s.worker).await;
    assert_eq!((a.status, a.body.clone()), (200, json!({"artifacts": []})), "{}", a.body);
    let a = s.api.get(&chunk(0), &s.secret, s.worker).await;
    assert_eq!((a.status, a.code()), (403, Some(Code::Forbidden)), "{}", a.body);
}

/// The rows a refused report must leave as they were: the pairs, the games, the tallies and
/// a tuning run's theta and steps.
fn reported(pg: &TempPg) -> String {
    pg.psql(
        "SELECT (SELECT json_agg(p ORDER BY p.run_id, p.seq) FROM pairs p)::text \
             || (SELECT count(*) FROM games)::text \
             || coalesce((SELECT json_agg(t ORDER BY t.run_id, t.pairing, t.worker_id) \
                          FROM tallies t)::text, '') \
             || coalesce((SELECT json_agg(s) FROM tune_state s)::text, '') \
             || (SELECT count(*) FROM tune_steps)::text",
    )
}

/// A report is the server's own statement, the records read in Rust: a wrong secret is 401;
/// records of another pair, of another game, between other engines, with a result that is not
/// one, a `first_white` that is not a boolean, a `\u0000` or no termination are refused 422
/// with the words `fleet_report` raised them with (each checked against the function itself on
/// the same records, which raised them with nothing written), and nothing is written: no game,
/// the pair still leased, the tallies as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_with_a_wrong_secret_or_records_not_the_pairs_writes_nothing() {
    let s = setup("api-report-records", 4).await;
    let db = crate::common::db(&s.pg).await;
    let w = queue::WorkerId::new(s.worker, s.secret.clone(), String::new());
    // A first pair stored, so that the worker has a tallies row to leave alone.
    let c = s.claim().await;
    let a = s.api.post("/report", &s.secret, Some(s.worker), s.report_body(&c)).await;
    assert_eq!(a.body["outcome"], "stored", "{}", a.body);
    let c = s.claim().await;
    let before = reported(&s.pg);
    // Today: SELECT * FROM fleet_report(w, 'not-the-secret', ...) raises 'not registered with
    // a valid key'.
    let a = s.api.post("/report", "not-the-secret", Some(s.worker), s.report_body(&c)).await;
    assert_eq!((a.status, a.code()), (401, Some(Code::Unauthorized)), "{}", a.body);
    assert_eq!(reported(&s.pg), before, "a report with a wrong secret wrote something");
    let n = c.pair + 1;
    let bad: Vec<(usize, &str, Value, String)> = vec![
        (0, "pair", json!(c.pair + 1), format!("game 1 of the report is not game 1 of pair 0/{n}")),
        (0, "pairing", json!("1"), format!("game 1 of the report is not game 1 of pair 0/{n}")),
        (1, "game", json!(0), format!("game 2 of the report is not game 2 of pair 0/{n}")),
        (
            0,
            "white",
            json!("X"),
            "game 1 of the report is not played by the pairing's engines".into(),
        ),
        (
            1,
            "black",
            Value::Null,
            "game 2 of the report is not played by the pairing's engines".into(),
        ),
        // Game 1 says the first engine had Black: its White and Black are the wrong way round.
        (
            0,
            "first_white",
            json!("no"),
            "game 1 of the report is not played by the pairing's engines".into(),
        ),
        (
            1,
            "first_white",
            json!("maybe"),
            "invalid input syntax for type boolean: \"maybe\"".into(),
        ),
        (1, "result", json!("1-1"), "a game's result 1-1 is not 1-0, 0-1 or 1/2-1/2".into()),
        (0, "result", json!(1), "a game's result 1 is not 1-0, 0-1 or 1/2-1/2".into()),
        (0, "result", Value::Null, "a game's result <NULL> is not 1-0, 0-1 or 1/2-1/2".into()),
        (1, "moves", json!(["e4\u{0}"]), "unsupported Unicode escape sequence".into()),
    ];
    for (game, field, value, want) in bad {
        let mut body = s.report_body(&c);
        body["records"][game][field] = value.clone();
        let a = s.api.post("/report", &s.secret, Some(s.worker), body.clone()).await;
        let what = format!("game {game}'s {field} = {value}");
        assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{what}: {}", a.body);
        assert_eq!(a.body["message"], want.as_str(), "{what}");
        assert_eq!(reported(&s.pg), before, "{what}: a refused report wrote something");
        // The function, on the same records: the same words, nothing written.
        let g: [Value; 2] = serde_json::from_value(body["records"].clone()).unwrap();
        let e = crate::common::old::report(&db, &w, &crate::common::pair_report(&c, &g), false)
            .await
            .unwrap_err();
        let old = e.downcast_ref::<tokio_postgres::Error>().and_then(|e| e.as_db_error());
        assert_eq!(old.map(|d| d.message()), Some(want.as_str()), "{what}: {e:#}");
        assert_eq!(reported(&s.pg), before);
    }
    // A record with no termination: the function failed on the tallies' NOT NULL; the server
    // says why.
    let mut body = s.report_body(&c);
    body["records"][1].as_object_mut().unwrap().remove("termination");
    let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
    assert_eq!((a.status, a.code()), (422, Some(Code::Invalid)), "{}", a.body);
    assert_eq!(a.body["message"], "game 2 of the report has no termination");
    assert_eq!(reported(&s.pg), before);
    // The same pair with its own records: stored. A first_white the function read as true.
    let mut body = s.report_body(&c);
    body["records"][0]["first_white"] = json!(" Tr ");
    let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
    assert_eq!(a.body["outcome"], "stored", "{}", a.body);
    assert_eq!(s.pg.psql("SELECT count(*) FROM games"), "4");
}

/// The counts and `open` a stored report answers are what a fresh read of the database gives
/// after it (the answer's statement sees neither its own writes nor the pair done): this pair
/// counted, for the reported pairing or every one (`all`), and the run open while another pair
/// is leased, closed after the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reports_counts_and_open_are_the_databases_after_it() {
    let s = setup("api-report-counts", 1).await;
    let db = crate::common::db(&s.pg).await;
    s.pg.psql(&format!("UPDATE runs SET state = 'complete' WHERE id = {}", s.run));
    let engines = [("A", "B"), ("A", "C")];
    let (run, _) = crate::common::new_run_of(&db, "sweep", &engines, 2, json!({})).await;
    // Every pair leased first: none pending, so only the other leases keep the run open.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(s.claim().await);
    }
    assert!(held.iter().all(|c| c.run_id == run));
    // Results (White's; the first engine has Black in game 1) that fill a different bin each
    // time: WW, LL, LD, WD.
    let results = [["1-0", "0-1"], ["0-1", "1-0"], ["1/2-1/2", "1-0"], ["1-0", "1/2-1/2"]];
    for (i, c) in held.iter().enumerate() {
        let all = i % 2 == 1;
        let e = engines[c.pairing as usize];
        let body = json!({
            "pair": {"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token},
            "records": [record(c, 0, results[i][0], e), record(c, 1, results[i][1], e)],
            "all": all,
        });
        let a = s.api.post("/report", &s.secret, Some(s.worker), body).await;
        let answer: api::ReportAnswer = serde_json::from_value(a.body.clone()).unwrap();
        let queue::Reported::Stored { counts, open, .. } = answer.into() else {
            panic!("not stored: {}", a.body);
        };
        let only = (!all).then_some(c.pairing);
        let fresh = queue::pairing_counts(&db, run, only).await.unwrap();
        assert_eq!(counts, fresh, "report {i} (all: {all})");
        assert_eq!(counts.len(), if all { 2 } else { 1 });
        assert_eq!(open, i < 3, "report {i}: open while another pair is leased");
        assert_eq!(open, queue::read::has_open_pairs(&db, run).await.unwrap(), "report {i}");
    }
}

/// A tuning run through the server (its own statements, the SPSA arithmetic in Rust): each
/// pair's iteration is `Spsa::begin_with` of its draws from the theta of its hand-out, logged
/// on the pair; each report moves theta by `Spsa::update` with its result and writes the
/// tune_steps row as `fleet_report` wrote it, also when the reports come at once (each then
/// moves the theta the one before left). Every number is compared as PostgreSQL reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tuning_runs_iterations_and_reports_are_the_rust_spsa() {
    use runner::tune::params::TuneParam;
    use runner::tune::spsa::{Iteration, Spsa};
    let s = setup("api-tune", 1).await;
    let db = crate::common::db(&s.pg).await;
    s.pg.psql(&format!("UPDATE runs SET state = 'complete' WHERE id = {}", s.run));
    let p = |name: &str, start, min, max, c_end| TuneParam {
        name: name.into(),
        start,
        min,
        max,
        c_end,
        r_end: 0.002,
    };
    // X starts at its max: its plus side is clamped. Y is an integer option.
    let spsa = Spsa {
        params: vec![
            p("X", 100.0, 0.0, 100.0, 8.0),
            p("Y", 37.3, 0.0, 60.0, 3.0),
            p("Z", 0.5, 0.0, 1.0, 0.05),
        ],
        integer: vec![false, true, false],
        iterations: 20,
        big_a: 2.0,
        seed: 5,
    };
    let pairs = 6;
    let draws: Vec<Value> =
        (0..pairs).map(|k| serde_json::to_value(spsa.draws(k as u64)).unwrap()).collect();
    let labels = vec!["tune".to_string()];
    let names = vec![("A".to_string(), "B".to_string())];
    let jobs: Vec<(i32, i32, i32)> = (0..pairs).map(|k| (0, k, 0)).collect();
    let theta = json!(spsa.start_theta());
    let judge = json!({"spsa": {"params": spsa.judge_params()}});
    let run = queue::NewRun {
        kind: "tune",
        submission: &json!({"test": true}),
        plan_hash: "h",
        judge: &judge,
        labels: &labels,
        engines: &names,
        jobs: &jobs,
        theta: Some(&theta),
        draws: &draws,
        refusal_limit: 3,
    };
    let (run, _) = old::insert_run(&db, &run).await.unwrap();
    let floats = |sql: String| {
        let db = &db;
        async move {
            let row = db.query_one(&sql, &[]).await.unwrap();
            row.get::<_, Vec<f64>>(0)
        }
    };
    let array = |json: &str| {
        format!(
            "ARRAY(SELECT e::float8 FROM jsonb_array_elements_text({json}) WITH ORDINALITY a (e, o) ORDER BY o)"
        )
    };
    // The iteration as stored on pair `k`, every number read by PostgreSQL.
    let pg = &s.pg;
    let stored = |k: i32| {
        let (array, floats) = (&array, &floats);
        async move {
            let of = |f: &str| {
                format!(
                    "SELECT {} FROM pairs WHERE run_id = {run} AND pair = {k}",
                    array(&format!("spsa->'{f}'"))
                )
            };
            let keys = pg.psql(&format!(
                "SELECT string_agg(x, ',' ORDER BY x) FROM pairs, jsonb_object_keys(spsa) x \
                 WHERE run_id = {run} AND pair = {k}"
            ));
            assert_eq!(keys, "a_k,c_k,delta,k,minus,plus,theta");
            Iteration {
                k: pg
                    .psql(&format!(
                        "SELECT spsa->'k' FROM pairs WHERE run_id = {run} AND pair = {k}"
                    ))
                    .parse()
                    .unwrap(),
                theta: floats(of("theta")).await,
                delta: floats(of("delta")).await.iter().map(|d| *d as i8).collect(),
                plus: floats(of("plus")).await,
                minus: floats(of("minus")).await,
                c_k: floats(of("c_k")).await,
                a_k: floats(of("a_k")).await,
            }
        }
    };
    let iteration = |c: &queue::Claim| {
        let body = json!({"pair": {"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token}});
        s.api.post("/iteration", &s.secret, Some(s.worker), body)
    };
    let theta_now =
        || floats(format!("SELECT {} FROM tune_state WHERE run_id = {run}", array("theta")));
    // Three pairs handed out at once: each iteration starts from the start theta.
    let mut held = Vec::new();
    for _ in 0..3 {
        let c = s.claim().await;
        assert_eq!(c.run_id, run);
        let a = iteration(&c).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let want = spsa.begin_with(&spsa.draws(c.pair as u64), &spsa.start_theta());
        assert_eq!(stored(c.pair).await, want, "pair {}", c.pair);
        // Answered as stored.
        let logged = s
            .pg
            .psql(&format!("SELECT spsa FROM pairs WHERE run_id = {run} AND pair = {}", c.pair));
        assert_eq!(a.body["iteration"], serde_json::from_str::<Value>(&logged).unwrap());
        // Asked again: the same, logged.
        let again = iteration(&c).await;
        assert_eq!(again.body, a.body);
        held.push((c, want));
    }
    assert_eq!(s.pg.psql(&format!("SELECT next_k FROM tune_state WHERE run_id = {run}")), "3");
    // Reported at once: each moves the theta the report before left, in the order of
    // tune_steps.
    let results = [["1-0", "1/2-1/2"], ["0-1", "1-0"], ["1/2-1/2", "1-0"]];
    let report = |i: usize| {
        let c = &held[i].0;
        let body = json!({
            "pair": {"run": c.run_id, "pairing": c.pairing, "pair": c.pair, "token": c.token},
            "records": [record(c, 0, results[i][0], ("A", "B")), record(c, 1, results[i][1], ("A", "B"))],
            "all": false,
        });
        s.api.post("/report", &s.secret, Some(s.worker), body)
    };
    let (a, b, c) = tokio::join!(report(0), report(1), report(2));
    for x in [a, b, c] {
        assert_eq!(x.body["outcome"], "stored", "{}", x.body);
    }
    // The first engine's pair score minus 2 (its half points: 2 + 1, 0 + 0, 1 + 0; in game 1
    // it has Black).
    let result = |k: i32| {
        let i = held.iter().position(|h| h.0.pair == k).unwrap();
        [1.0, -2.0, -1.0][i]
    };
    let mut theta = spsa.start_theta();
    for ord in 0..3 {
        let k: i32 =
            s.pg.psql(&format!("SELECT k FROM tune_steps WHERE run_id = {run} AND ord = {ord}"))
                .parse()
                .unwrap();
        let it = &held.iter().find(|h| h.0.pair == k).unwrap().1;
        spsa.update(&mut theta, it, result(k));
        let step = |f: &str| {
            format!(
                "SELECT {} FROM tune_steps WHERE run_id = {run} AND ord = {ord}",
                array(&format!("step->'{f}'"))
            )
        };
        assert_eq!(floats(step("theta")).await, theta, "step {ord}");
        assert_eq!(floats(step("c_k")).await, it.c_k);
        assert_eq!(floats(step("a_k")).await, it.a_k);
        assert_eq!(
            s.pg.psql(&format!(
                "SELECT concat_ws(' ', step->'k', step->'games', (step->>'result')::float8, \
                        (SELECT string_agg(x, ',' ORDER BY x) FROM jsonb_object_keys(step) x)) \
                 FROM tune_steps WHERE run_id = {run} AND ord = {ord}"
            )),
            format!("{k} 0 {} a_k,c_k,games,k,result,theta", result(k))
        );
    }
    assert_eq!(theta_now().await, theta);
    assert_eq!(s.pg.psql(&format!("SELECT applied FROM tune_state WHERE run_id = {run}")), "3");
    // The next pair starts from the moved theta.
    let c = s.claim().await;
    iteration(&c).await;
    assert_eq!(stored(c.pair).await, spsa.begin_with(&spsa.draws(c.pair as u64), &theta));
    // A lease not held: no iteration, nothing written.
    let mut lost = c.clone();
    lost.token += 1000;
    let a = iteration(&lost).await;
    assert_eq!((a.status, &a.body["iteration"]), (200, &Value::Null), "{}", a.body);
}

/// A claim of `n` pairs by worker `id` (secret `secret`) that plays `current`, of run `only`
/// when given, never of `skip`, with `tune_in_flight`: its status and the pairs it leased.
async fn claim_as(
    s: &Setup,
    (id, secret): (i64, &str),
    only: Option<i64>,
    skip: &[i64],
    current: Option<i64>,
    n: i64,
    tune_in_flight: i64,
) -> Vec<queue::Claim> {
    let body = json!({"only": only, "skip": skip, "current": current, "n": n, "lease_secs": 30,
                      "tune_in_flight": tune_in_flight});
    let a = s.api.post("/claim", secret, Some(id), body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let c: Vec<api::Claim> = serde_json::from_value(a.body["claims"].clone()).unwrap();
    c.into_iter().map(Into::into).collect()
}

/// A claim never leases a pair of a run the worker's key refused, of a run that is pending
/// (not approved), cancelled or decided, nor of a stopped pairing, not even a pair whose
/// lease expired; of a run it may play it takes pending pairs and expired leases in schedule
/// order, and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_leases_only_open_pairs_of_active_pairings_of_runs_it_may_play() {
    // Checked on the old path with SELECT * FROM fleet_claim(w, secret, NULL, '{}', 50, 30, 16)
    // over the same runs: the same two pairs of the last run.
    let s = setup("api-claim-what", 4).await;
    let db = crate::common::db(&s.pg).await;
    let refused = s.run;
    let a = s
        .api
        .post(
            "/refuse",
            &s.secret,
            Some(s.worker),
            json!({"run": refused, "reason": "engine A: cannot start", "tokens": []}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let pending = new_run(&db, 4, json!({})).await;
    let cancelled = new_run(&db, 4, json!({})).await;
    let decided = new_run(&db, 4, json!({})).await;
    let engines = [("A", "B"), ("A", "C")];
    let (stopped, _) = crate::common::new_run_of(&db, "sweep", &engines, 4, json!({})).await;
    s.pg.psql(&format!("UPDATE runs SET state = 'pending' WHERE id = {pending}"));
    old::cancel(&db, cancelled).await.unwrap();
    s.pg.psql(&format!("UPDATE runs SET state = 'decided' WHERE id = {decided}"));
    // Pairing 0 of the sweep stopped (its pairs left as they were, to see the claim check it).
    s.pg.psql(&format!(
        "UPDATE pairings SET active = false WHERE run_id = {stopped} AND pairing = 0"
    ));
    // An expired lease in every run: taken again only from a run and pairing that are open.
    s.pg.psql(
        "UPDATE pairs SET state = 'leased', token = nextval('lease_tokens'), attempts = 1, \
         lease_until = now() - interval '1 minute', claimed_at = now() - interval '2 minutes' \
         WHERE seq = 1",
    );
    let me = (s.worker, s.secret.as_str());
    let got = claim_as(&s, me, None, &[], None, 50, 16).await;
    let runs: Vec<(i64, i32, i32)> = got.iter().map(|c| (c.run_id, c.pairing, c.seq)).collect();
    // The sweep's pairs are pairing-major in schedule order: pairing 1 holds seq 1, 3, 5, 7.
    assert_eq!(runs, [(stopped, 1, 1), (stopped, 1, 3), (stopped, 1, 5), (stopped, 1, 7)]);
    assert_eq!(got[0].attempts, 2, "the expired lease was taken over");
    // Nothing more, even by name.
    for run in [refused, pending, cancelled, decided, stopped] {
        assert!(claim_as(&s, me, Some(run), &[], None, 50, 16).await.is_empty(), "run {run}");
    }
    // The active pairing's pairs only were touched.
    assert_eq!(
        s.pg.psql(&format!(
            "SELECT count(*) FROM pairs WHERE worker_id = {} AND lease_until > now()",
            s.worker
        )),
        "4"
    );
}

/// Claims at the same instant, of workers of the same key and of another, never get the same
/// pair: every pair leased once, under a token of its own, to the worker that was told so,
/// pending pairs and expired leases alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_at_once_never_lease_a_pair_twice() {
    // On the old path, the same claims as SELECT * FROM fleet_claim(...) from 8 connections.
    let s = setup("api-claim-race", 150).await;
    let db = crate::common::db(&s.pg).await;
    let other = new_run(&db, 150, json!({})).await;
    // A third of the pairs of each run under a lease that expired.
    s.pg.psql(
        "UPDATE pairs SET state = 'leased', token = nextval('lease_tokens'), attempts = 1, \
         lease_until = now() - interval '1 minute' WHERE seq % 3 = 0",
    );
    let key2 = old::key_add(&db, "box2").await.unwrap();
    let mut workers = vec![(s.worker, s.secret.clone())];
    for i in 0..5 {
        workers.push(s.another(if i % 2 == 0 { &s.key } else { &key2 }).await);
    }
    let api = serve(&s.pg, 8).await;
    let api = Api::new(api);
    let claim = |w: (i64, String), n: i64, current: Option<i64>| {
        let api = &api;
        async move {
            let body = json!({"only": null, "skip": [], "current": current, "n": n,
                              "lease_secs": 30, "tune_in_flight": 16});
            let a = api.post("/claim", &w.1, Some(w.0), body).await;
            assert_eq!(a.status, 200, "{}", a.body);
            let c: Vec<api::Claim> = serde_json::from_value(a.body["claims"].clone()).unwrap();
            c.into_iter().map(|c| (w.0, queue::Claim::from(c))).collect::<Vec<_>>()
        }
    };
    // Rounds of 18 claims at once (3 per worker) until a round gets nothing: a claim may come
    // back short while others hold pairs it would have taken.
    let mut all = Vec::new();
    for round in 0..100 {
        let mut batch = Vec::new();
        for (i, w) in workers.iter().enumerate() {
            for k in 0..3 {
                let current = [None, Some(s.run), Some(other)][(i + k + round) % 3];
                batch.push(claim(w.clone(), 1 + (i + k) as i64 % 7, current));
            }
        }
        let before = all.len();
        for got in futures_util::future::join_all(batch).await {
            all.extend(got);
        }
        if all.len() == before {
            break;
        }
    }
    // Every pair of both runs went out, once.
    assert_eq!(all.len(), 300, "every pair handed out");
    let mut pairs: Vec<(i64, i32)> = all.iter().map(|(_, c)| (c.run_id, c.seq)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), all.len(), "a pair was leased twice");
    let mut tokens: Vec<i64> = all.iter().map(|(_, c)| c.token).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), all.len(), "a token was handed out twice");
    // Each lease as its worker was told.
    let held = s.pg.psql(
        "SELECT string_agg(concat_ws(':', run_id, seq, worker_id, token), ',' \
                           ORDER BY run_id, seq) FROM pairs WHERE state = 'leased' \
                                                              AND lease_until > now()",
    );
    let mut told: Vec<(i64, i32, i64, i64)> =
        all.iter().map(|(w, c)| (c.run_id, c.seq, *w, c.token)).collect();
    told.sort_unstable();
    let told: Vec<String> = told.iter().map(|(r, q, w, t)| format!("{r}:{q}:{w}:{t}")).collect();
    assert_eq!(held, told.join(","));
    // Taken over leases count a second attempt.
    assert!(all.iter().all(|(_, c)| c.attempts == if c.seq % 3 == 0 { 2 } else { 1 }));
}

/// A tuning run hands out at most `tune_in_flight` iterations beyond those applied, also to
/// claims at the same instant, and always the pairs whose iteration is logged already.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tuning_run_hands_out_at_most_tune_in_flight_beyond_applied() {
    // On the old path: SELECT * FROM fleet_claim(w, secret, NULL, '{}', 50, 30, 3) with
    // tune_state.applied = 5 hands out seq 5 to 7 and the logged pair 20.
    let s = setup("api-claim-tune", 30).await;
    s.pg.psql(&format!(
        "INSERT INTO tune_state (run_id, theta, next_k, applied) VALUES ({0}, '{{}}', 5, 5); \
         UPDATE pairs SET state = 'done' WHERE run_id = {0} AND seq < 5; \
         UPDATE pairs SET spsa = '{{\"k\": 20}}' WHERE run_id = {0} AND seq = 20",
        s.run
    ));
    let (w2, s2) = s.another(&s.key).await;
    let me = (s.worker, s.secret.as_str());
    let (a, b) = tokio::join!(
        claim_as(&s, me, None, &[], None, 50, 3),
        claim_as(&s, (w2, s2.as_str()), None, &[], None, 50, 3)
    );
    let mut seqs: Vec<i32> = a.iter().chain(&b).map(|c| c.seq).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, [5, 6, 7, 20]);
    assert!(claim_as(&s, me, None, &[], None, 50, 3).await.is_empty());
    // One more applied: one more handed out.
    s.pg.psql(&format!("UPDATE tune_state SET applied = 6 WHERE run_id = {}", s.run));
    let c = claim_as(&s, me, None, &[], None, 50, 3).await;
    assert_eq!(c.iter().map(|c| c.seq).collect::<Vec<_>>(), [8]);
    // tune_in_flight 1: iterations one after another.
    s.pg.psql(&format!("UPDATE tune_state SET applied = 9 WHERE run_id = {}", s.run));
    let c = claim_as(&s, me, None, &[], None, 50, 1).await;
    assert_eq!(c.iter().map(|c| c.seq).collect::<Vec<_>>(), [9]);
}

/// The order a claim walks the runs in is the one `fleet_claim_order` (schema version 5, still
/// in the schema) gives, on fixed fleets: priorities, owners' shares of throughput, live leases
/// (an expired one does not count), the worker's own run kept while within its share, turns by
/// the newest claim, refusals, `skip` and `only`. Each run has one pair to hand out (or two,
/// with an expired lease), so a claim of as many pairs as runs takes one from each run it tries
/// and the order is read from the tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_walks_the_runs_in_the_order_of_fleet_claim_order() {
    let s = setup("api-claim-order", 1).await;
    let db = crate::common::db(&s.pg).await;
    let (w2, _) = s.another(&s.key).await;
    let key = s.pg.psql(&format!("SELECT key_id FROM workers WHERE id = {}", s.worker));
    // (owner, priority, throughput, live leases of another worker, seconds since its newest
    // claim: None never claimed). s.run is the first, alice's.
    let fleet: [(&str, i32, i32, i64, Option<i64>); 9] = [
        ("alice", 0, 100, 1, Some(50)),
        ("alice", 0, 200, 0, Some(40)),
        ("bob", 0, 100, 1, None),
        ("bob", 0, 100, 0, Some(30)),
        ("carol", 0, 50, 0, Some(30)),
        ("dave", 0, 100, 2, Some(10)),
        ("erin", 0, 100, 0, None),
        ("erin", -1, 100, 0, Some(5)),
        ("frank", 1, 100, 0, Some(60)),
    ];
    let mut runs = vec![s.run];
    for _ in 1..fleet.len() {
        runs.push(new_run(&db, 1, json!({})).await);
    }
    for (run, (owner, priority, throughput, leases, served)) in runs.iter().zip(fleet) {
        s.pg.psql(&format!(
            "UPDATE runs SET owner = '{owner}', priority = {priority}, throughput = {throughput} \
              WHERE id = {run}"
        ));
        // The leases and the newest claim, on pairs added past the one to hand out.
        s.pg.psql(&format!(
            "INSERT INTO pairs (run_id, seq, pairing, pair, opening, state, token, worker_id, \
                                lease_until, claimed_at) \
             SELECT {run}, i, 0, i, 0, 'leased', nextval('lease_tokens'), {w2}, \
                    now() + interval '1 hour', now() - interval '1 hour' \
               FROM generate_series(1, {leases}) i"
        ));
        if let Some(secs) = served {
            s.pg.psql(&format!(
                "INSERT INTO pairs (run_id, seq, pairing, pair, opening, state, claimed_at) \
                 VALUES ({run}, 100, 0, 100, 0, 'done', now() - interval '{secs} seconds')"
            ));
        }
    }
    // Dave's run also holds an expired lease (not work in flight; handed out again).
    s.pg.psql(&format!(
        "INSERT INTO pairs (run_id, seq, pairing, pair, opening, state, token, lease_until, \
                            claimed_at) \
         VALUES ({}, 50, 0, 50, 0, 'leased', nextval('lease_tokens'), now() - interval '1 second', \
                 now() - interval '2 hours')",
        runs[5]
    ));
    let me = (s.worker, s.secret.as_str());
    // The old order of the runs a claim of `n` by this worker playing `current` tries.
    let old = |only: Option<i64>, skip: &[i64], current: Option<i64>, n: i64| {
        let opt = |r: Option<i64>| r.map_or("NULL".to_string(), |r| r.to_string());
        let skip: Vec<String> = skip.iter().map(i64::to_string).collect();
        let order = s.pg.psql(&format!(
            "SELECT string_agg(id::text, ',' ORDER BY ord) FROM fleet_claim_order({key}, {}, \
             '{{{}}}', {}, {n}) WITH ORDINALITY AS o(id, priority, owner, weight, leased, \
             after, sticky, ord)",
            opt(only),
            skip.join(","),
            opt(current)
        ));
        order.split(',').filter(|x| !x.is_empty()).map(|x| x.parse().unwrap()).collect::<Vec<i64>>()
    };
    // One claim: the runs it took pairs from, in the order it leased them, which must be the
    // old order's (all of it when the claim came back short: every run was tried).
    let check = async |case: &str, only: Option<i64>, skip: &[i64], current: Option<i64>, n| {
        let want = old(only, skip, current, n);
        let got = claim_as(&s, me, only, skip, current, n, 16).await;
        let mut by_token: Vec<(i64, i64)> = got.iter().map(|c| (c.token, c.run_id)).collect();
        by_token.sort_unstable();
        let mut walked: Vec<i64> = Vec::new();
        for (_, run) in by_token {
            if walked.last() != Some(&run) {
                walked.push(run);
            }
        }
        assert!(!walked.is_empty(), "{case}: nothing claimed");
        assert_eq!(walked, want[..walked.len()], "{case}: runs {runs:?}");
        if (got.len() as i64) < n {
            assert_eq!(walked, want, "{case}: every run tried");
        }
        // Given back (their newest claim is now: the turns move on).
        let tokens: Vec<i64> = got.iter().map(|c| c.token).collect();
        let a = s.api.post("/release", &s.secret, Some(s.worker), json!({"tokens": tokens})).await;
        assert_eq!(a.body["released"], json!(got.len()), "{}", a.body);
        walked
    };
    // Frank's urgent run first; then the runs of weight 100 with no pair in flight, the one
    // never claimed (erin's) before alice's second (200 of her 300); erin's run at -1 last.
    let first = check("first", None, &[], None, 1).await;
    assert_eq!(first, [runs[8]]);
    let all = check("all", None, &[], None, 10).await;
    assert_eq!((&all[..3], all[all.len() - 1]), (&[runs[8], runs[6], runs[1]][..], runs[7]));
    check("turns", None, &[], None, 10).await;
    check("bob's", None, &[runs[8]], Some(runs[3]), 1).await;
    check("dave's", None, &[], Some(runs[5]), 10).await;
    check("skip", None, &[runs[8], runs[6]], Some(runs[1]), 10).await;
    check("skip, 3", None, &[runs[8]], None, 3).await;
    assert_eq!(check("only", Some(runs[4]), &[], None, 10).await, [runs[4]]);
    // No run of level 0 starved: leases of the other worker in proportion to the weights, 4
    // per 50. A worker stays on its run while within 25 % of the fair ratio.
    let weights = [50, 100, 50, 50, 50, 100, 100];
    for (i, w) in weights.iter().enumerate() {
        let more = 4 * w / 50 - fleet[i].3;
        s.pg.psql(&format!(
            "INSERT INTO pairs (run_id, seq, pairing, pair, opening, state, token, worker_id, \
                                lease_until, claimed_at) \
             SELECT {0}, i, 0, i, 0, 'leased', nextval('lease_tokens'), {w2}, \
                    now() + interval '1 hour', now() - interval '1 hour' \
               FROM generate_series(200, 199 + {more}) i",
            runs[i]
        ));
    }
    assert_eq!(check("sticky, dave", None, &[runs[8]], Some(runs[5]), 1).await, [runs[5]]);
    assert_eq!(check("sticky, alice", None, &[runs[8]], Some(runs[0]), 1).await, [runs[0]]);
    check("not sticky past the band", None, &[runs[8]], Some(runs[5]), 3).await;
    check("sticky, all", None, &[runs[8]], Some(runs[1]), 10).await;
    // The key refuses bob's second run (as the server's /refuse writes it): never tried again.
    s.pg.psql(&format!(
        "INSERT INTO refusals (run_id, key_id, worker_id, reason) \
         VALUES ({}, {key}, {}, 'engine B: not found')",
        runs[3], s.worker
    ));
    let all = check("refused", None, &[], Some(runs[3]), 10).await;
    assert!(!all.contains(&runs[3]), "{all:?}");
}
