//! What `runner serve` reads besides what status and pull read: the workers table and a cheap
//! change counter per run (its live pages poll it). Only columns a `fleet_reader` may select.

use anyhow::{Context, Result};
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::{one, rows};

/// One worker as the table holds it, with its key's name.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WorkerRow {
    pub id: i64,
    pub host: String,
    pub key_name: Option<String>,
    pub concurrency: i32,
    pub version: Option<String>,
    pub started: Option<String>,
    pub heartbeat: Option<String>,
    pub stopped: Option<String>,
    /// Heartbeat within its lease and not stopped.
    pub alive: bool,
}

const STAMP: &str = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";

/// The newest `limit` workers, newest first.
pub async fn workers(db: &Client, limit: i64) -> Result<Vec<WorkerRow>> {
    let sql = format!(
        "SELECT w.id, w.host, k.name AS key_name, w.concurrency, w.version, \
           to_char(w.started_at AT TIME ZONE 'UTC', {STAMP}) AS started, \
           to_char(w.heartbeat_at AT TIME ZONE 'UTC', {STAMP}) AS heartbeat, \
           to_char(w.stopped_at AT TIME ZONE 'UTC', {STAMP}) AS stopped, \
           (w.stopped_at IS NULL AND w.heartbeat_at > now() - make_interval(secs => w.lease_secs)) \
             AS alive \
         FROM workers w LEFT JOIN worker_keys k ON k.id = w.key_id ORDER BY w.id DESC LIMIT $1"
    );
    let found = rows(db, &sql, &[(&limit, Type::INT8)]).await.context("cannot read the workers")?;
    let mut out = Vec::with_capacity(found.len());
    for r in &found {
        out.push(WorkerRow {
            id: r.try_get("id")?,
            host: r.try_get("host")?,
            key_name: r.try_get("key_name")?,
            concurrency: r.try_get("concurrency")?,
            version: r.try_get("version")?,
            started: r.try_get("started")?,
            heartbeat: r.try_get("heartbeat")?,
            stopped: r.try_get("stopped")?,
            alive: r.try_get::<_, Option<bool>>("alive")?.unwrap_or(false),
        });
    }
    Ok(out)
}

/// A number that changes whenever anything a page shows of the fleet's runs changes: the
/// newest stored game and the runs' states (a cancelled or decided run changes its state).
pub async fn change_counter(db: &Client) -> Result<String> {
    let r = one(
        db,
        "SELECT coalesce((SELECT max(id) FROM games), 0)::text || '/' || \
           coalesce((SELECT string_agg(id::text || state, ',' ORDER BY id) FROM runs \
             WHERE state IN ('pending', 'active')), '') AS c",
        &[],
    )
    .await
    .context("cannot read the change counter")?;
    Ok(r.try_get("c")?)
}
