//! The work queue: every SQL statement of the fleet is in this folder, each with bound
//! parameters only. A unit of work is one game pair of a run's schedule (same opening, colours
//! swapped).
//!
//! Workers are untrusted: each of their calls is checked (the worker's secret, its key, its
//! lease) by the server's own statements (the [`me!`] part; none of the database functions of
//! schema versions 2 to 6 is called, see `super::schema`): [`lease`] registers a worker under
//! its key, claims (the order of the runs, their shares and turns, computed by the claim's own
//! statement), renews and gives back leases, refuses runs and records incidents; [`report`]
//! stores a finished pair (the server reads its result from the game records), and the server
//! decides in Rust ([`settle`]: the SPRT, racing and the run's end, with the run locked, from
//! every stored pair); [`tuning`] starts a tuning pair's iteration and moves theta by a report's
//! result (the SPSA arithmetic in Rust). [`people`] holds what people do (approve, cancel,
//! modify, purge, delete, worker keys), with an explicit actor, the rights of `fleet::rights`
//! and an audit row each, and [`submit`] their uploads and submissions: the server runs them for
//! its users, and the operator's `--db` commands for an approver named after the database role.
//! [`share`] holds priorities, throughputs and each run's share now; [`builds`] the engines
//! workers built and benched; [`read`] what status and pull read; [`workers`] what `runner
//! workers` and the per-worker parts of status read; [`users`] people, their tokens and web
//! sessions (schema version 6).
//!
//! The frequent statements (claim, report, heartbeat) run on a [`Db`]: a [`Conn`] prepares each
//! of them once per connection (named prepared statements: no parsing and, with the generic
//! plans [`Conn::open`] asks for, no planning per call), a plain `Client`, or a `Conn` made with
//! prepared statements off (`prepared_statements=off` in the connection string, for a
//! transaction pooler that does not keep them) sends them unnamed with their parameters' types
//! (`query_typed`). Rows are read by column name.

/// The worker of a call checked, as a CTE named `me` (the start of a worker call's statement,
/// after `WITH`): its id and key's id when worker `$1`'s secret `$2` has the SHA-256 stored, its
/// key is not revoked and it is not stopped; no row otherwise. What `fleet_worker_auth`
/// checked; every part of a worker call's statement that writes is conditioned on `me`, so a
/// failed check writes nothing.
macro_rules! me {
    () => {
        "me AS (
    SELECT w.id, w.key_id FROM workers w JOIN worker_keys k ON k.id = w.key_id
     WHERE w.id = $1 AND w.secret_hash = encode(sha256(convert_to($2, 'UTF8')), 'hex')
       AND k.revoked_at IS NULL AND w.stopped_at IS NULL)"
    };
}

/// Each pairing's counts in run `$run` (only pairing `$only` when it is not null), as a
/// `SELECT`: what it stored, summed over the workers' tallies, with its label, whether it still
/// plays and whether racing dropped it (what `fleet_counts` answered).
macro_rules! counts {
    ($run:literal, $only:literal) => {
        concat!(
            "SELECT g.pairing, g.label, g.active, coalesce(g.verdict = 'dropped', false) AS dropped,
       coalesce(sum(t.ll), 0)::bigint AS ll, coalesce(sum(t.ld), 0)::bigint AS ld,
       coalesce(sum(t.dd), 0)::bigint AS dd, coalesce(sum(t.wd), 0)::bigint AS wd,
       coalesce(sum(t.ww), 0)::bigint AS ww, coalesce(sum(t.wins), 0)::bigint AS wins,
       coalesce(sum(t.draws), 0)::bigint AS draws, coalesce(sum(t.losses), 0)::bigint AS losses
  FROM pairings g LEFT JOIN tallies t ON t.run_id = g.run_id AND t.pairing = g.pairing
 WHERE g.run_id = ",
            $run,
            " AND (",
            $only,
            " IS NULL OR g.pairing = ",
            $only,
            ")
 GROUP BY g.pairing, g.label, g.active, g.verdict ORDER BY g.pairing"
        )
    };
}

/// The numbers of the JSON array `$array` (a `jsonb` expression) as a `float8[]`, each read by
/// PostgreSQL's own float8 input, as the SQL judge read them (serde_json's default reading may
/// differ from it in the last bit); an empty array for NULL.
macro_rules! floats {
    ($array:literal) => {
        concat!(
            "ARRAY(SELECT e::float8 FROM jsonb_array_elements_text(",
            $array,
            ") WITH ORDINALITY a (e, o) ORDER BY o)"
        )
    };
}

pub mod artifacts;
pub mod builds;
pub mod dashboard;
pub mod lease;
pub mod people;
pub mod read;
pub mod report;
pub mod settle;
pub mod share;
pub mod submit;
pub mod tuning;
pub mod users;
pub mod workers;

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, GenericClient, Row, Statement};

pub use artifacts::{ArtifactRow, artifact_chunk, worker_artifacts};
pub use lease::{
    Claim, ClaimAsk, Machine, WorkerId, claim, claim_from, heartbeat, incident, refuse,
    register_machine, register_worker, release, worker_auth, worker_stopped,
};
pub use people::KeyRow;
pub use read::{
    GameOrder, PairingRow, Progress, Refusal, RunRow, StoredGame, Waiting, games, outstanding,
    pairing_counts, pairings, progress, refusals, run, runs, tune_iterations, tune_state,
};
pub use report::{PairReport, PairingCounts, Reported, Settled, Stop, replayed, report};
pub use submit::NewRun;
pub use tuning::iteration;

/// A bound parameter and its PostgreSQL type.
type Param<'a> = (&'a (dyn ToSql + Sync), Type);

/// The parameters of a worker's call on one pair: worker `$1` ([`WorkerId`]) and its secret
/// `$2`, run `$3`, pairing `$4`, pair `$5`, lease token `$6`, then `more` from `$7`.
fn pair_call<'a>(
    w: &'a WorkerId,
    (run, pairing, pair, token): (&'a i64, &'a i32, &'a i32, &'a i64),
    more: &[Param<'a>],
) -> Vec<Param<'a>> {
    let mut params: Vec<Param<'a>> = vec![
        (&w.id, Type::INT8),
        (w.secret(), Type::TEXT),
        (run, Type::INT8),
        (pairing, Type::INT4),
        (pair, Type::INT4),
        (token, Type::INT8),
    ];
    params.extend(more.iter().cloned());
    params
}

/// The statements prepared on one connection, by their SQL.
type Prepared = Mutex<HashMap<&'static str, Statement>>;

/// Iterations of a tuning run handed out but not yet applied, at most. Each iteration is played
/// with the theta of its hand-out; with this bound, an iteration's theta misses at most this many
/// earlier results, a lag comparable to a local run at `--concurrency 16`, and small against the
/// hundreds to thousands of iterations of a tuning run.
pub const TUNE_IN_FLIGHT: i64 = 16;

/// Tries of a tuning pair's write (its iteration's start, its report's move of theta), at most,
/// while other pairs' results keep moving theta between its read and its write (`tuning`).
const THETA_TRIES: usize = 100;

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
    /// for generic plans (`plan_cache_mode = force_generic_plan`), which the functions' own
    /// statements use too: left to itself PostgreSQL plans the claim anew at every call, which
    /// was a third of the server's CPU per pair (docs/measurements/fleet-load.md, "The goal, on an
    /// idle machine"). Every statement a worker runs is shaped so that its plan does not depend on
    /// its parameters. Without prepared statements (a transaction pooler) nothing is set: a setting
    /// would stay on a shared server connection.
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
}

impl Db for Client {
    fn client(&self) -> &Client {
        self
    }
    fn prepared(&self) -> Option<&Prepared> {
        None
    }
}

impl Db for Conn {
    fn client(&self) -> &Client {
        &self.client
    }
    fn prepared(&self) -> Option<&Prepared> {
        self.prepared.as_ref()
    }
}

/// Runs one of the frequent statements: prepared once on this connection when the [`Db`] keeps
/// prepared statements, else sent unnamed.
async fn hot(
    db: &impl Db,
    sql: &'static str,
    params: &[Param<'_>],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let client = db.client();
    let Some(cache) = db.prepared() else { return client.query_typed(sql, params).await };
    let known = cache.lock().unwrap_or_else(|e| e.into_inner()).get(sql).cloned();
    let stmt = match known {
        Some(s) => s,
        None => {
            let types: Vec<Type> = params.iter().map(|p| p.1.clone()).collect();
            let s = client.prepare_typed(sql, &types).await?;
            cache.lock().unwrap_or_else(|e| e.into_inner()).insert(sql, s.clone());
            s
        }
    };
    let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.0).collect();
    client.query(&stmt, &values).await
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
