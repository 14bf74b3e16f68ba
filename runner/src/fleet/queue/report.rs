//! Reporting a finished pair and asking the database to decide.
//!
//! [`report`] is one call of `fleet_report`: the pair becomes done only if it is still leased to
//! this worker under its token and its run and pairing are still active (else nothing is
//! written and the answer says why); the database reads both games' results from the records,
//! checks that they are the pair's games between the pairing's engines, and adds them to the
//! worker's row of the pairing's counts. The answer carries the counts after the pair, which the
//! worker's own judge reads (`fleet::decide`) only to know whether to ask the database for a
//! decision: [`settle`] (`fleet_settle`) takes the run's row for update, so it waits for every
//! report in flight, and decides from the counts of every stored pair, by rules computed inside
//! the database. A worker cannot write a decision. Through the server, the server reads the
//! counts with the run's stored rules and decides itself (`super::settle`).

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::Type;

use super::lease::WorkerId;
use super::{Db, hot, rows};

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

impl PairingCounts {
    /// From a row with the columns pairing, active, dropped, ll .. ww, wins, draws, losses.
    pub(super) fn from_row(r: &Row) -> Result<PairingCounts, tokio_postgres::Error> {
        Ok(PairingCounts {
            pairing: r.try_get("pairing")?,
            active: r.try_get("active")?,
            dropped: r.try_get("dropped")?,
            penta: [
                r.try_get("ll")?,
                r.try_get("ld")?,
                r.try_get("dd")?,
                r.try_get("wd")?,
                r.try_get("ww")?,
            ],
            wdl: [r.try_get("wins")?, r.try_get("draws")?, r.try_get("losses")?],
        })
    }

    /// Games counted.
    pub fn games(&self) -> i64 {
        2 * self.penta.iter().sum::<i64>()
    }
}

/// A pairing stopped by a decision: the verdict word and the line saying why; what the
/// decision is stored with (the games it was taken on; for a racing drop the best point then and
/// the test statistic).
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub pairing: i32,
    pub verdict: String,
    pub why: String,
    pub games: i64,
    pub best: Option<i32>,
    pub z: Option<f64>,
}

/// A finished pair, ready to store.
pub struct PairReport<'a> {
    pub run_id: i64,
    pub pairing: i32,
    pub pair: i32,
    pub token: i64,
    /// Game 0 then game 1 (games.jsonl records).
    pub records: [&'a Value; 2],
}

/// How a report ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Reported {
    /// Stored: the counts after it (every pairing's when asked for, else the reported one's),
    /// whether the run has other pairs open, and the decision the server took after it, if it
    /// took one (a worker speaking to the database asks for it: [`settle`]).
    Stored { counts: Vec<PairingCounts>, open: bool, settled: Option<Settled> },
    /// Not stored (nothing written): why.
    Refused(String),
}

/// Stores a finished pair (see the module's doc); `all`: return every pairing's counts (a
/// racing sweep's judge compares them).
pub async fn report(db: &impl Db, w: &WorkerId, r: &PairReport<'_>, all: bool) -> Result<Reported> {
    let found = hot(
        db,
        "SELECT refused, open, pairing, active, dropped, ll, ld, dd, wd, ww, wins, draws, losses \
         FROM fleet_report($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&r.run_id, Type::INT8),
            (&r.pairing, Type::INT4),
            (&r.pair, Type::INT4),
            (&r.token, Type::INT8),
            (r.records[0], Type::JSON),
            (r.records[1], Type::JSON),
            (&all, Type::BOOL),
        ],
    )
    .await
    .context("cannot report a pair")?;
    let Some(first) = found.first() else {
        anyhow::bail!("the database answered a report with no row");
    };
    if let Some(why) = first.try_get::<_, Option<String>>("refused")? {
        return Ok(Reported::Refused(why));
    }
    let open: bool = first.try_get("open")?;
    let counts = found.iter().map(PairingCounts::from_row).collect::<Result<Vec<_>, _>>()?;
    Ok(Reported::Stored { counts, open, settled: None })
}

/// A report replayed for a pair stored already under the same worker and lease token (its
/// first answer was lost on the way back): the answer a stored report gives, the counts as
/// they are now; `None` when the pair is not stored under this worker and token. Called after
/// `fleet_report` refused the replay, which it does only once it checked the worker's secret.
pub async fn replayed(
    db: &tokio_postgres::Client,
    w: &WorkerId,
    r: &PairReport<'_>,
    all: bool,
) -> Result<Option<Reported>> {
    let stored = rows(
        db,
        "SELECT 1 AS one FROM pairs WHERE run_id = $1 AND pairing = $2 AND pair = $3 \
           AND state = 'done' AND token = $4 AND worker_id = $5",
        &[
            (&r.run_id, Type::INT8),
            (&r.pairing, Type::INT4),
            (&r.pair, Type::INT4),
            (&r.token, Type::INT8),
            (&w.id, Type::INT8),
        ],
    )
    .await
    .context("cannot read the pair")?;
    if stored.is_empty() {
        return Ok(None);
    }
    let only = (!all).then_some(r.pairing);
    let counts = super::read::pairing_counts(db, r.run_id, only).await?;
    let open = super::read::has_open_pairs(db, r.run_id).await?;
    Ok(Some(Reported::Stored { counts, open, settled: None }))
}

/// What the database decided when asked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settled {
    /// The run's state after (`active`, `decided`, `complete`, ...).
    pub state: String,
    /// Pairings stopped by this call.
    pub stops: Vec<Stop>,
}

/// Asks the database to decide run `run` now (see the module's doc).
pub async fn settle(db: &impl Db, w: &WorkerId, run: i64) -> Result<Settled> {
    let found = hot(
        db,
        "SELECT state, pairing, verdict, why FROM fleet_settle($1, $2, $3)",
        &[(&w.id, Type::INT8), (w.secret(), Type::TEXT), (&run, Type::INT8)],
    )
    .await
    .context("cannot settle the run")?;
    settled(&found)
}

/// [`settle`] for an owner or approver (after a purge, for instance).
pub async fn settle_as_owner(db: &tokio_postgres::Client, run: i64) -> Result<Settled> {
    let found = rows(
        db,
        "SELECT state, pairing, verdict, why FROM fleet_settle_run($1)",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot settle the run")?;
    settled(&found)
}

fn settled(found: &[Row]) -> Result<Settled> {
    let mut out = Settled::default();
    for r in found {
        if let Some(state) = r.try_get::<_, Option<String>>("state")? {
            out.state = state;
        }
        if let Some(pairing) = r.try_get::<_, Option<i32>>("pairing")? {
            out.stops.push(Stop {
                pairing,
                verdict: r.try_get::<_, Option<String>>("verdict")?.unwrap_or_default(),
                why: r.try_get::<_, Option<String>>("why")?.unwrap_or_default(),
                games: 0,
                best: None,
                z: None,
            });
        }
    }
    Ok(out)
}
