//! Priorities and throughputs: what a run is given at submission, what `runner modify` changes
//! (`super::people::modify`, its owner or an approver), and each active run's share of the fleet
//! now (for `runner status` and the pages). How a claim uses them is in `lease.rs`.

use anyhow::{Context, Result};
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::rows;

/// Default priority of a run.
pub const DEFAULT_PRIORITY: i32 = 0;
/// Default throughput of a run (its weight among the runs of its priority).
pub const DEFAULT_THROUGHPUT: i32 = 100;

/// A run's place in the fleet: claims serve the highest priority first, and within it share
/// the workers by throughput (an owner's throughput split among their runs of that priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub priority: i32,
    pub throughput: i32,
}

impl Default for Share {
    fn default() -> Share {
        Share { priority: DEFAULT_PRIORITY, throughput: DEFAULT_THROUGHPUT }
    }
}

/// What `runner modify` changes (None: unchanged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub priority: Option<i32>,
    pub throughput: Option<i32>,
    /// Game pairs per pairing, within the schedule the run was submitted with.
    pub pairs: Option<i32>,
}

/// A run after `runner modify`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modified {
    pub state: String,
    pub share: Share,
    /// Pending pairs skipped (the run shrank) and skipped pairs pending again (it grew back).
    pub skipped: i64,
    pub reopened: i64,
}

/// An active run's share of the fleet now.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareRow {
    pub run: i64,
    pub owner: String,
    pub share: Share,
    /// Its throughput divided among its owner's active runs of the same priority.
    pub weight: f64,
    /// Its pairs in flight (live leases).
    pub leased: i64,
    /// Its part of every active run's pairs in flight (None when none is in flight).
    pub now: Option<f64>,
    /// Its weight over the weights of its priority level; 0 below the highest priority.
    pub target: f64,
}

/// Every active run's share now: its weight (its throughput over its owner's active runs of
/// its priority), its live leases (one range of the partial lease index per run), its part of
/// every live lease, and its part of its level's weight at the highest priority present (0
/// below it: claims serve the highest priority first).
const SHARES: &str = "\
WITH r AS (
    SELECT r.id, r.owner, r.priority, r.throughput,
           r.throughput::float8 / count(*) OVER (PARTITION BY r.priority, r.owner) AS weight,
           (SELECT count(*) FROM pairs p WHERE p.run_id = r.id AND p.state = 'leased'
               AND p.lease_until > now()) AS leased
      FROM runs r WHERE r.state = 'active')
SELECT r.id, r.owner, r.priority, r.throughput, r.weight, r.leased,
       CASE WHEN sum(r.leased) OVER () > 0 THEN r.leased::float8 / sum(r.leased) OVER () END
           AS share_now,
       CASE WHEN r.priority = max(r.priority) OVER ()
            THEN r.weight / sum(r.weight) OVER (PARTITION BY r.priority) ELSE 0 END
           AS share_target
  FROM r ORDER BY r.id";

/// Every active run's share now, by run id.
pub async fn shares(db: &Client) -> Result<Vec<ShareRow>> {
    let found = rows(db, SHARES, &[]).await.context("cannot read the runs' shares")?;
    found
        .iter()
        .map(|r| {
            Ok(ShareRow {
                run: r.try_get("id")?,
                owner: r.try_get("owner")?,
                share: Share {
                    priority: r.try_get("priority")?,
                    throughput: r.try_get("throughput")?,
                },
                weight: r.try_get("weight")?,
                leased: r.try_get("leased")?,
                now: r.try_get("share_now")?,
                target: r.try_get("share_target")?,
            })
        })
        .collect()
}

/// A run's priority and throughput as stored (any state).
pub async fn run_share(db: &Client, run: i64) -> Result<Option<Share>> {
    let found =
        rows(db, "SELECT priority, throughput FROM runs WHERE id = $1", &[(&run, Type::INT8)])
            .await
            .context("cannot read the run's priority")?;
    found
        .first()
        .map(|r| {
            Ok(Share { priority: r.try_get("priority")?, throughput: r.try_get("throughput")? })
        })
        .transpose()
}
