//! What submitters and approvers do, through the database's functions, which check who calls:
//! submit (the run is the caller's; it waits for approval unless the caller is an approver),
//! approve, cancel and purge (owner or approver), worker keys (approvers).

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient};

use super::report::{Settled, settle_as_owner};
use super::share::Share;
use super::{one, rows};

/// A new run: its submission (stored as given), what the database decides with, its pairings
/// and its game pairs in schedule order.
pub struct NewRun<'a> {
    pub kind: &'a str,
    pub submission: &'a Value,
    pub plan_hash: &'a str,
    /// `{"sprt": .., "race": .., "spsa": ..}` (see `fleet::decide::judge_config`).
    pub judge: &'a Value,
    pub labels: &'a [String],
    /// Each pairing's first and second engine, as game records name them.
    pub engines: &'a [(String, String)],
    /// `(pairing, pair, opening)` per pair, in schedule order.
    pub jobs: &'a [(i32, i32, i32)],
    /// A tuning run's starting theta.
    pub theta: Option<&'a Value>,
    /// A tuning run's random draws per pair (schedule order), else empty.
    pub draws: &'a [Value],
    /// Distinct workers that must refuse the run before it fails.
    pub refusal_limit: i32,
}

/// Stores a run and its schedule at the default priority and throughput; returns its id and
/// whether it waits for approval.
pub async fn insert_run(db: &impl GenericClient, run: &NewRun<'_>) -> Result<(i64, bool)> {
    insert_run_with(db, run, Share::default()).await
}

/// [`insert_run`] at priority and throughput `share` (a priority above 0 needs an approver).
pub async fn insert_run_with(
    db: &impl GenericClient,
    run: &NewRun<'_>,
    share: Share,
) -> Result<(i64, bool)> {
    let first: Vec<&str> = run.engines.iter().map(|e| e.0.as_str()).collect();
    let second: Vec<&str> = run.engines.iter().map(|e| e.1.as_str()).collect();
    let pairing: Vec<i32> = run.jobs.iter().map(|j| j.0).collect();
    let pair: Vec<i32> = run.jobs.iter().map(|j| j.1).collect();
    let opening: Vec<i32> = run.jobs.iter().map(|j| j.2).collect();
    let draws: Option<&[Value]> = (!run.draws.is_empty()).then_some(run.draws);
    let row = one(
        db,
        "SELECT id, state FROM fleet_submit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
         $13, $14, $15)",
        &[
            (&run.kind, Type::TEXT),
            (run.submission, Type::JSONB),
            (&run.plan_hash, Type::TEXT),
            (run.judge, Type::JSONB),
            (&run.labels, Type::TEXT_ARRAY),
            (&first, Type::TEXT_ARRAY),
            (&second, Type::TEXT_ARRAY),
            (&pairing, Type::INT4_ARRAY),
            (&pair, Type::INT4_ARRAY),
            (&opening, Type::INT4_ARRAY),
            (&run.theta, Type::JSONB),
            (&draws, Type::JSONB_ARRAY),
            (&run.refusal_limit, Type::INT4),
            (&share.priority, Type::INT4),
            (&share.throughput, Type::INT4),
        ],
    )
    .await
    .context("cannot store the run")?;
    let state: String = row.try_get("state")?;
    Ok((row.try_get("id")?, state == "pending"))
}

/// Approves a pending run; returns its state before (`pending` when this call approved it).
pub async fn approve(db: &Client, run: i64) -> Result<String> {
    let row = one(db, "SELECT fleet_approve($1) AS old", &[(&run, Type::INT8)])
        .await
        .context("cannot approve the run")?;
    Ok(row.try_get("old")?)
}

/// Cancels a pending or active run (owner or approver); returns its state before.
pub async fn cancel(db: &Client, run: i64) -> Result<String> {
    let row = one(db, "SELECT fleet_cancel($1) AS old", &[(&run, Type::INT8)])
        .await
        .context("cannot cancel the run")?;
    Ok(row.try_get("old")?)
}

/// Removes what worker key `key` stored in run `run` and hands those pairs out again; the run
/// is then decided anew. Returns the pairs given back and the run after.
pub async fn purge(db: &mut Client, run: i64, key: &str) -> Result<(i64, Settled)> {
    let tx = db.transaction().await?;
    let n: i64 =
        one(&tx, "SELECT fleet_purge($1, $2) AS n", &[(&run, Type::INT8), (&key, Type::TEXT)])
            .await
            .context("cannot purge the run")?
            .try_get("n")?;
    tx.commit().await?;
    let settled = settle_as_owner(db, run).await?;
    Ok((n, settled))
}

/// Issues a worker key named `name`; returns the key (only its hash is stored).
pub async fn key_add(db: &Client, name: &str) -> Result<String> {
    let row = one(db, "SELECT fleet_key_add($1) AS key", &[(&name, Type::TEXT)])
        .await
        .context("cannot issue the key")?;
    Ok(row.try_get("key")?)
}

/// Revokes worker key `name`; returns how many leased pairs went back to the queue.
pub async fn key_revoke(db: &Client, name: &str) -> Result<i64> {
    let row = one(db, "SELECT fleet_key_revoke($1) AS n", &[(&name, Type::TEXT)])
        .await
        .context("cannot revoke the key")?;
    Ok(row.try_get("n")?)
}

/// A worker key as `runner worker-key list` shows it (never the key itself).
#[derive(Clone, Debug, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct KeyRow {
    pub name: String,
    pub created_by: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`; none while the key is valid.
    pub revoked: Option<String>,
    /// Worker processes registered with it.
    pub workers: i64,
    /// Pairs its workers stored.
    pub pairs: i64,
}

/// Every worker key.
pub async fn keys(db: &Client) -> Result<Vec<KeyRow>> {
    let found = rows(
        db,
        "SELECT name, created_by, \
           to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created, \
           to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS revoked, \
           workers, pairs FROM fleet_keys()",
        &[],
    )
    .await
    .context("cannot read the worker keys")?;
    found
        .iter()
        .map(|r| {
            Ok(KeyRow {
                name: r.try_get("name")?,
                created_by: r.try_get("created_by")?,
                created: r.try_get("created")?,
                revoked: r.try_get("revoked")?,
                workers: r.try_get("workers")?,
                pairs: r.try_get("pairs")?,
            })
        })
        .collect()
}
