//! The work queue: every SQL statement of the fleet is in this file, each with bound parameters
//! only. A unit of work is one game pair of a run's schedule (same opening, colours swapped).
//!
//! - [`claim`] leases pending pairs (of active pairings of active runs), or pairs whose lease
//!   expired, in schedule order, `FOR UPDATE SKIP LOCKED`, each under a new fencing token.
//! - [`heartbeat`] renews the leases a worker still holds and returns the tokens that lost
//!   theirs (run decided or cancelled, lease expired and taken over): their games are stopped.
//! - [`report`] stores a finished pair in one transaction: the pair is marked done only if it
//!   is still leased under the reporter's token (else nothing is written), both games are
//!   inserted, the pairing's counts grow, the run's judge (SPRT, racing) is asked with the new
//!   counts, pairings it stops skip their pending pairs, and the run is marked decided or
//!   complete; for a tuning run the iteration's result moves theta in the same transaction.
//!
//! Locks are always taken in the order pairs -> tallies -> pairings -> runs -> tune_state, so
//! reports never deadlock each other. Counts live in one row per (pairing, worker): reports of
//! different workers never wait on a shared row, except the rare writes of a decision.
//!
//! The frequent statements (claim, report, heartbeat) run on a [`Db`]: a [`Conn`] prepares each
//! of them once per connection (named prepared statements: no parsing and, with the generic
//! plans [`Conn::open`] asks for, no planning per call), a plain `Client`, or a `Conn` made with
//! prepared statements off (`prepared_statements=off` in the connection string, for a
//! transaction pooler that does not keep them, such as PgBouncer before 1.21), sends them
//! unnamed with their parameters' types (`query_typed`). Every other statement is sent
//! unnamed. A report is three round trips: BEGIN, one statement that marks the pair done,
//! stores its games and counts and reads the pairing's counts and whether the run has open
//! pairs left, then COMMIT.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, GenericClient, Row, Statement};

/// A bound parameter and its PostgreSQL type.
type Param<'a> = (&'a (dyn ToSql + Sync), Type);

/// The statements prepared on one connection, by their SQL.
type Prepared = Mutex<HashMap<&'static str, Statement>>;

/// A connection with its cache of prepared statements (dropped with it: a new connection, after
/// a restart of the server for instance, prepares them again).
pub struct Conn {
    client: Client,
    prepared: Option<Prepared>,
}

impl Conn {
    /// `prepare`: prepare the frequent statements once (direct connections, or a pooler that
    /// keeps prepared statements); false sends every statement unnamed.
    pub fn new(client: Client, prepare: bool) -> Conn {
        Conn { client, prepared: prepare.then(|| Mutex::new(HashMap::new())) }
    }

    /// [`Conn::new`] for a worker: with prepared statements, the session also asks PostgreSQL
    /// for generic plans (`plan_cache_mode = force_generic_plan`). Left to itself PostgreSQL
    /// plans the claim anew at every call (its cost model prefers the custom plans, though the
    /// plan is the same index scan), which was 0.65 ms of the server's 1.9 ms of CPU per pair
    /// at 10 workers (docs/fleet.md, "The goal, on an idle machine"). Every statement a worker
    /// sends is shaped so that its plan does not depend on its parameters (the claim and the
    /// open-pair checks read through the partial indexes per run). Without prepared statements
    /// (a transaction pooler) nothing is set: a setting would stay on a shared server
    /// connection.
    pub async fn open(client: Client, prepare: bool) -> Result<Conn, tokio_postgres::Error> {
        if prepare {
            client.batch_execute("SET plan_cache_mode = force_generic_plan").await?;
        }
        Ok(Conn::new(client, prepare))
    }
}

impl Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// What the frequent statements run on: a [`Conn`] (prepared per connection, if it was made
/// so) or a plain `Client` (unnamed statements).
pub trait Db: Send + Sync {
    fn client(&self) -> &Client;
    fn prepared(&self) -> Option<&Prepared>;
    /// The client (to open a transaction on) and the cache, borrowed together.
    fn parts(&mut self) -> (&mut Client, Option<&Prepared>);
}

impl Db for Client {
    fn client(&self) -> &Client {
        self
    }
    fn prepared(&self) -> Option<&Prepared> {
        None
    }
    fn parts(&mut self) -> (&mut Client, Option<&Prepared>) {
        (self, None)
    }
}

impl Db for Conn {
    fn client(&self) -> &Client {
        &self.client
    }
    fn prepared(&self) -> Option<&Prepared> {
        self.prepared.as_ref()
    }
    fn parts(&mut self) -> (&mut Client, Option<&Prepared>) {
        (&mut self.client, self.prepared.as_ref())
    }
}

/// Runs one of the frequent statements: prepared once on this connection when `cache` is
/// given (`db` is the connection or a transaction on it), else sent unnamed.
async fn hot(
    db: &impl GenericClient,
    cache: Option<&Prepared>,
    sql: &'static str,
    params: &[Param<'_>],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let Some(cache) = cache else { return db.query_typed(sql, params).await };
    let known = cache.lock().unwrap_or_else(|e| e.into_inner()).get(sql).cloned();
    let stmt = match known {
        Some(s) => s,
        None => {
            let types: Vec<Type> = params.iter().map(|p| p.1.clone()).collect();
            let s = db.prepare_typed(sql, &types).await?;
            cache.lock().unwrap_or_else(|e| e.into_inner()).insert(sql, s.clone());
            s
        }
    };
    let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.0).collect();
    db.query(&stmt, &values).await
}

async fn rows(
    db: &impl GenericClient,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    db.query_typed(sql, params).await
}

async fn one(
    db: &impl GenericClient,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Row, tokio_postgres::Error> {
    db.query_typed_one(sql, params).await
}

async fn opt(
    db: &impl GenericClient,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Option<Row>, tokio_postgres::Error> {
    db.query_typed_opt(sql, params).await
}

/// Iterations of a tuning run handed out but not yet applied, at most. Each iteration is played
/// with the theta of its hand-out; with this bound, an iteration's theta misses at most this many
/// earlier results, a lag comparable to a local run at `--concurrency 16`, and small against the
/// hundreds to thousands of iterations of a tuning run.
pub const TUNE_IN_FLIGHT: i64 = 16;

/// A new run: its submission (stored as given), labels of its pairings and its game pairs in
/// schedule order: `(pairing, pair, opening)`.
pub struct NewRun<'a> {
    pub kind: &'a str,
    pub submission: &'a Value,
    pub plan_hash: &'a str,
    pub labels: &'a [String],
    pub jobs: &'a [(i32, i32, i32)],
    /// A tuning run's starting theta.
    pub theta: Option<&'a Value>,
}

/// Stores a run and its schedule; returns its id.
pub async fn insert_run(db: &mut Client, run: &NewRun<'_>) -> Result<i64> {
    let tx = db.transaction().await?;
    let id: i64 = one(
        &tx,
        "INSERT INTO runs (kind, submission, plan_hash) VALUES ($1, $2, $3) RETURNING id",
        &[(&run.kind, Type::TEXT), (run.submission, Type::JSONB), (&run.plan_hash, Type::TEXT)],
    )
    .await
    .context("cannot store the run")?
    .get(0);
    let idx: Vec<i32> = (0..run.labels.len() as i32).collect();
    rows(
        &tx,
        "INSERT INTO pairings (run_id, pairing, label) \
         SELECT $1, p, l FROM unnest($2::int[], $3::text[]) AS t(p, l)",
        &[(&id, Type::INT8), (&idx, Type::INT4_ARRAY), (&run.labels, Type::TEXT_ARRAY)],
    )
    .await?;
    let seq: Vec<i32> = (0..run.jobs.len() as i32).collect();
    let pairing: Vec<i32> = run.jobs.iter().map(|j| j.0).collect();
    let pair: Vec<i32> = run.jobs.iter().map(|j| j.1).collect();
    let opening: Vec<i32> = run.jobs.iter().map(|j| j.2).collect();
    rows(
        &tx,
        "INSERT INTO pairs (run_id, seq, pairing, pair, opening) \
         SELECT $1, s, p, q, o FROM unnest($2::int[], $3::int[], $4::int[], $5::int[]) \
         AS t(s, p, q, o)",
        &[
            (&id, Type::INT8),
            (&seq, Type::INT4_ARRAY),
            (&pairing, Type::INT4_ARRAY),
            (&pair, Type::INT4_ARRAY),
            (&opening, Type::INT4_ARRAY),
        ],
    )
    .await?;
    if let Some(theta) = run.theta {
        rows(
            &tx,
            "INSERT INTO tune_state (run_id, theta) VALUES ($1, $2)",
            &[(&id, Type::INT8), (theta, Type::JSONB)],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// Registers a worker; returns its id.
pub async fn register_worker(
    db: &Client,
    host: &str,
    pid: i32,
    concurrency: i32,
    lease: Duration,
) -> Result<i64> {
    let row = one(
        db,
        "INSERT INTO workers (host, pid, concurrency, lease_secs) VALUES ($1, $2, $3, $4) \
         RETURNING id",
        &[
            (&host, Type::TEXT),
            (&pid, Type::INT4),
            (&concurrency, Type::INT4),
            (&lease.as_secs_f64(), Type::FLOAT8),
        ],
    )
    .await
    .context("cannot register the worker")?;
    Ok(row.get(0))
}

/// Marks a worker stopped (its leases, if any, expire on their own).
pub async fn worker_stopped(db: &Client, worker: i64) -> Result<()> {
    rows(db, "UPDATE workers SET stopped_at = now() WHERE id = $1", &[(&worker, Type::INT8)])
        .await?;
    Ok(())
}

/// A leased game pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub run_id: i64,
    pub seq: i32,
    pub pairing: i32,
    pub pair: i32,
    pub opening: i32,
    /// The fencing token: a report is accepted only under the latest token of the pair.
    pub token: i64,
    /// How many times the pair was handed out, this time included.
    pub attempts: i32,
    /// A tuning iteration's logged values (set when first handed out).
    pub spsa: Option<Value>,
}

/// The claim's statement; `$run` is the condition on the run (`AND r.id = $2`, or nothing
/// when the worker serves every run: two statements, so that each has a plan that fits it).
/// For each active run (a LATERAL subquery per run), pending pairs and expired leases are found
/// through two partial indexes (a pending pair's and a leased pair's), so a claim never walks
/// past the live leases of every other worker; the candidates merge back into schedule order.
/// With the run's id an equality inside each subquery, the plan is an index scan in schedule
/// order whatever the parameters, so the generic plan [`Conn::open`] asks for is as good as a
/// custom one and is made once per connection (with a join on `pairs`, the generic plan, misled
/// by a run filter on a table with one run, scanned and sorted every pending pair). Rows locked by a subquery but
/// cut by the final LIMIT are unlocked when the statement ends.
macro_rules! claim_sql {
    ($run:literal) => {
        concat!(
            "WITH r AS ( \
               SELECT r.id, t.applied FROM runs r \
               LEFT JOIN tune_state t ON t.run_id = r.id \
               WHERE r.state = 'active' ",
            $run,
            " AND NOT (r.id = ANY($3::bigint[]))), \
             pending AS ( \
               SELECT q.* FROM r CROSS JOIN LATERAL ( \
                 SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p \
                 WHERE p.run_id = r.id AND p.state = 'pending' \
                   AND EXISTS (SELECT 1 FROM pairings g \
                     WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active) \
                   AND (r.applied IS NULL OR p.spsa IS NOT NULL OR p.seq < r.applied + $6) \
                 ORDER BY p.seq \
                 LIMIT $4 \
                 FOR UPDATE OF p SKIP LOCKED) q), \
             expired AS ( \
               SELECT q.* FROM r CROSS JOIN LATERAL ( \
                 SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p \
                 WHERE p.run_id = r.id AND p.state = 'leased' AND p.lease_until < now() \
                   AND (r.applied IS NULL OR p.spsa IS NOT NULL OR p.seq < r.applied + $6) \
                 ORDER BY p.seq \
                 LIMIT $4 \
                 FOR UPDATE OF p SKIP LOCKED) q), \
             c AS ( \
               SELECT * FROM pending UNION ALL SELECT * FROM expired \
               ORDER BY run_id, seq LIMIT $4) \
             UPDATE pairs p SET state = 'leased', token = nextval('lease_tokens'), \
               worker_id = $1, lease_until = now() + make_interval(secs => $5), \
               claimed_at = clock_timestamp(), attempts = p.attempts + 1 \
             FROM c WHERE p.run_id = c.run_id AND p.pairing = c.pairing AND p.pair = c.pair \
             RETURNING p.run_id, p.seq, p.pairing, p.pair, p.opening, p.token, p.attempts, \
               p.spsa"
        )
    };
}

/// Leases up to `n` pairs for `worker`: of run `only` when given, never of the runs in `skip`.
pub async fn claim(
    db: &impl Db,
    worker: i64,
    only: Option<i64>,
    skip: &[i64],
    n: i64,
    lease: Duration,
) -> Result<Vec<Claim>> {
    let sql = match only {
        Some(_) => claim_sql!("AND r.id = $2"),
        // $2 (NULL) is declared but not used.
        None => claim_sql!(""),
    };
    let rows = hot(
        db.client(),
        db.prepared(),
        sql,
        &[
            (&worker, Type::INT8),
            (&only, Type::INT8),
            (&skip, Type::INT8_ARRAY),
            (&n, Type::INT8),
            (&lease.as_secs_f64(), Type::FLOAT8),
            (&TUNE_IN_FLIGHT, Type::INT8),
        ],
    )
    .await
    .context("cannot claim work")?;
    let mut out: Vec<Claim> = rows
        .iter()
        .map(|r| Claim {
            run_id: r.get(0),
            seq: r.get(1),
            pairing: r.get(2),
            pair: r.get(3),
            opening: r.get(4),
            token: r.get(5),
            attempts: r.get(6),
            spsa: r.get(7),
        })
        .collect();
    out.sort_by_key(|c| (c.run_id, c.seq));
    Ok(out)
}

/// Gives leased pairs back (a worker that refuses their run, or stops): pending again, with no
/// token, so any worker takes them at once.
pub async fn release(db: &Client, worker: i64, tokens: &[i64]) -> Result<()> {
    rows(
        db,
        "UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL \
         WHERE worker_id = $1 AND state = 'leased' AND token = ANY($2)",
        &[(&worker, Type::INT8), (&tokens, Type::INT8_ARRAY)],
    )
    .await
    .context("cannot give pairs back")?;
    Ok(())
}

/// Renews the leases of `tokens` held by `worker` (and notes the worker alive); returns the
/// tokens whose lease is still valid. A token missing from the answer lost its lease.
pub async fn heartbeat(
    db: &impl Db,
    worker: i64,
    tokens: &[i64],
    lease: Duration,
) -> Result<Vec<i64>> {
    let rows = hot(
        db.client(),
        db.prepared(),
        "WITH w AS (UPDATE workers SET heartbeat_at = now() WHERE id = $1) \
             UPDATE pairs p SET lease_until = now() + make_interval(secs => $3) \
             FROM runs r \
             WHERE r.id = p.run_id AND r.state = 'active' AND p.worker_id = $1 \
               AND p.state = 'leased' AND p.token = ANY($2) \
             RETURNING p.token",
        &[(&worker, Type::INT8), (&tokens, Type::INT8_ARRAY), (&lease.as_secs_f64(), Type::FLOAT8)],
    )
    .await
    .context("heartbeat")?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Counts of one pairing, from its first engine's point of view, summed over workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairingCounts {
    pub pairing: i32,
    pub active: bool,
    /// Stopped by racing (verdict `dropped`): racing leaves it out from then on.
    pub dropped: bool,
    /// LL, LD, DD (or WL), WD, WW.
    pub penta: [i64; 5],
    /// Wins, draws, losses.
    pub wdl: [i64; 3],
}

/// A pairing stopped by a judge: the verdict word and the line saying why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    pub pairing: i32,
    pub verdict: String,
    pub why: String,
}

/// What a run's report transaction decides, in Rust (the statistics stay in `stats/`).
pub trait Judge {
    /// Whether [`Judge::stops`] needs every pairing's counts (racing) or the reported one's.
    fn needs_all(&self) -> bool;
    /// The pairings that stop given the counts after the new pair (every pairing's, or the
    /// reported one's; a stop of a pairing no longer active is ignored).
    fn stops(&mut self, counts: &[PairingCounts]) -> Vec<Stop>;
    /// A tuning run: theta after applying the pair's `result` (the plus side's wins minus
    /// losses) of the iteration logged as `spsa`, and the step to record.
    fn tune(&mut self, _theta: &Value, _spsa: &Value, _result: f64) -> Result<(Value, Value)> {
        bail!("this run is not a tuning run")
    }
}

/// A finished pair, ready to store.
pub struct PairReport<'a> {
    pub run_id: i64,
    pub pairing: i32,
    pub pair: i32,
    pub token: i64,
    /// Game 0 then game 1 (game.jsonl records).
    pub records: [&'a Value; 2],
    /// The pairing's first engine's result in game 0 and game 1 (its counts, and a tuning
    /// pair's result, follow from them).
    pub scores: [stats::GameScore; 2],
}

impl PairReport<'_> {
    /// The pair's bin in LL, LD, DD (or WL), WD, WW: the first engine's half points.
    fn penta_index(&self) -> usize {
        self.scores.iter().map(|s| usize::from(s.half_points())).sum()
    }

    /// The first engine's wins, draws and losses over the two games.
    fn wdl(&self) -> [i64; 3] {
        let mut w = stats::Wdl::default();
        self.scores.iter().for_each(|&s| w.add(s));
        [w.wins as i64, w.draws as i64, w.losses as i64]
    }
}

/// How a report ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Reported {
    /// Stored; the pairings it stopped, and the run's new state if it changed.
    Stored { stops: Vec<Stop>, run_state: Option<&'static str> },
    /// Not stored (nothing written): why.
    Refused(String),
}

/// Stores a finished pair in one transaction (see the module's doc).
pub async fn report(
    db: &mut impl Db,
    worker: i64,
    r: &PairReport<'_>,
    judge: &mut (dyn Judge + Send),
) -> Result<Reported> {
    let mut p = [0i64; 5];
    p[r.penta_index().min(4)] = 1;
    let wdl = r.wdl();
    let only = (!judge.needs_all()).then_some(r.pairing);
    // `db` is borrowed twice: its client for the transaction, its cache of statements.
    let (client, cache) = db.parts();
    let tx = client.transaction().await?;
    // One statement: the pair is marked done (locked first), and only when it was, its games
    // are stored and its counts added to the reporting worker's row of the pairing's tallies;
    // it returns the pairing's counts (every pairing's for racing) with this pair added, and
    // whether the run has pairs still open besides this one. The statement's snapshot does not
    // see its own writes: the reported pair counts as added to the summed tallies, and as no
    // longer leased. No row: the pair was not this token's to report (nothing was written).
    let found = hot(
        &tx,
        cache,
        "WITH done AS ( \
           UPDATE pairs p SET state = 'done', lease_until = NULL FROM runs r \
           WHERE p.run_id = $1 AND p.pairing = $2 AND p.pair = $3 AND p.token = $4 \
             AND p.state = 'leased' AND r.id = p.run_id AND r.state = 'active' \
           RETURNING p.spsa), \
         stored AS ( \
           INSERT INTO games (run_id, pairing, pair, game, worker_id, record) \
           SELECT $1, $2, $3, v.game, $5, v.record FROM done, \
             (VALUES (0::smallint, $6::json), (1::smallint, $7::json)) AS v(game, record) \
           ORDER BY v.game), \
         counted AS ( \
           INSERT INTO tallies AS t (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, \
             draws, losses) \
           SELECT $1, $2, $5, $8, $9, $10, $11, $12, $13, $14, $15 FROM done \
           ON CONFLICT (run_id, pairing, worker_id) DO UPDATE SET \
             ll = t.ll + $8, ld = t.ld + $9, dd = t.dd + $10, wd = t.wd + $11, \
             ww = t.ww + $12, wins = t.wins + $13, draws = t.draws + $14, \
             losses = t.losses + $15), \
         counts AS ( \
           SELECT g.pairing, g.active, coalesce(g.verdict = 'dropped', false) AS dropped, \
             coalesce(sum(t.ll), 0)::bigint AS ll, coalesce(sum(t.ld), 0)::bigint AS ld, \
             coalesce(sum(t.dd), 0)::bigint AS dd, coalesce(sum(t.wd), 0)::bigint AS wd, \
             coalesce(sum(t.ww), 0)::bigint AS ww, coalesce(sum(t.wins), 0)::bigint AS wins, \
             coalesce(sum(t.draws), 0)::bigint AS draws, \
             coalesce(sum(t.losses), 0)::bigint AS losses \
           FROM pairings g LEFT JOIN tallies t ON t.run_id = g.run_id AND t.pairing = g.pairing \
           WHERE g.run_id = $1 AND ($16::int IS NULL OR g.pairing = $16) \
           GROUP BY g.pairing, g.active, g.verdict), \
         open AS ( \
           SELECT EXISTS (SELECT 1 FROM (SELECT seq FROM pairs WHERE run_id = $1 \
               AND state = 'pending' ORDER BY seq LIMIT 1) x) \
             OR EXISTS (SELECT 1 FROM pairs WHERE run_id = $1 AND state = 'leased' \
               AND NOT (pairing = $2 AND pair = $3)) AS open) \
         SELECT done.spsa, open.open, c.pairing, c.active, c.dropped, \
           c.ll + CASE WHEN c.pairing = $2 THEN $8 ELSE 0 END, \
           c.ld + CASE WHEN c.pairing = $2 THEN $9 ELSE 0 END, \
           c.dd + CASE WHEN c.pairing = $2 THEN $10 ELSE 0 END, \
           c.wd + CASE WHEN c.pairing = $2 THEN $11 ELSE 0 END, \
           c.ww + CASE WHEN c.pairing = $2 THEN $12 ELSE 0 END, \
           c.wins + CASE WHEN c.pairing = $2 THEN $13 ELSE 0 END, \
           c.draws + CASE WHEN c.pairing = $2 THEN $14 ELSE 0 END, \
           c.losses + CASE WHEN c.pairing = $2 THEN $15 ELSE 0 END \
         FROM done CROSS JOIN open LEFT JOIN counts c ON true ORDER BY c.pairing",
        &[
            (&r.run_id, Type::INT8),
            (&r.pairing, Type::INT4),
            (&r.pair, Type::INT4),
            (&r.token, Type::INT8),
            (&worker, Type::INT8),
            (r.records[0], Type::JSON),
            (r.records[1], Type::JSON),
            (&p[0], Type::INT8),
            (&p[1], Type::INT8),
            (&p[2], Type::INT8),
            (&p[3], Type::INT8),
            (&p[4], Type::INT8),
            (&wdl[0], Type::INT8),
            (&wdl[1], Type::INT8),
            (&wdl[2], Type::INT8),
            (&only, Type::INT4),
        ],
    )
    .await
    .context("cannot report a pair")?;
    let Some(first) = found.first() else {
        tx.rollback().await?;
        return Ok(Reported::Refused(refusal(client, r).await?));
    };
    let spsa: Option<Value> = first.get(0);
    let open: bool = first.get(1);
    let counts: Vec<PairingCounts> = found
        .iter()
        .filter(|r| r.get::<_, Option<i32>>(2).is_some())
        .map(|r| PairingCounts {
            pairing: r.get(2),
            active: r.get(3),
            dropped: r.get(4),
            penta: [r.get(5), r.get(6), r.get(7), r.get(8), r.get(9)],
            wdl: [r.get(10), r.get(11), r.get(12)],
        })
        .collect();
    let mut stops = Vec::new();
    for s in judge.stops(&counts) {
        let stopped = rows(
            &tx,
            "UPDATE pairings SET active = false, verdict = $3, why = $4 \
             WHERE run_id = $1 AND pairing = $2 AND active RETURNING pairing",
            &[
                (&r.run_id, Type::INT8),
                (&s.pairing, Type::INT4),
                (&s.verdict, Type::TEXT),
                (&s.why, Type::TEXT),
            ],
        )
        .await?;
        if stopped.len() == 1 {
            rows(
                &tx,
                "UPDATE pairs SET state = 'skipped' \
                 WHERE run_id = $1 AND pairing = $2 AND state = 'pending'",
                &[(&r.run_id, Type::INT8), (&s.pairing, Type::INT4)],
            )
            .await?;
            stops.push(s);
        }
    }
    let mut run_state = None;
    if !stops.is_empty() {
        let any_active: bool = one(
            &tx,
            "SELECT EXISTS (SELECT 1 FROM pairings WHERE run_id = $1 AND active)",
            &[(&r.run_id, Type::INT8)],
        )
        .await?
        .get(0);
        if !any_active {
            let why = stops.iter().map(|s| s.why.as_str()).collect::<Vec<_>>().join("; ");
            if finish_run(&tx, r.run_id, "decided", &why).await? {
                run_state = Some("decided");
            }
        }
    }
    let open = if stops.is_empty() { open } else { has_open_pairs(&tx, r.run_id).await? };
    if run_state.is_none()
        && !open
        && finish_run(&tx, r.run_id, "complete", "every pair played").await?
    {
        run_state = Some("complete");
    }
    if let Some(spsa) = &spsa {
        let theta: Value = one(
            &tx,
            "SELECT theta FROM tune_state WHERE run_id = $1 FOR UPDATE",
            &[(&r.run_id, Type::INT8)],
        )
        .await
        .context("the tuning run has no theta")?
        .get(0);
        let (theta, step) = judge.tune(&theta, spsa, (wdl[0] - wdl[2]) as f64)?;
        rows(
            &tx,
            "INSERT INTO tune_steps (run_id, ord, k, step) \
             SELECT $1, applied, $2, $3 FROM tune_state WHERE run_id = $1",
            &[(&r.run_id, Type::INT8), (&(r.pair as i64), Type::INT8), (&step, Type::JSONB)],
        )
        .await?;
        rows(
            &tx,
            "UPDATE tune_state SET theta = $2, applied = applied + 1 WHERE run_id = $1",
            &[(&r.run_id, Type::INT8), (&theta, Type::JSONB)],
        )
        .await?;
    }
    tx.commit().await.context("cannot commit a pair's report")?;
    Ok(Reported::Stored { stops, run_state })
}

/// Why a report was refused (read after its transaction rolled back).
async fn refusal(db: &Client, r: &PairReport<'_>) -> Result<String> {
    let row = opt(
        db,
        "SELECT r.state, p.state, p.token FROM pairs p JOIN runs r ON r.id = p.run_id \
         WHERE p.run_id = $1 AND p.pairing = $2 AND p.pair = $3",
        &[(&r.run_id, Type::INT8), (&r.pairing, Type::INT4), (&r.pair, Type::INT4)],
    )
    .await?;
    Ok(match row {
        None => format!("run {} has no pair {}/{}", r.run_id, r.pairing, r.pair),
        Some(row) => {
            let (run, pair, token): (String, String, Option<i64>) =
                (row.get(0), row.get(1), row.get(2));
            if run != "active" {
                format!("run {} is {run}", r.run_id)
            } else if token != Some(r.token) {
                "its lease expired and the pair was handed to another worker".to_string()
            } else {
                format!("the pair is {pair}")
            }
        }
    })
}

/// Whether a run has pairs pending or leased.
async fn has_open_pairs(db: &impl GenericClient, run: i64) -> Result<bool> {
    Ok(one(
        db,
        // `ORDER BY seq LIMIT 1`: the pending pairs' index, whatever the statistics say
        // (a plain EXISTS may scan the table from its first, long done, pairs).
        "SELECT EXISTS (SELECT 1 FROM (SELECT seq FROM pairs WHERE run_id = $1 \
             AND state = 'pending' ORDER BY seq LIMIT 1) x) \
           OR EXISTS (SELECT 1 FROM pairs WHERE run_id = $1 AND state = 'leased')",
        &[(&run, Type::INT8)],
    )
    .await?
    .get(0))
}

/// Moves an active run to `state`; false when it was no longer active. `finished_at` is the
/// clock at this statement, not the transaction's start: a decision first skips the pairing's
/// pending pairs (locking them, so claims skip them from then on), so no pair can be claimed
/// with a later `claimed_at` than the decision's `finished_at` (an expired lease excepted).
async fn finish_run(db: &impl GenericClient, run: i64, state: &str, why: &str) -> Result<bool> {
    let n = rows(
        db,
        "UPDATE runs SET state = $2, stop_reason = $3, finished_at = clock_timestamp() \
         WHERE id = $1 AND state = 'active' RETURNING id",
        &[(&run, Type::INT8), (&state, Type::TEXT), (&why, Type::TEXT)],
    )
    .await?;
    Ok(n.len() == 1)
}

/// Marks an active run with no open pair complete (two last reports at once can each see the
/// other's pair open; an idle worker settles it). True when this call completed it.
pub async fn complete_if_done(db: &Client, run: i64) -> Result<bool> {
    let n = rows(
        db,
        "UPDATE runs SET state = 'complete', stop_reason = 'every pair played', \
           finished_at = clock_timestamp() \
         WHERE id = $1 AND state = 'active' \
           AND NOT EXISTS (SELECT 1 FROM (SELECT seq FROM pairs WHERE run_id = $1 \
             AND state = 'pending' ORDER BY seq LIMIT 1) x) \
           AND NOT EXISTS (SELECT 1 FROM pairs WHERE run_id = $1 AND state = 'leased') \
         RETURNING id",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(n.len() == 1)
}

/// Each pairing's counts (of pairing `only` when given), summed over workers.
pub async fn pairing_counts(
    db: &impl GenericClient,
    run: i64,
    only: Option<i32>,
) -> Result<Vec<PairingCounts>> {
    let rows = rows(
        db,
        "SELECT g.pairing, g.active, coalesce(g.verdict = 'dropped', false), \
               coalesce(sum(t.ll), 0)::bigint, coalesce(sum(t.ld), 0)::bigint, \
               coalesce(sum(t.dd), 0)::bigint, coalesce(sum(t.wd), 0)::bigint, \
               coalesce(sum(t.ww), 0)::bigint, coalesce(sum(t.wins), 0)::bigint, \
               coalesce(sum(t.draws), 0)::bigint, coalesce(sum(t.losses), 0)::bigint \
             FROM pairings g LEFT JOIN tallies t \
               ON t.run_id = g.run_id AND t.pairing = g.pairing \
             WHERE g.run_id = $1 AND ($2::int IS NULL OR g.pairing = $2) \
             GROUP BY g.pairing, g.active, g.verdict ORDER BY g.pairing",
        &[(&run, Type::INT8), (&only, Type::INT4)],
    )
    .await
    .context("cannot read the counts")?;
    Ok(rows
        .iter()
        .map(|r| PairingCounts {
            pairing: r.get(0),
            active: r.get(1),
            dropped: r.get(2),
            penta: [r.get(3), r.get(4), r.get(5), r.get(6), r.get(7)],
            wdl: [r.get(8), r.get(9), r.get(10)],
        })
        .collect())
}

/// The states of runs `ids` (a worker's view of what it serves).
pub async fn run_states(db: &Client, ids: &[i64]) -> Result<Vec<(i64, String)>> {
    let rows =
        rows(db, "SELECT id, state FROM runs WHERE id = ANY($1)", &[(&ids, Type::INT8_ARRAY)])
            .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Active runs (of `only` when given, never those in `skip`) that still have open pairs, and
/// the soonest a lease among them expires (a worker with nothing to claim waits for it).
pub async fn outstanding(
    db: &Client,
    only: Option<i64>,
    skip: &[i64],
) -> Result<(Vec<i64>, Option<Duration>)> {
    let rows = rows(
        db,
        // Per run, through the partial indexes (never a scan of a run's stored pairs).
        "SELECT r.id, extract(epoch FROM l.soonest - now())::float8 \
             FROM runs r, LATERAL (SELECT min(lease_until) AS soonest FROM pairs \
               WHERE run_id = r.id AND state = 'leased') l \
             WHERE r.state = 'active' AND ($1::bigint IS NULL OR r.id = $1) \
               AND NOT (r.id = ANY($2::bigint[])) \
               AND (l.soonest IS NOT NULL OR EXISTS (SELECT 1 FROM (SELECT seq FROM pairs \
                 WHERE run_id = r.id AND state = 'pending' ORDER BY seq LIMIT 1) x)) \
             ORDER BY r.id",
        &[(&only, Type::INT8), (&skip, Type::INT8_ARRAY)],
    )
    .await
    .context("cannot read the runs")?;
    let ids = rows.iter().map(|r| r.get(0)).collect();
    let soonest = rows
        .iter()
        .filter_map(|r| r.get::<_, Option<f64>>(1))
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s))));
    Ok((ids, soonest.map(|s| Duration::from_secs_f64(s.clamp(0.0, 3600.0)))))
}

/// A run as stored.
#[derive(Clone, Debug)]
pub struct RunRow {
    pub id: i64,
    pub kind: String,
    pub state: String,
    pub stop_reason: Option<String>,
    pub submission: Value,
    pub plan_hash: String,
    pub created: String,
    pub finished: Option<String>,
}

fn run_row(r: &tokio_postgres::Row) -> RunRow {
    RunRow {
        id: r.get(0),
        kind: r.get(1),
        state: r.get(2),
        stop_reason: r.get(3),
        submission: r.get(4),
        plan_hash: r.get(5),
        created: r.get(6),
        finished: r.get(7),
    }
}

const RUN_COLUMNS: &str = "id, kind, state, stop_reason, submission, plan_hash, \
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), \
    to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

/// Run `id`, if there is one.
pub async fn run(db: &Client, id: i64) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
    Ok(opt(db, &sql, &[(&id, Type::INT8)])
        .await
        .context("cannot read the run")?
        .as_ref()
        .map(run_row))
}

/// Every run, newest first (at most `limit`).
pub async fn runs(db: &Client, limit: i64) -> Result<Vec<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT $1");
    Ok(rows(db, &sql, &[(&limit, Type::INT8)])
        .await
        .context("cannot read the runs")?
        .iter()
        .map(run_row)
        .collect())
}

/// Order of [`games`]: the schedule's (match, sweep) or the order reports were stored (tune).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameOrder {
    Schedule,
    Reported,
}

/// Every stored game record of a run.
pub async fn games(db: &Client, run: i64, order: GameOrder) -> Result<Vec<Value>> {
    let sql = match order {
        GameOrder::Schedule => {
            "SELECT g.record FROM games g JOIN pairs p ON p.run_id = g.run_id \
               AND p.pairing = g.pairing AND p.pair = g.pair \
             WHERE g.run_id = $1 ORDER BY p.seq, g.game"
        }
        GameOrder::Reported => "SELECT record FROM games WHERE run_id = $1 ORDER BY id",
    };
    let rows = rows(db, sql, &[(&run, Type::INT8)]).await.context("cannot read the games")?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// A pairing's label, verdict and why (status and pull).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairingRow {
    pub pairing: i32,
    pub label: String,
    pub active: bool,
    pub verdict: Option<String>,
    pub why: Option<String>,
}

pub async fn pairings(db: &Client, run: i64) -> Result<Vec<PairingRow>> {
    let rows = rows(
        db,
        "SELECT pairing, label, active, verdict, why FROM pairings WHERE run_id = $1 \
         ORDER BY pairing",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| PairingRow {
            pairing: r.get(0),
            label: r.get(1),
            active: r.get(2),
            verdict: r.get(3),
            why: r.get(4),
        })
        .collect())
}

/// A tuning run's theta, and its applied steps in the order they were applied.
pub async fn tune_state(db: &Client, run: i64) -> Result<Option<(Value, Vec<Value>)>> {
    let Some(row) =
        opt(db, "SELECT theta FROM tune_state WHERE run_id = $1", &[(&run, Type::INT8)]).await?
    else {
        return Ok(None);
    };
    let steps = rows(
        db,
        "SELECT step FROM tune_steps WHERE run_id = $1 ORDER BY ord",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(Some((row.get(0), steps.iter().map(|r| r.get(0)).collect())))
}

/// The logged iterations of a tuning run, in k order.
pub async fn tune_iterations(db: &Client, run: i64) -> Result<Vec<Value>> {
    let rows = rows(
        db,
        "SELECT spsa FROM pairs WHERE run_id = $1 AND spsa IS NOT NULL ORDER BY seq",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Logs a tuning iteration's values on a pair leased under `token`, computed by `begin` from
/// the current theta; returns them (or the values already logged by an earlier hand-out).
/// `None`: the lease is lost.
pub async fn log_iteration(
    db: &mut Client,
    run: i64,
    pairing: i32,
    pair: i32,
    token: i64,
    begin: &mut (dyn FnMut(&Value) -> Result<Value> + Send),
) -> Result<Option<Value>> {
    let tx = db.transaction().await?;
    let row = opt(
        &tx,
        "SELECT spsa FROM pairs WHERE run_id = $1 AND pairing = $2 AND pair = $3 \
           AND token = $4 AND state = 'leased' FOR UPDATE",
        &[(&run, Type::INT8), (&pairing, Type::INT4), (&pair, Type::INT4), (&token, Type::INT8)],
    )
    .await?;
    let Some(row) = row else { return Ok(None) };
    if let Some(logged) = row.get::<_, Option<Value>>(0) {
        return Ok(Some(logged));
    }
    let theta: Value = one(
        &tx,
        "SELECT theta FROM tune_state WHERE run_id = $1 FOR UPDATE",
        &[(&run, Type::INT8)],
    )
    .await
    .context("the tuning run has no theta")?
    .get(0);
    let it = begin(&theta)?;
    rows(
        &tx,
        "UPDATE pairs SET spsa = $4 WHERE run_id = $1 AND pairing = $2 AND pair = $3",
        &[(&run, Type::INT8), (&pairing, Type::INT4), (&pair, Type::INT4), (&it, Type::JSONB)],
    )
    .await?;
    rows(
        &tx,
        "UPDATE tune_state SET next_k = greatest(next_k, $2) WHERE run_id = $1",
        &[(&run, Type::INT8), (&(pair as i64 + 1), Type::INT8)],
    )
    .await?;
    tx.commit().await?;
    Ok(Some(it))
}

/// Cancels an active run; returns its state before (None: no such run).
pub async fn cancel(db: &Client, run: i64) -> Result<Option<String>> {
    let row = opt(
        db,
        "WITH old AS (SELECT state FROM runs WHERE id = $1 FOR UPDATE) \
             UPDATE runs SET state = CASE WHEN old.state = 'active' THEN 'cancelled' \
                 ELSE runs.state END, \
               stop_reason = CASE WHEN old.state = 'active' THEN 'cancelled' \
                 ELSE runs.stop_reason END, \
               finished_at = coalesce(runs.finished_at, now()) \
             FROM old WHERE runs.id = $1 RETURNING old.state",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot cancel the run")?;
    Ok(row.map(|r| r.get(0)))
}

/// Progress figures of a run for `runner status`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub pairs_total: i64,
    pub pairs_done: i64,
    pub pairs_leased: i64,
    pub pairs_skipped: i64,
    /// Workers with a lease on this run whose heartbeat is within their lease.
    pub workers_alive: i64,
    /// Pairs reported in the last hour.
    pub pairs_last_hour: i64,
    /// Seconds between the run's first and last report.
    pub reporting_secs: f64,
}

pub async fn progress(db: &Client, run: i64) -> Result<Progress> {
    let r = one(
        db,
        "SELECT count(*), count(*) FILTER (WHERE state = 'done'), \
               count(*) FILTER (WHERE state = 'leased'), \
               count(*) FILTER (WHERE state = 'skipped') FROM pairs WHERE run_id = $1",
        &[(&run, Type::INT8)],
    )
    .await?;
    let w = one(
        db,
        "SELECT count(DISTINCT w.id) FROM workers w JOIN pairs p ON p.worker_id = w.id \
             WHERE p.run_id = $1 AND p.state = 'leased' AND w.stopped_at IS NULL \
               AND w.heartbeat_at > now() - make_interval(secs => w.lease_secs)",
        &[(&run, Type::INT8)],
    )
    .await?;
    let g = one(
        db,
        "SELECT count(*) FILTER (WHERE reported_at > now() - interval '1 hour'), \
               coalesce(extract(epoch FROM max(reported_at) - min(reported_at)), 0)::float8 \
             FROM games WHERE run_id = $1 AND game = 1",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(Progress {
        pairs_total: r.get(0),
        pairs_done: r.get(1),
        pairs_leased: r.get(2),
        pairs_skipped: r.get(3),
        workers_alive: w.get(0),
        pairs_last_hour: g.get(0),
        reporting_secs: g.get(1),
    })
}
