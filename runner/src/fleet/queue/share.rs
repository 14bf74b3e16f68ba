//! Priorities and throughputs: what a run is given at submission, `runner modify` (its owner or
//! an approver, through `fleet_modify`), and each active run's share of the fleet now
//! (`fleet_shares`, for `runner status`). How a claim uses them is in `sql/v3_share.sql`.

use anyhow::{Context, Result};
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::{one, rows};

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

/// Changes run `run` (its owner or an approver; a priority above 0 needs an approver).
pub async fn modify(db: &Client, run: i64, change: Change) -> Result<Modified> {
    let r = one(
        db,
        "SELECT state, priority, throughput, skipped, reopened FROM fleet_modify($1, $2, $3, $4)",
        &[
            (&run, Type::INT8),
            (&change.priority, Type::INT4),
            (&change.throughput, Type::INT4),
            (&change.pairs, Type::INT4),
        ],
    )
    .await
    .with_context(|| format!("cannot modify run {run}"))?;
    Ok(Modified {
        state: r.try_get("state")?,
        share: Share { priority: r.try_get("priority")?, throughput: r.try_get("throughput")? },
        skipped: r.try_get("skipped")?,
        reopened: r.try_get("reopened")?,
    })
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

/// Every active run's share now, by run id.
pub async fn shares(db: &Client) -> Result<Vec<ShareRow>> {
    let found = rows(
        db,
        "SELECT id, owner, priority, throughput, weight, leased, share_now, share_target \
         FROM fleet_shares()",
        &[],
    )
    .await
    .context("cannot read the runs' shares")?;
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
