//! What `runner status`, `runner pull` and a worker read: runs, pairings and their counts,
//! games, progress, refusals, a tuning run's state. Rows are read by column name.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient, Row};

use super::report::PairingCounts;
use super::{one, opt, rows};

/// Each pairing's counts in run `$1` (only pairing `$2` when not null): [`counts!`].
pub(super) const COUNTS: &str = counts!("$1", "$2::int");

/// Each pairing's counts (of pairing `only` when given), summed over workers.
pub async fn pairing_counts(
    db: &impl GenericClient,
    run: i64,
    only: Option<i32>,
) -> Result<Vec<PairingCounts>> {
    let found = rows(db, COUNTS, &[(&run, Type::INT8), (&only, Type::INT4)])
        .await
        .context("cannot read the counts")?;
    Ok(found.iter().map(PairingCounts::from_row).collect::<Result<_, _>>()?)
}

/// Whether run `run` has a pair pending or leased (through the partial indexes of each).
pub async fn has_open_pairs(db: &impl GenericClient, run: i64) -> Result<bool> {
    Ok(one(
        db,
        "SELECT (EXISTS (SELECT 1 FROM (SELECT seq FROM pairs WHERE run_id = $1 \
                   AND state = 'pending' ORDER BY seq LIMIT 1) y) \
              OR EXISTS (SELECT 1 FROM pairs WHERE run_id = $1 AND state = 'leased')) AS open",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the run's open pairs")?
    .try_get("open")?)
}

/// What an idle worker waits for: the runs with open pairs, the soonest a lease among them
/// expires, and how long to wait before asking again when the server says (else
/// `fleet::worker::IDLE_POLL`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Waiting {
    pub runs: Vec<i64>,
    pub soonest: Option<Duration>,
    pub poll: Option<Duration>,
}

/// Active runs (of `only` when given, never those in `skip` nor those worker `worker`'s key
/// refused) that still have open pairs, and the soonest a lease among them expires (a worker
/// with nothing to claim waits for it).
pub async fn outstanding(
    db: &Client,
    worker: i64,
    only: Option<i64>,
    skip: &[i64],
) -> Result<Waiting> {
    let found = rows(
        db,
        // Per run, through the partial indexes (never a scan of a run's stored pairs).
        "SELECT r.id, extract(epoch FROM l.soonest - now())::float8 AS wait \
             FROM runs r, LATERAL (SELECT min(lease_until) AS soonest FROM pairs \
               WHERE run_id = r.id AND state = 'leased') l \
             WHERE r.state = 'active' AND ($1::bigint IS NULL OR r.id = $1) \
               AND NOT (r.id = ANY($2::bigint[])) \
               AND NOT EXISTS (SELECT 1 FROM refusals f JOIN workers w ON w.key_id = f.key_id \
                 WHERE f.run_id = r.id AND w.id = $3) \
               AND (l.soonest IS NOT NULL OR EXISTS (SELECT 1 FROM (SELECT seq FROM pairs \
                 WHERE run_id = r.id AND state = 'pending' ORDER BY seq LIMIT 1) x)) \
             ORDER BY r.id",
        &[(&only, Type::INT8), (&skip, Type::INT8_ARRAY), (&worker, Type::INT8)],
    )
    .await
    .context("cannot read the runs")?;
    let mut ids = Vec::with_capacity(found.len());
    let mut soonest: Option<f64> = None;
    for r in &found {
        ids.push(r.try_get("id")?);
        if let Some(s) = r.try_get::<_, Option<f64>>("wait")? {
            soonest = Some(soonest.map_or(s, |m| m.min(s)));
        }
    }
    let soonest = soonest.map(|s| Duration::from_secs_f64(s.clamp(0.0, 3600.0)));
    Ok(Waiting { runs: ids, soonest, poll: None })
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
    /// The role that submitted it.
    pub owner: String,
    /// The approver who let it start (the owner itself when an approver submitted it).
    pub approved_by: Option<String>,
}

/// A row of [`RUN_COLUMNS`] (or of a statement naming the same columns).
pub(super) fn run_row(r: &Row) -> Result<RunRow, tokio_postgres::Error> {
    Ok(RunRow {
        id: r.try_get("id")?,
        kind: r.try_get("kind")?,
        state: r.try_get("state")?,
        stop_reason: r.try_get("stop_reason")?,
        submission: r.try_get("submission")?,
        plan_hash: r.try_get("plan_hash")?,
        created: r.try_get("created")?,
        finished: r.try_get("finished")?,
        owner: r.try_get("owner")?,
        approved_by: r.try_get("approved_by")?,
    })
}

const RUN_COLUMNS: &str = "id, kind, state, stop_reason, submission, plan_hash, owner, \
    approved_by, \
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created, \
    to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS finished";

/// Run `id`, if there is one.
pub async fn run(db: &Client, id: i64) -> Result<Option<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
    let found = opt(db, &sql, &[(&id, Type::INT8)]).await.context("cannot read the run")?;
    Ok(found.as_ref().map(run_row).transpose()?)
}

/// Every run, newest first (at most `limit`).
pub async fn runs(db: &Client, limit: i64) -> Result<Vec<RunRow>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id DESC LIMIT $1");
    let found = rows(db, &sql, &[(&limit, Type::INT8)]).await.context("cannot read the runs")?;
    Ok(found.iter().map(run_row).collect::<Result<_, _>>()?)
}

/// Order of [`games`]: the schedule's (match, sweep) or the order reports were stored (tune).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameOrder {
    Schedule,
    Reported,
}

/// A stored game: its record and the worker key that reported it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StoredGame {
    pub record: Value,
    pub key_name: Option<String>,
    pub worker_id: Option<i64>,
}

/// Every stored game record of a run.
pub async fn games(db: &Client, run: i64, order: GameOrder) -> Result<Vec<StoredGame>> {
    let sql = match order {
        GameOrder::Schedule => {
            "SELECT g.record, g.worker_id, k.name AS key_name FROM games g \
               JOIN pairs p ON p.run_id = g.run_id AND p.pairing = g.pairing AND p.pair = g.pair \
               LEFT JOIN workers w ON w.id = g.worker_id \
               LEFT JOIN worker_keys k ON k.id = w.key_id \
             WHERE g.run_id = $1 ORDER BY p.seq, g.game"
        }
        GameOrder::Reported => {
            "SELECT g.record, g.worker_id, k.name AS key_name FROM games g \
               LEFT JOIN workers w ON w.id = g.worker_id \
               LEFT JOIN worker_keys k ON k.id = w.key_id \
             WHERE g.run_id = $1 ORDER BY g.id"
        }
    };
    let found = rows(db, sql, &[(&run, Type::INT8)]).await.context("cannot read the games")?;
    found
        .iter()
        .map(|r| {
            Ok(StoredGame {
                record: r.try_get("record")?,
                key_name: r.try_get("key_name")?,
                worker_id: r.try_get("worker_id")?,
            })
        })
        .collect()
}

/// A pairing's label, verdict and why (status and pull).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairingRow {
    pub pairing: i32,
    pub label: String,
    pub active: bool,
    pub verdict: Option<String>,
    pub why: Option<String>,
    /// The games a stop was decided on; a racing drop's best point and test statistic.
    pub stop_games: Option<i64>,
    pub stop_best: Option<i32>,
    pub stop_z: Option<f64>,
}

pub async fn pairings(db: &Client, run: i64) -> Result<Vec<PairingRow>> {
    let found = rows(
        db,
        "SELECT pairing, label, active, verdict, why, stop_games, stop_best, stop_z \
         FROM pairings WHERE run_id = $1 ORDER BY pairing",
        &[(&run, Type::INT8)],
    )
    .await?;
    found
        .iter()
        .map(|r| {
            Ok(PairingRow {
                pairing: r.try_get("pairing")?,
                label: r.try_get("label")?,
                active: r.try_get("active")?,
                verdict: r.try_get("verdict")?,
                why: r.try_get("why")?,
                stop_games: r.try_get("stop_games")?,
                stop_best: r.try_get("stop_best")?,
                stop_z: r.try_get("stop_z")?,
            })
        })
        .collect()
}

/// A worker key's refusal of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub key_name: String,
    pub reason: String,
}

/// The refusals of run `run`, oldest first.
pub async fn refusals(db: &Client, run: i64) -> Result<Vec<Refusal>> {
    let found = rows(
        db,
        "SELECT k.name, f.reason FROM refusals f JOIN worker_keys k ON k.id = f.key_id \
         WHERE f.run_id = $1 ORDER BY f.at",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the refusals")?;
    found
        .iter()
        .map(|r| Ok(Refusal { key_name: r.try_get("name")?, reason: r.try_get("reason")? }))
        .collect()
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
    let steps = steps.iter().map(|r| r.try_get("step")).collect::<Result<_, _>>()?;
    Ok(Some((row.try_get("theta")?, steps)))
}

/// The logged iterations of a tuning run, in k order.
pub async fn tune_iterations(db: &Client, run: i64) -> Result<Vec<Value>> {
    let found = rows(
        db,
        "SELECT spsa FROM pairs WHERE run_id = $1 AND spsa IS NOT NULL ORDER BY seq",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(found.iter().map(|r| r.try_get("spsa")).collect::<Result<_, _>>()?)
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
        "SELECT count(*) AS total, count(*) FILTER (WHERE state = 'done') AS done, \
               count(*) FILTER (WHERE state = 'leased') AS leased, \
               count(*) FILTER (WHERE state = 'skipped') AS skipped FROM pairs WHERE run_id = $1",
        &[(&run, Type::INT8)],
    )
    .await?;
    let w = one(
        db,
        "SELECT count(DISTINCT w.id) AS alive FROM workers w JOIN pairs p ON p.worker_id = w.id \
             WHERE p.run_id = $1 AND p.state = 'leased' AND w.stopped_at IS NULL \
               AND w.heartbeat_at > now() - make_interval(secs => w.lease_secs)",
        &[(&run, Type::INT8)],
    )
    .await?;
    let g = one(
        db,
        "SELECT count(*) FILTER (WHERE reported_at > now() - interval '1 hour') AS last_hour, \
               coalesce(extract(epoch FROM max(reported_at) - min(reported_at)), 0)::float8 \
                 AS secs \
             FROM games WHERE run_id = $1 AND game = 1",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(Progress {
        pairs_total: r.try_get("total")?,
        pairs_done: r.try_get("done")?,
        pairs_leased: r.try_get("leased")?,
        pairs_skipped: r.try_get("skipped")?,
        workers_alive: w.try_get("alive")?,
        pairs_last_hour: g.try_get("last_hour")?,
        reporting_secs: g.try_get("secs")?,
    })
}
