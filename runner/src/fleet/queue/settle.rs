//! The server's decision on a run: its SPRT, racing and its end, computed in Rust by
//! [`crate::fleet::decide::Judge`] from the counts of every stored pair, and written in one
//! transaction that holds the run's row `FOR UPDATE`. A report holds that row `FOR KEY SHARE`
//! until it commits, so a decision waits for every report in flight and every report after it
//! sees the run's new state: the counts a decision is made on are exactly the pairs stored
//! under it.
//!
//! A run whose stored judge cannot be read fails, with the reason, rather than staying active
//! with no word. (`fleet_settle_run` in `sql/v2_trust.sql` took the same decisions for the
//! runners of earlier versions that spoke to the database directly; nothing of this version
//! calls it, and `runner db init --contract` drops it. `runner/tests/fleet_db/queue.rs`
//! compares the two while it is in the schema.)

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Transaction};

use super::lease::{WorkerId, worker_auth};
use super::read::has_open_pairs;
use super::report::{PairingCounts, Settled};
use super::{opt, rows};
use crate::fleet::decide::Judge;

/// Decides run `run` now, in a transaction of its own (see the module's doc).
pub async fn decide(db: &mut Client, run: i64) -> Result<Settled> {
    let tx = db.transaction().await.context("cannot begin a decision")?;
    let settled = decide_in(&tx, run).await?;
    tx.commit().await.context("cannot commit the decision")?;
    Ok(settled)
}

/// [`decide`] for worker `w`, whose key is checked first.
pub async fn decide_for(db: &mut Client, w: &WorkerId, run: i64) -> Result<Settled> {
    worker_auth(db, w).await?;
    decide(db, run).await
}

/// [`decide`] inside the caller's transaction (a change to the run that may end it).
pub async fn decide_in(tx: &Transaction<'_>, run: i64) -> Result<Settled> {
    let Some(r) =
        opt(tx, "SELECT state, judge FROM runs WHERE id = $1 FOR UPDATE", &[(&run, Type::INT8)])
            .await
            .context("cannot lock the run")?
    else {
        return Ok(Settled::default());
    };
    let state: String = r.try_get("state")?;
    if state != "active" {
        return Ok(Settled { state, stops: Vec::new() });
    }
    let stored: Value = r.try_get("judge")?;
    let judge = match Judge::read(&stored) {
        Ok(j) => j,
        Err(why) => return fail(tx, run, &why).await,
    };
    let found = rows(tx, super::read::COUNTS, &[(&run, Type::INT8), (&None::<i32>, Type::INT4)])
        .await
        .context("cannot read the counts")?;
    let counts = found.iter().map(PairingCounts::from_row).collect::<Result<Vec<_>, _>>()?;
    let labels = found.iter().map(|r| r.try_get("label")).collect::<Result<Vec<String>, _>>()?;
    let stops = judge.stops(&counts, &labels);
    for s in &stops {
        tx.execute_typed(
            "UPDATE pairings SET active = false, verdict = $3, why = $4, stop_games = $5, \
                    stop_best = $6, stop_z = $7 \
              WHERE run_id = $1 AND pairing = $2 AND active",
            &[
                (&run, Type::INT8),
                (&s.pairing, Type::INT4),
                (&s.verdict, Type::TEXT),
                (&s.why, Type::TEXT),
                (&s.games, Type::INT8),
                (&s.best, Type::INT4),
                (&s.z, Type::FLOAT8),
            ],
        )
        .await
        .context("cannot stop a pairing")?;
        // Its leased pairs too: their reports would be refused (the pairing is no longer
        // active), and a lease left behind would keep the run open for ever. Their workers'
        // next heartbeat no longer lists them, so the games stop.
        tx.execute_typed(
            "UPDATE pairs SET state = 'skipped', lease_until = NULL \
              WHERE run_id = $1 AND pairing = $2 AND state IN ('pending', 'leased')",
            &[(&run, Type::INT8), (&s.pairing, Type::INT4)],
        )
        .await
        .context("cannot skip a stopped pairing's pairs")?;
    }
    let all_stopped =
        counts.iter().all(|c| !c.active || stops.iter().any(|s| s.pairing == c.pairing));
    if !stops.is_empty() && all_stopped {
        let why = stops.iter().map(|s| s.why.as_str()).collect::<Vec<_>>().join("; ");
        end(tx, run, "decided", &why).await?;
        return Ok(Settled { state: "decided".into(), stops });
    }
    if has_open_pairs(tx, run).await? {
        return Ok(Settled { state: "active".into(), stops });
    }
    end(tx, run, "complete", "every pair played").await?;
    Ok(Settled { state: "complete".into(), stops })
}

/// A run that cannot be decided fails, saying why.
async fn fail(tx: &Transaction<'_>, run: i64, why: &str) -> Result<Settled> {
    let reason = format!("run {run} cannot be decided: {why}");
    end(tx, run, "failed", &reason).await?;
    Ok(Settled { state: "failed".into(), stops: Vec::new() })
}

async fn end(tx: &Transaction<'_>, run: i64, state: &str, why: &str) -> Result<()> {
    // The reason is capped as the refusals' is (a stored label could be long).
    let why: String = why.chars().take(4000).collect();
    tx.execute_typed(
        "UPDATE runs SET state = $2, stop_reason = $3, finished_at = clock_timestamp() \
          WHERE id = $1",
        &[(&run, Type::INT8), (&state, Type::TEXT), (&why, Type::TEXT)],
    )
    .await
    .with_context(|| format!("cannot note the run {state}"))?;
    Ok(())
}

/// Active runs with no pair left open: the runs a decision would end, which no report ended
/// (the last two pairs reported at the same instant each saw the other still open).
pub async fn unsettled(db: &Client) -> Result<Vec<i64>> {
    let found = rows(
        db,
        // Through the partial indexes of pending and leased pairs, per active run.
        "SELECT r.id FROM runs r WHERE r.state = 'active' \
            AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.run_id = r.id AND p.state = 'pending') \
            AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.run_id = r.id AND p.state = 'leased') \
          ORDER BY r.id",
        &[],
    )
    .await
    .context("cannot read the runs with nothing open")?;
    Ok(found.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?)
}
