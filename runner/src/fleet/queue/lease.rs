//! A worker's side of the queue: registering under a key, claiming, renewing and giving back
//! leases, refusing a run, recording an incident.
//!
//! The server's own statements, each one data-modifying statement that checks the worker as
//! the database's `SECURITY DEFINER` functions did (its secret's SHA-256, its key not revoked,
//! itself not stopped: [`me!`]) and writes nothing when the check fails: the registration,
//! the check alone, a worker stopping, the heartbeat, a release, a refusal (and the statement
//! after it that fails a run enough keys refused) and an incident. The claim still calls the
//! function (`fleet_claim`), which stays in the schema with the others for a server of the
//! version before during a rolling deploy. (A tuning pair's iteration is in `tuning.rs`.)

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

/// A registration, one statement: the key found by its SHA-256, and when it is not revoked a worker inserted with a new secret (two random UUIDs' hex, as `fleet_register`
/// made it; only its SHA-256 is kept) and what its machine is: host cut to 200 characters,
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
    let version = env!("CARGO_PKG_VERSION");
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
    claim_from(db, w, only, skip, None, n, lease, TUNE_IN_FLIGHT).await
}

/// [`claim`] for a worker that plays run `current` now: the database serves the highest
/// priority first, then the run furthest below its share, and keeps the worker on `current`
/// while that run is within its share (so its engines need not be started again). A tuning
/// run hands out at most `tune_in_flight` iterations beyond those applied ([`TUNE_IN_FLIGHT`]
/// by default; 1 plays its iterations one after another, the same ones whatever the timing).
#[allow(clippy::too_many_arguments)]
pub async fn claim_from(
    db: &impl Db,
    w: &WorkerId,
    only: Option<i64>,
    skip: &[i64],
    current: Option<i64>,
    n: i64,
    lease: Duration,
    tune_in_flight: i64,
) -> Result<Vec<Claim>> {
    let rows = hot(
        db,
        "SELECT run_id, seq, pairing, pair, opening, token, attempts, spsa \
         FROM fleet_claim($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&only, Type::INT8),
            (&skip, Type::INT8_ARRAY),
            (&n, Type::INT8),
            (&lease.as_secs_f64(), Type::FLOAT8),
            (&tune_in_flight, Type::INT8),
            (&current, Type::INT8),
        ],
    )
    .await
    .context("cannot claim work")?;
    let mut out = rows
        .iter()
        .map(|r| {
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
        })
        .collect::<Result<Vec<Claim>, tokio_postgres::Error>>()?;
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
