//! A worker's side of the queue: registering under a key, claiming, renewing and giving back
//! leases, refusing a run, recording an incident.
//!
//! The server's own statements, each a data-modifying statement that checks the worker as
//! the database's `SECURITY DEFINER` functions did (its secret's SHA-256, its key not revoked,
//! itself not stopped: [`me!`]) and writes nothing when the check fails: the registration,
//! the check alone, a worker stopping, the claim (the order of the runs and the lease of the
//! first run's pairs in one statement, a statement per further run: [`claim_from`]), the
//! heartbeat, a release, a refusal (and the statement after it that fails a run enough keys
//! refused) and an incident. (A tuning pair's iteration is in `tuning.rs`.) The functions the
//! server no longer calls (`fleet_claim`, `fleet_claim_order` ...) stay in a database migrated
//! from an earlier version, for a server of the version before during a rolling deploy, until
//! `runner db init --contract`; a new database never has them.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row};

use super::{Db, TUNE_IN_FLIGHT, hot, one, opt, pair_call};

/// A registered worker process: its id and the secret every call carries (never printed).
#[derive(Clone)]
pub struct WorkerId {
    pub id: i64,
    secret: String,
    /// The name of the key it registered under (`role:NAME` for an administrator's own worker).
    pub key_name: String,
}

impl WorkerId {
    /// A worker known by its id, its secret and its key's name (a server answering a worker's
    /// request, a worker registered through a server).
    pub fn new(id: i64, secret: String, key_name: String) -> WorkerId {
        WorkerId { id, secret, key_name }
    }

    /// The secret every call carries (never printed).
    pub fn secret(&self) -> &String {
        &self.secret
    }
}

impl std::fmt::Debug for WorkerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WorkerId({}, key {})", self.id, self.key_name)
    }
}

/// What a worker's machine is, as `runner workers` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    pub host: String,
    /// The CPU model (None: unknown).
    pub cpu: Option<String>,
    /// The CPUs the worker may use.
    pub cores: Option<i32>,
    /// The worker's runner version, as it said it (None: this binary's own).
    pub version: Option<String>,
}

/// Registers a worker under `key`, its machine known by its host name only.
pub async fn register_worker(
    db: &Client,
    key: &str,
    host: &str,
    pid: i32,
    concurrency: i32,
    lease: Duration,
) -> Result<WorkerId> {
    let m = Machine { host: host.to_string(), ..Machine::default() };
    register_machine(db, key, &m, pid, concurrency, lease).await
}

/// A registration, one statement: the key found by its SHA-256, and when it is not revoked a
/// worker inserted with a new secret (two random UUIDs' hex, as `fleet_register` made it; only
/// its SHA-256 is kept) and what its machine is: host cut to 200 characters,
/// version to 100, CPU to 200 (`unknown` when not given), cores kept from 1 to 100,000. One row
/// when the key was found: its name, whether it is revoked, the worker's id (none when revoked)
/// and its secret; no row otherwise. What `fleet_register` did.
const REGISTER: &str = "\
WITH k AS (
    SELECT id, name, revoked_at FROM worker_keys
     WHERE key_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')),
s AS (SELECT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') AS secret),
w AS (
    INSERT INTO workers (host, pid, concurrency, lease_secs, key_id, secret_hash, version, cpu,
                         cores)
    SELECT left($2, 200), $3, $4, $5, k.id, encode(sha256(convert_to(s.secret, 'UTF8')), 'hex'),
           left($6, 100), left(coalesce(nullif($7, ''), 'unknown'), 200),
           CASE WHEN $8 BETWEEN 1 AND 100000 THEN $8 END
      FROM k, s WHERE k.revoked_at IS NULL
    RETURNING id)
SELECT k.name AS key_name, k.revoked_at IS NOT NULL AS revoked, (SELECT id FROM w) AS worker_id,
       s.secret
  FROM k, s";

/// Registers a worker under `key` with what its machine is. `Err` ([`Refused::Key`], nothing
/// written) for an unknown key or a revoked one. (Before, a database administrator's worker
/// could register with no key, under an implicit key `role:NAME` of its role; every worker
/// speaks to the server now, which needs a key.)
pub async fn register_machine(
    db: &Client,
    key: &str,
    m: &Machine,
    pid: i32,
    concurrency: i32,
    lease: Duration,
) -> Result<WorkerId> {
    let version = m.version.as_deref().unwrap_or(env!("CARGO_PKG_VERSION"));
    let row = opt(
        db,
        REGISTER,
        &[
            (&key, Type::TEXT),
            (&m.host, Type::TEXT),
            (&pid, Type::INT4),
            (&concurrency, Type::INT4),
            (&lease.as_secs_f64(), Type::FLOAT8),
            (&version, Type::TEXT),
            (&m.cpu, Type::TEXT),
            (&m.cores, Type::INT4),
        ],
    )
    .await
    .context("cannot register the worker")?;
    let refused =
        |why: String| anyhow::Error::new(Refused::Key(why)).context("cannot register the worker");
    let Some(row) = row else {
        return Err(refused("unknown worker key".into()));
    };
    let key_name: String = row.try_get("key_name")?;
    if row.try_get::<_, bool>("revoked")? {
        return Err(refused(format!("worker key {key_name} was revoked")));
    }
    Ok(WorkerId { id: row.try_get("worker_id")?, secret: row.try_get("secret")?, key_name })
}

/// The start of the `UPDATE` that gives the checked worker's leases back (pending again, with
/// no token, so any worker takes them at once), to be followed by which leases (`AND ...`).
macro_rules! give_back {
    () => {
        "UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
     WHERE EXISTS (SELECT 1 FROM me) AND worker_id = $1 AND state = 'leased'"
    };
}

/// The worker's check alone ([`me!`]).
const WORKER_AUTH: &str = concat!("WITH ", me!(), "\nSELECT EXISTS (SELECT 1 FROM me) AS known");

/// Checks worker `w`'s secret (a server answering a request that reads rather than writes);
/// `Err` ([`NotAuthorized`]) when it is not registered with a valid key.
pub async fn worker_auth(db: &Client, w: &WorkerId) -> Result<()> {
    let row = one(db, WORKER_AUTH, &[(&w.id, Type::INT8), (w.secret(), Type::TEXT)])
        .await
        .context("cannot check the worker")?;
    known(&row, w)
}

/// `Err` ([`NotAuthorized`]) when the statement's `known` column (the worker's check) is false.
pub(super) fn known(row: &Row, w: &WorkerId) -> Result<()> {
    if row.try_get::<_, bool>("known")? { Ok(()) } else { Err(NotAuthorized(w.id).into()) }
}

/// A worker stopping, one statement: checked ([`me!`]) and marked stopped; what
/// `fleet_worker_stopped` did.
const WORKER_STOPPED: &str = concat!(
    "WITH ",
    me!(),
    ",
stopped AS (
    UPDATE workers SET stopped_at = now() WHERE id IN (SELECT id FROM me) RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known"
);

/// Marks a worker stopped (its leases, if any, expire on their own); `Err` ([`NotAuthorized`])
/// when its secret or key does not hold, or it was stopped already.
pub async fn worker_stopped(db: &Client, w: &WorkerId) -> Result<()> {
    let row = one(db, WORKER_STOPPED, &[(&w.id, Type::INT8), (w.secret(), Type::TEXT)])
        .await
        .context("cannot mark the worker stopped")?;
    known(&row, w)
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

impl Claim {
    /// A leased pair from a row of its columns, read by name.
    pub fn from_row(r: &Row) -> Result<Claim, tokio_postgres::Error> {
        Ok(Claim {
            run_id: r.try_get("run_id")?,
            seq: r.try_get("seq")?,
            pairing: r.try_get("pairing")?,
            pair: r.try_get("pair")?,
            opening: r.try_get("opening")?,
            token: r.try_get("token")?,
            attempts: r.try_get("attempts")?,
            spsa: r.try_get("spsa")?,
        })
    }
}

/// What a claim asks for, written once for every layer that passes it on: the worker's loop,
/// its HTTP client, the server and [`claim_from`]. (The wire's `api::ClaimRequest` converts to
/// and from it; it is not that type, whose lease is seconds as JSON carries them and whose
/// bounds are the API's, and the queue uses nothing of the wire.)
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimAsk {
    /// Of this run only.
    pub only: Option<i64>,
    /// Never of these runs (nor of a run the worker's key refused).
    pub skip: Vec<i64>,
    /// The run the worker plays now, kept while that run is within its share.
    pub current: Option<i64>,
    /// Pairs wanted, at the most.
    pub n: i64,
    pub lease: Duration,
    /// A tuning run's iterations handed out beyond those applied, at the most.
    pub tune_in_flight: i64,
}

impl ClaimAsk {
    /// Up to `n` pairs of any run, for a worker that plays no run now, with the default window
    /// of a tuning run's iterations ([`TUNE_IN_FLIGHT`]).
    pub fn new(n: i64, lease: Duration) -> ClaimAsk {
        ClaimAsk {
            only: None,
            skip: Vec::new(),
            current: None,
            n,
            lease,
            tune_in_flight: TUNE_IN_FLIGHT,
        }
    }
}

/// Leases up to `n` pairs for worker `w`: of run `only` when given, never of the runs in
/// `skip` (nor of a run its key refused), in schedule order, for a worker that plays no run
/// now ([`claim_from`]).
pub async fn claim(
    db: &impl Db,
    w: &WorkerId,
    only: Option<i64>,
    skip: &[i64],
    n: i64,
    lease: Duration,
) -> Result<Vec<Claim>> {
    claim_from(db, w, &ClaimAsk { only, skip: skip.to_vec(), ..ClaimAsk::new(n, lease) }).await
}

/// The stickiness band of the claim's order (what `fleet_share_slack()` returns, schema version
/// 3): a worker stays on the run it plays while that run, with this claim, holds at most this
/// factor of its level's fair ratio (pairs in flight per unit of weight) and no other run of
/// the level is below the fair ratio over this factor.
macro_rules! share_slack {
    () => {
        "1.25"
    };
}

/// The order in which a claim tries the runs, as a CTE named `o` (after [`me!`]: none without a
/// checked worker): each run the worker's key may claim (active, of run `$6` when given, not in
/// `$7`, not refused by the key) with its `rank`, 1 first. Highest priority first; within it
/// the run the worker plays (`$8`) when it is within its share and no other run of the level is
/// starved (it sticks), then `after`, the run's pairs in flight per unit of weight once these
/// `$3` are added (smallest first: the run furthest below its share), then a run other than
/// the worker's own, the larger weight (throughput over the owner's runs at that priority),
/// the run whose newest claim is oldest (`served`; never claimed first), the older run. What
/// `fleet_claim_order` (schema version 5) answered.
///
/// Only live leases count (a dead worker's expired lease is not work in flight). Per active
/// run, the live leases are one range of the partial index of leased pairs and the newest
/// claim one probe of `pairs_claimed`, each a lateral subquery whose plan does not depend on
/// how many runs there are (generic plans: [`super::Conn::open`]); never a run's stored pairs.
macro_rules! claim_order {
    () => {
        concat!(
            "w AS (
    SELECT r.id, r.priority,
           r.throughput::float8 / count(*) OVER (PARTITION BY r.priority, r.owner) AS weight,
           l.n AS leased, c.at AS served
      FROM me CROSS JOIN runs r
      CROSS JOIN LATERAL (
          SELECT count(*) AS n FROM pairs p
           WHERE p.run_id = r.id AND p.state = 'leased' AND p.lease_until > now()) l
      CROSS JOIN LATERAL (
          SELECT max(p.claimed_at) AS at FROM pairs p
           WHERE p.run_id = r.id AND p.claimed_at IS NOT NULL) c
     WHERE r.state = 'active' AND ($6::int8 IS NULL OR r.id = $6)
       AND NOT (r.id = ANY(coalesce($7, '{}')))
       AND NOT EXISTS (SELECT 1 FROM refusals f WHERE f.run_id = r.id AND f.key_id = me.key_id)),
s AS (
    SELECT w.*, (w.leased + $3) / w.weight AS after, coalesce(w.id = $8, false) AS mine,
           -- The level's fair ratio with this claim added and without it, and its most starved
           -- run besides the worker's own (whose pair just ended).
           (sum(w.leased) OVER lv + $3)::float8 / sum(w.weight) OVER lv AS fair_after,
           (sum(w.leased) OVER lv)::float8 / sum(w.weight) OVER lv AS fair_now,
           min(CASE WHEN w.id IS DISTINCT FROM $8 THEN w.leased / w.weight END)
               OVER lv AS least_other
      FROM w WINDOW lv AS (PARTITION BY w.priority)),
o AS (
    SELECT s.id, row_number() OVER (ORDER BY s.priority DESC,
               s.mine AND s.after <= ",
            share_slack!(),
            " * s.fair_after
                 AND coalesce(s.least_other >= s.fair_now / ",
            share_slack!(),
            ", true) DESC,
               -- On a tie the worker moves to another run, the one served least recently
               -- first: when runs outnumber the slots, they take turns.
               s.after, s.mine, s.weight DESC, s.served NULLS FIRST, s.id) AS rank
      FROM s)"
        )
    };
}

/// The claimable pairs of the locked `run` in a given state (`$which`) of its active pairings
/// and within a tuning run's iterations in flight, in schedule order, at most `$3`, locked
/// `FOR UPDATE SKIP LOCKED` ([`CLAIM`]).
macro_rules! open_pairs {
    ($which:literal) => {
        concat!(
            "
    SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p
     WHERE p.run_id = (SELECT id FROM run) AND ",
            $which,
            "
       AND EXISTS (SELECT 1 FROM pairings g
                    WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active)
       AND ((SELECT applied FROM run) IS NULL OR p.spsa IS NOT NULL
            OR p.seq < (SELECT applied FROM run) + $5)
     ORDER BY p.seq LIMIT $3
    FOR UPDATE OF p SKIP LOCKED"
        )
    };
}

/// The claim, one statement: the worker checked ([`me!`]); the order of the runs it may claim
/// ([`claim_order!`]); the first run of it taken `FOR KEY SHARE` if it is still active (`run`,
/// with a tuning run's applied iterations); up to `$3` of its pairs in schedule order, pending
/// pairs of active pairings or expired leases, taken `FOR UPDATE SKIP LOCKED` (two claims
/// never wait on each other), a tuning run's at most `$5` iterations beyond those applied (a
/// pair whose iteration is logged already is always handed out again); each leased to worker
/// `$1` for `$4` seconds under a new fencing token, its attempt counted (`leased`). One row per
/// pair leased (one with no pair when none was), each with `known` (the worker's check) and
/// `rest`: when fewer than `$3` were leased, the other runs of the order, which
/// [`claim_from`] tries one after another by this statement again with `$6` the run, as
/// `fleet_claim` walked them; NULL otherwise. The run's lock is taken (and waited for) before
/// any pair is read: its id is the pairs' index condition, a scalar subquery.
///
/// Why the locks hold as in `fleet_claim`, which ran a statement per step and so read the pairs
/// in a snapshot taken after it had locked the run: here every CTE reads the one snapshot taken
/// when the statement began, and a row lock that finds a newer committed version of its row
/// re-checks that version against the statement's conditions (EvalPlanQual), the other tables'
/// rows staying as the snapshot saw them.
/// - A decision in progress holds the run's row `FOR UPDATE` from its start: the `FOR KEY
///   SHARE` of `run` waits for it. (`FOR KEY SHARE` does not wait for an update that leaves the
///   key alone, nor re-check the row then; a decision locks the row before it changes it, so
///   that is never the case here.) Once it is committed: if it ended the run, `run` is empty
///   (re-checked not active) and nothing is leased, as the function's `NOT FOUND` skipped it;
///   if it stopped pairings, the pairs it skipped (every pending or leased pair of a stopped
///   pairing, in the decision's own transaction) still look open in the snapshot, but each has
///   a newer version, which its lock re-checks and finds skipped. What the snapshot cannot see
///   is what became claimable after it began (a pair given back, a run reopened): the next
///   claim takes it.
/// - A decision that begins after `run` is locked waits for this statement's commit, then
///   sees the pairs leased here and skips them with the others, as it did a function's.
/// - Two claims racing for the same pairs: a pair one of them locked is skipped by the other
///   (`SKIP LOCKED`); once the first committed, the pair's newer version is leased, and the
///   other's lock re-checks it as neither pending nor expired: never leased twice. Each lease
///   draws its own token from the sequence.
/// - A tuning run's applied iterations are the snapshot's: at most as many as now (they only
///   grow), so no more than `$5` iterations beyond the applied ones are ever in flight.
///
/// The order is read without locks, as the function read it; only the runs tried are locked,
/// usually one.
const CLAIM: &str = concat!(
    "WITH ",
    me!(),
    ",\n",
    claim_order!(),
    ",
run AS (
    SELECT x.id, t.applied FROM runs x LEFT JOIN tune_state t ON t.run_id = x.id
     WHERE x.id = (SELECT o.id FROM o WHERE o.rank = 1) AND x.state = 'active'
    FOR KEY SHARE OF x),
pending AS (",
    open_pairs!("p.state = 'pending'"),
    "),
expired AS (",
    open_pairs!("p.state = 'leased' AND p.lease_until < now()"),
    "),
c AS (SELECT * FROM pending UNION ALL SELECT * FROM expired ORDER BY seq LIMIT $3),
leased AS (
    UPDATE pairs p SET state = 'leased', token = nextval('lease_tokens'), worker_id = $1,
           lease_until = now() + make_interval(secs => $4), claimed_at = clock_timestamp(),
           attempts = p.attempts + 1
      FROM c WHERE p.run_id = c.run_id AND p.pairing = c.pairing AND p.pair = c.pair
    RETURNING p.run_id, p.seq, p.pairing, p.pair, p.opening, p.token, p.attempts, p.spsa)
SELECT m.known, m.rest, l.* FROM (
    SELECT EXISTS (SELECT 1 FROM me) AS known,
           CASE WHEN (SELECT count(*) FROM leased) < $3
                THEN ARRAY(SELECT o.id FROM o WHERE o.rank > 1 ORDER BY o.rank) END AS rest) m
  LEFT JOIN leased l ON true"
);

/// One [`CLAIM`] statement: the pairs it leased and the runs to try next (none when it leased
/// `ask.n`). `Err` ([`NotAuthorized`]) when the worker's check failed (then nothing was written).
async fn claim_once(db: &impl Db, w: &WorkerId, ask: &ClaimAsk) -> Result<(Vec<Claim>, Vec<i64>)> {
    let lease = ask.lease.as_secs_f64();
    let rows = hot(
        db,
        CLAIM,
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&ask.n, Type::INT8),
            (&lease, Type::FLOAT8),
            (&ask.tune_in_flight, Type::INT8),
            (&ask.only, Type::INT8),
            (&ask.skip, Type::INT8_ARRAY),
            (&ask.current, Type::INT8),
        ],
    )
    .await
    .context("cannot claim work")?;
    let first = rows.first().context("claim: no answer")?;
    known(first, w)?;
    let rest: Option<Vec<i64>> = first.try_get("rest")?;
    let mut pairs = Vec::new();
    for r in &rows {
        if r.try_get::<_, Option<i64>>("run_id")?.is_some() {
            pairs.push(Claim::from_row(r)?);
        }
    }
    Ok((pairs, rest.unwrap_or_default()))
}

/// [`claim`] as `ask` asks it, for a worker that plays run `ask.current` now: the highest
/// priority first, then the run furthest below its share, and the worker kept on `current`
/// while that run is within its share (so its engines need not be started again); see
/// [`claim_order!`]. A tuning run hands out at most `ask.tune_in_flight` iterations beyond
/// those applied ([`TUNE_IN_FLIGHT`] by default; 1 plays its iterations one after another, the
/// same ones whatever the timing). `Err` ([`NotAuthorized`], nothing leased) when the worker's
/// secret or key does not hold.
///
/// One statement ([`CLAIM`]) when the first run of the order gives the pairs; else the same
/// statement again for each further run of the order (`only` that run), each in a snapshot of
/// its own and committed on its own, until `ask.n` are leased. A further statement that fails
/// (the connection lost, the worker stopped meanwhile) ends the walk with the pairs leased
/// before it, which are this worker's (`fleet_claim`, one transaction, gave them back; an error
/// here would leave them leased, unknown to the worker, until their lease expired), or with its
/// error when there are none.
pub async fn claim_from(db: &impl Db, w: &WorkerId, ask: &ClaimAsk) -> Result<Vec<Claim>> {
    let (mut out, rest) = claim_once(db, w, ask).await?;
    for run in rest {
        let want = ask.n - out.len() as i64;
        if want <= 0 {
            break;
        }
        let next = ClaimAsk { only: Some(run), skip: Vec::new(), current: None, n: want, ..*ask };
        match claim_once(db, w, &next).await {
            Ok((pairs, _)) => out.extend(pairs),
            Err(e) if out.is_empty() => return Err(e),
            Err(_) => break,
        }
    }
    out.sort_by_key(|c| (c.run_id, c.seq));
    Ok(out)
}

/// A worker's call whose id, secret or key does not hold: an unknown worker, a wrong secret, a
/// revoked key or a stopped worker (the server answers it 401).
#[derive(Debug)]
pub struct NotAuthorized(pub i64);

impl std::fmt::Display for NotAuthorized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "worker {}: not registered with a valid key (revoked, stopped, or a wrong secret)",
            self.0
        )
    }
}

impl std::error::Error for NotAuthorized {}

/// A worker's call refused as the database function refused it, with the same message: a key
/// that does not register a worker (the server answers it 401), a run that is not there (404),
/// a report whose game records are not the pair's games or a tuning pair with no draws (422, as
/// the functions' `data_exception`).
#[derive(Debug)]
pub enum Refused {
    /// The registration's key: none, unknown or revoked.
    Key(String),
    /// No such run.
    NoRun(i64),
    /// An artifact no approved, active run names (its SHA-256).
    NotNamed(String),
    /// An artifact's chunk that is not stored (its SHA-256 and number).
    NoChunk(String, i32),
    /// A reported game record that is not the pair's game between the pairing's engines, or
    /// whose result is not one: why, in the words of `fleet_record_read`.
    Record(String),
    /// A tuning pair with no draws to start its iteration from (its run and pair).
    NoDraws(i64, i32),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Key(why) | Refused::Record(why) => f.write_str(why),
            Refused::NoRun(run) => write!(f, "no run {run} in the database"),
            Refused::NotNamed(sha) => {
                write!(f, "artifact {sha} belongs to no approved, active run")
            }
            Refused::NoChunk(sha, n) => write!(f, "artifact {sha} has no chunk {n}"),
            Refused::NoDraws(run, pair) => {
                write!(f, "run {run}: pair {} has no tuning draws", pair + 1)
            }
        }
    }
}

impl std::error::Error for Refused {}

/// The heartbeat, one statement: the worker checked (its secret's SHA-256, its key not revoked,
/// itself not stopped), noted alive, and its leases of the given tokens renewed, on active runs
/// only; `known` false when the check failed (then nothing was written).
const HEARTBEAT: &str = concat!(
    "WITH ",
    me!(),
    ",
beat AS (
    UPDATE workers SET heartbeat_at = now() WHERE id IN (SELECT id FROM me) RETURNING 1),
renewed AS (
    UPDATE pairs p SET lease_until = now() + make_interval(secs => $4)
      FROM runs r
     WHERE EXISTS (SELECT 1 FROM me) AND r.id = p.run_id AND r.state = 'active'
       AND p.worker_id = $1 AND p.state = 'leased' AND p.token = ANY($3)
    RETURNING p.token)
SELECT EXISTS (SELECT 1 FROM me) AS known, ARRAY(SELECT token FROM renewed) AS tokens"
);

/// Renews the leases of `tokens` held by `w` (and notes the worker alive); returns the tokens
/// whose lease is still valid. A token missing from the answer lost its lease. `Err`
/// ([`NotAuthorized`]) when the worker's secret or key does not hold.
pub async fn heartbeat(
    db: &impl Db,
    w: &WorkerId,
    tokens: &[i64],
    lease: Duration,
) -> Result<Vec<i64>> {
    let rows = hot(
        db,
        HEARTBEAT,
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&tokens, Type::INT8_ARRAY),
            (&lease.as_secs_f64(), Type::FLOAT8),
        ],
    )
    .await
    .context("heartbeat")?;
    let row = rows.first().context("heartbeat: no answer")?;
    known(row, w)?;
    let mut alive: Vec<i64> = row.try_get("tokens")?;
    alive.sort_unstable();
    Ok(alive)
}

/// Giving leases back, one statement: the worker checked ([`me!`]) and its leases of the
/// given tokens given back; what `fleet_release` did.
const RELEASE: &str = concat!(
    "WITH ",
    me!(),
    ",
back AS (
    ",
    give_back!(),
    " AND token = ANY($3)
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known, (SELECT count(*) FROM back) AS n"
);

/// Gives leased pairs back (a worker that stops): pending again, with no token, so any worker
/// takes them at once. Returns how many were given back (a token this worker does not hold is
/// left alone). `Err` ([`NotAuthorized`]) when the worker's secret or key does not hold.
pub async fn release(db: &Client, w: &WorkerId, tokens: &[i64]) -> Result<i64> {
    let row = one(
        db,
        RELEASE,
        &[(&w.id, Type::INT8), (w.secret(), Type::TEXT), (&tokens, Type::INT8_ARRAY)],
    )
    .await
    .context("cannot give pairs back")?;
    known(&row, w)?;
    Ok(row.try_get("n")?)
}

/// A refusal, one statement: the worker checked ([`me!`]), the run's row taken `FOR UPDATE`
/// (as `fleet_refuse` took it: refusals of a run, and its decisions, one after the other), the
/// worker's leases of the run among the given tokens given back, and the refusal recorded for
/// its key (`reason` cut to 2,000 characters; a key that refuses again replaces its reason).
/// `state` NULL when there is no such run (then nothing was written).
const REFUSE: &str = concat!(
    "WITH ",
    me!(),
    ",
run AS (
    SELECT r.id, r.state FROM runs r WHERE r.id = $3 AND EXISTS (SELECT 1 FROM me) FOR UPDATE),
back AS (
    ",
    give_back!(),
    " AND run_id IN (SELECT id FROM run) AND token = ANY($5)
    RETURNING 1),
noted AS (
    INSERT INTO refusals (run_id, key_id, worker_id, reason)
    SELECT run.id, me.key_id, me.id, left($4, 2000) FROM run, me
    ON CONFLICT (run_id, key_id) DO UPDATE SET reason = excluded.reason,
        worker_id = excluded.worker_id, at = now()
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known, (SELECT state FROM run) AS state"
);

/// A run that enough distinct keys refused (`refusal_limit`) fails, with their reasons, if it
/// is active or pending; returns its state then when it failed it. The second statement of a
/// refusal, after [`REFUSE`] committed: one statement sees only the refusals committed when it
/// began, so two keys refusing a run at once would each count the other's refusal out and
/// leave the run active for ever; this statement begins after its refusal was committed, so
/// the last refusal of the run to commit counts them all (`fleet_refuse` counted in a
/// statement of its own after taking the run's row, which saw them too).
const REFUSALS_FAIL: &str = "\
UPDATE runs r SET state = 'failed', finished_at = clock_timestamp(),
       stop_reason = left(format('refused by %s worker(s): %s', t.n, t.why), 4000)
  FROM (SELECT count(*) AS n, string_agg(k.name || ': ' || f.reason, '; ' ORDER BY f.at) AS why
          FROM refusals f JOIN worker_keys k ON k.id = f.key_id WHERE f.run_id = $1) t
 WHERE r.id = $1 AND r.state IN ('active', 'pending') AND t.n >= r.refusal_limit
RETURNING r.state";

/// Worker `w` cannot play run `run` (`reason`, one line): its leases `tokens` of the run go
/// back, the refusal is recorded, and the run fails once enough distinct workers refused it.
/// Returns the run's state after. `Err`: [`NotAuthorized`] when the worker's secret or key does
/// not hold, [`Refused::NoRun`] when there is no such run (nothing written either way).
pub async fn refuse(
    db: &Client,
    w: &WorkerId,
    run: i64,
    reason: &str,
    tokens: &[i64],
) -> Result<String> {
    let row = one(
        db,
        REFUSE,
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&run, Type::INT8),
            (&reason, Type::TEXT),
            (&tokens, Type::INT8_ARRAY),
        ],
    )
    .await
    .context("cannot record the refusal")?;
    known(&row, w)?;
    let Some(state) = row.try_get::<_, Option<String>>("state")? else {
        return Err(Refused::NoRun(run).into());
    };
    if state != "active" && state != "pending" {
        return Ok(state);
    }
    let failed = opt(db, REFUSALS_FAIL, &[(&run, Type::INT8)])
        .await
        .context("cannot fail the refused run")?;
    Ok(match failed {
        Some(r) => r.try_get("state")?,
        None => state,
    })
}

/// An incident, one statement: the worker checked ([`me!`]), the incident recorded (on a run
/// that exists; `what` cut to 2,000 characters) and the pair given back if this worker holds it
/// under the token; what `fleet_incident` did.
const INCIDENT: &str = concat!(
    "WITH ",
    me!(),
    ",
noted AS (
    INSERT INTO incidents (run_id, pairing, pair, worker_id, key_id, what)
    SELECT $3, $4, $5, me.id, me.key_id, left($7, 2000) FROM me
     WHERE EXISTS (SELECT 1 FROM runs WHERE id = $3)
    RETURNING 1),
back AS (
    ",
    give_back!(),
    " AND run_id = $3 AND pairing = $4 AND pair = $5 AND token = $6
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known"
);

/// A pair `w` holds could not be stored (`what`, one line): recorded, and the pair given back.
/// `Err` ([`NotAuthorized`]) when the worker's secret or key does not hold (nothing written).
pub async fn incident(db: &Client, w: &WorkerId, c: &Claim, what: &str) -> Result<()> {
    let params = pair_call(w, (&c.run_id, &c.pairing, &c.pair, &c.token), &[(&what, Type::TEXT)]);
    let row = one(db, INCIDENT, &params).await.context("cannot record the incident")?;
    known(&row, w)
}
