//! What is read about workers: every worker process with its machine, state and what it did
//! (`runner workers`), each worker key's pairs of a run (the per-worker statistics of `runner
//! status`), whether anyone can play a run; and removing a finished run (`runner delete`).
//! Rows are read by column name.

use anyhow::{Context, Result};
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::rows;

/// Heartbeats a worker may miss before it counts as lost: a lease period each.
pub const LOST_AFTER_LEASES: f64 = 3.0;

/// A worker process as `runner workers` shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerRow {
    pub id: i64,
    /// The key it registered under (None: a worker of schema version 1, before keys).
    pub key_name: Option<String>,
    pub host: String,
    pub cpu: Option<String>,
    pub cores: Option<i32>,
    pub concurrency: i32,
    pub version: Option<String>,
    /// Its key was revoked.
    pub blocked: bool,
    pub stopped: bool,
    /// Its last heartbeat is within [`LOST_AFTER_LEASES`] lease periods.
    pub beating: bool,
    /// The last heartbeat (UTC) and how long ago, in seconds.
    pub heartbeat: String,
    pub heartbeat_ago: f64,
    /// Seconds since it registered.
    pub age: f64,
    /// Runs it holds a lease of now.
    pub runs_now: i64,
    pub pairs: i64,
    pub games: i64,
    pub crashes: i64,
    pub time_losses: i64,
    /// Its pairs weighted by exp(-age / 1 hour).
    pub recent: f64,
    /// Its key's refusals that this process made: (run, reason).
    pub refusals: Vec<(i64, String)>,
    /// The bench speed of each engine it benched, the latest (engine name, nodes per second).
    pub benches: Vec<(String, i64)>,
}

/// Workers, by key name then id: every one with `all`, else those alive or not stopped and
/// seen within a day, and those stopped within the last hour.
pub async fn workers(db: &Client, all: bool) -> Result<Vec<WorkerRow>> {
    let found = rows(
        db,
        "SELECT w.id, k.name AS key_name, w.host, w.cpu, w.cores, w.concurrency, w.version, \
           coalesce(k.revoked_at IS NOT NULL, false) AS blocked, \
           w.stopped_at IS NOT NULL AS stopped, \
           w.heartbeat_at > now() - make_interval(secs => $2 * w.lease_secs) AS beating, \
           to_char(w.heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') \
             AS heartbeat, \
           extract(epoch FROM now() - w.heartbeat_at)::float8 AS heartbeat_ago, \
           extract(epoch FROM now() - w.started_at)::float8 AS age, \
           (SELECT count(DISTINCT p.run_id) FROM pairs p \
             WHERE p.worker_id = w.id AND p.state = 'leased') AS runs_now, \
           coalesce(t.pairs, 0)::bigint AS pairs, coalesce(t.games, 0)::bigint AS games, \
           coalesce(t.crashes, 0)::bigint AS crashes, \
           coalesce(t.time_losses, 0)::bigint AS time_losses, \
           coalesce(t.recent, 0)::float8 AS recent, \
           coalesce((SELECT array_agg(f.run_id ORDER BY f.at) FROM refusals f \
             WHERE f.worker_id = w.id), '{}') AS refused_runs, \
           coalesce((SELECT array_agg(f.reason ORDER BY f.at) FROM refusals f \
             WHERE f.worker_id = w.id), '{}') AS refused_why, \
           coalesce((SELECT array_agg(b.engine ORDER BY b.engine) FROM (SELECT DISTINCT ON \
             (l.engine) l.engine, l.nps FROM engine_loads l WHERE l.worker_id = w.id \
             AND l.nps IS NOT NULL ORDER BY l.engine, l.at DESC) b), '{}') AS bench_engines, \
           coalesce((SELECT array_agg(b.nps ORDER BY b.engine) FROM (SELECT DISTINCT ON \
             (l.engine) l.engine, l.nps FROM engine_loads l WHERE l.worker_id = w.id \
             AND l.nps IS NOT NULL ORDER BY l.engine, l.at DESC) b), '{}') AS bench_nps \
         FROM workers w LEFT JOIN worker_keys k ON k.id = w.key_id \
         LEFT JOIN (SELECT worker_id, sum(ll + ld + dd + wd + ww) AS pairs, \
               sum(wins + draws + losses) AS games, sum(crashes) AS crashes, \
               sum(time_losses) AS time_losses, \
               sum(recent * exp(-least(greatest(extract(epoch FROM now() - recent_at)::float8, \
                   0) / 3600.0, 700))) AS recent \
             FROM tallies GROUP BY worker_id) t ON t.worker_id = w.id \
         WHERE $1 OR w.heartbeat_at > now() - interval '1 hour' \
            OR (w.stopped_at IS NULL AND w.heartbeat_at > now() - interval '1 day') \
         ORDER BY k.name, w.id",
        &[(&all, Type::BOOL), (&LOST_AFTER_LEASES, Type::FLOAT8)],
    )
    .await
    .context("cannot read the workers")?;
    found
        .iter()
        .map(|r| {
            let runs: Vec<i64> = r.try_get("refused_runs")?;
            let why: Vec<String> = r.try_get("refused_why")?;
            let bench_engines: Vec<String> = r.try_get("bench_engines")?;
            let bench_nps: Vec<i64> = r.try_get("bench_nps")?;
            Ok(WorkerRow {
                id: r.try_get("id")?,
                key_name: r.try_get("key_name")?,
                host: r.try_get("host")?,
                cpu: r.try_get("cpu")?,
                cores: r.try_get("cores")?,
                concurrency: r.try_get("concurrency")?,
                version: r.try_get("version")?,
                blocked: r.try_get("blocked")?,
                stopped: r.try_get("stopped")?,
                beating: r.try_get("beating")?,
                heartbeat: r.try_get("heartbeat")?,
                heartbeat_ago: r.try_get("heartbeat_ago")?,
                age: r.try_get("age")?,
                runs_now: r.try_get("runs_now")?,
                pairs: r.try_get("pairs")?,
                games: r.try_get("games")?,
                crashes: r.try_get("crashes")?,
                time_losses: r.try_get("time_losses")?,
                recent: r.try_get("recent")?,
                refusals: runs.into_iter().zip(why).collect(),
                benches: bench_engines.into_iter().zip(bench_nps).collect(),
            })
        })
        .collect()
}

/// One worker key's pairs in one pairing of a run (every process of the key summed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPairing {
    /// The key's name (`worker#ID` for a worker without a key).
    pub key_name: String,
    pub pairing: i32,
    /// LL, LD, DD, WD, WW of the pairing's first engine.
    pub penta: [i64; 5],
}

/// Each worker key's pentanomial per pairing of run `run`, by key name then pairing.
pub async fn key_tallies(db: &Client, run: i64) -> Result<Vec<KeyPairing>> {
    let found = rows(
        db,
        "SELECT coalesce(k.name, 'worker#' || t.worker_id) AS key_name, t.pairing, \
           sum(t.ll)::bigint AS ll, sum(t.ld)::bigint AS ld, sum(t.dd)::bigint AS dd, \
           sum(t.wd)::bigint AS wd, sum(t.ww)::bigint AS ww \
         FROM tallies t LEFT JOIN workers w ON w.id = t.worker_id \
           LEFT JOIN worker_keys k ON k.id = w.key_id \
         WHERE t.run_id = $1 GROUP BY 1, 2 ORDER BY 1, 2",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the workers' counts")?;
    found
        .iter()
        .map(|r| {
            Ok(KeyPairing {
                key_name: r.try_get("key_name")?,
                pairing: r.try_get("pairing")?,
                penta: [
                    r.try_get("ll")?,
                    r.try_get("ld")?,
                    r.try_get("dd")?,
                    r.try_get("wd")?,
                    r.try_get("ww")?,
                ],
            })
        })
        .collect()
}
