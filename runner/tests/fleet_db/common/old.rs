//! The database's worker functions (schema version 2 and later) that the server no longer
//! calls, called directly as `runner/src/fleet/queue/lease.rs` called them before: a server of
//! the previous version still calls them during a rolling deploy, so the tests of what the
//! fleet_worker role may do through them (`roles.rs`, `workers.rs`) keep testing them. The
//! server's own statements are tested through its API (`api.rs`).

use std::time::Duration;

use runner::fleet::queue::{Claim, Machine, TUNE_IN_FLIGHT, WorkerId};
use tokio_postgres::Client;

/// `fleet_worker_stopped`.
pub async fn worker_stopped(db: &Client, w: &WorkerId) -> anyhow::Result<()> {
    db.execute("SELECT fleet_worker_stopped($1, $2)", &[&w.id, w.secret()]).await?;
    Ok(())
}

/// `fleet_claim` (schema version 3's, for a worker that plays no run now): the pairs leased, in
/// run and schedule order.
pub async fn claim(
    db: &Client,
    w: &WorkerId,
    only: Option<i64>,
    skip: &[i64],
    n: i64,
    lease: Duration,
) -> anyhow::Result<Vec<Claim>> {
    let rows = db
        .query(
            "SELECT run_id, seq, pairing, pair, opening, token, attempts, spsa \
             FROM fleet_claim($1, $2, $3, $4, $5, $6, $7, NULL)",
            &[&w.id, w.secret(), &only, &skip, &n, &lease.as_secs_f64(), &TUNE_IN_FLIGHT],
        )
        .await?;
    let mut out = rows.iter().map(Claim::from_row).collect::<Result<Vec<Claim>, _>>()?;
    out.sort_by_key(|c| (c.run_id, c.seq));
    Ok(out)
}

/// `fleet_release`: how many leases were given back.
pub async fn release(db: &Client, w: &WorkerId, tokens: &[i64]) -> anyhow::Result<i64> {
    Ok(db
        .query_one("SELECT fleet_release($1, $2, $3)", &[&w.id, w.secret(), &tokens])
        .await?
        .try_get(0)?)
}

/// `fleet_refuse`: the run's state after.
pub async fn refuse(
    db: &Client,
    w: &WorkerId,
    run: i64,
    reason: &str,
    tokens: &[i64],
) -> anyhow::Result<String> {
    Ok(db
        .query_one(
            "SELECT fleet_refuse($1, $2, $3, $4, $5)",
            &[&w.id, w.secret(), &run, &reason, &tokens],
        )
        .await?
        .try_get(0)?)
}

/// `fleet_register` (version 3's: with the machine's CPU and cores).
pub async fn register_machine(
    db: &Client,
    key: Option<&str>,
    m: &Machine,
    pid: i32,
    concurrency: i32,
    lease: Duration,
) -> anyhow::Result<WorkerId> {
    let r = db
        .query_one(
            "SELECT worker_id, secret, key_name FROM fleet_register($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &key,
                &m.host,
                &pid,
                &concurrency,
                &lease.as_secs_f64(),
                &env!("CARGO_PKG_VERSION"),
                &m.cpu,
                &m.cores,
            ],
        )
        .await?;
    Ok(WorkerId::new(r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
}

/// [`register_machine`] with the host's name only.
pub async fn register_worker(
    db: &Client,
    key: Option<&str>,
    host: &str,
    pid: i32,
    concurrency: i32,
    lease: Duration,
) -> anyhow::Result<WorkerId> {
    let m = Machine { host: host.to_string(), ..Machine::default() };
    register_machine(db, key, &m, pid, concurrency, lease).await
}

/// `fleet_engine_loaded` (schema version 5).
pub async fn engine_loaded(
    db: &Client,
    w: &WorkerId,
    run: i64,
    e: &runner::fleet::queue::builds::EngineLoad,
) -> anyhow::Result<()> {
    db.execute(
        "SELECT fleet_engine_loaded($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &w.id,
            w.secret(),
            &run,
            &e.engine,
            &e.commit,
            &e.build,
            &e.build_secs,
            &e.nodes,
            &e.nps,
            &e.error,
        ],
    )
    .await?;
    Ok(())
}
