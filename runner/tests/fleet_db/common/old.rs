//! The database's worker functions (schema version 2 and later) that the server no longer
//! calls, called directly as `runner/src/fleet/queue/` called them before: a server of
//! the previous version still calls them during a rolling deploy, so the tests of what the
//! fleet_worker role may do through them (`roles.rs`, `workers.rs`) keep testing them. The
//! server's own statements are tested through its API (`api.rs`).

use std::time::Duration;

use runner::fleet::queue::{Claim, Machine, PairReport, PairingCounts, Reported, WorkerId};
use serde_json::Value;
use tokio_postgres::Client;

/// `fleet_worker_stopped`.
pub async fn worker_stopped(db: &Client, w: &WorkerId) -> anyhow::Result<()> {
    db.execute("SELECT fleet_worker_stopped($1, $2)", &[&w.id, w.secret()]).await?;
    Ok(())
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

/// `fleet_report` (version 3's: with the worker's faults and recent pairs).
pub async fn report(
    db: &Client,
    w: &WorkerId,
    r: &PairReport<'_>,
    all: bool,
) -> anyhow::Result<Reported> {
    let found = db
        .query(
            "SELECT refused, open, pairing, active, dropped, ll, ld, dd, wd, ww, wins, draws, \
                    losses FROM fleet_report($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &w.id,
                w.secret(),
                &r.run_id,
                &r.pairing,
                &r.pair,
                &r.token,
                r.records[0],
                r.records[1],
                &all,
            ],
        )
        .await?;
    let first = found.first().ok_or_else(|| anyhow::anyhow!("no row"))?;
    if let Some(why) = first.try_get::<_, Option<String>>("refused")? {
        return Ok(Reported::Refused(why));
    }
    let counts = found
        .iter()
        .map(|r| {
            let n = |c: &str| r.try_get::<_, i64>(c);
            Ok(PairingCounts {
                pairing: r.try_get("pairing")?,
                active: r.try_get("active")?,
                dropped: r.try_get("dropped")?,
                penta: [n("ll")?, n("ld")?, n("dd")?, n("wd")?, n("ww")?],
                wdl: [n("wins")?, n("draws")?, n("losses")?],
            })
        })
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
    Ok(Reported::Stored { counts, open: first.try_get("open")?, settled: None })
}

/// [`report`] of `c` between A and B with the first engine's results `first` ("W", "D" or "L").
pub async fn report_pair(db: &Client, w: &WorkerId, c: &Claim, first: [&str; 2]) -> Reported {
    let g = super::records(c, first, ("A", "B"));
    report(db, w, &super::pair_report(c, &g), false).await.unwrap()
}

/// `fleet_iteration`: a tuning pair's iteration, `None` when the lease is lost.
pub async fn iteration(db: &Client, w: &WorkerId, c: &Claim) -> anyhow::Result<Option<Value>> {
    let row = db
        .query_one(
            "SELECT fleet_iteration($1, $2, $3, $4, $5, $6)",
            &[&w.id, w.secret(), &c.run_id, &c.pairing, &c.pair, &c.token],
        )
        .await?;
    Ok(row.try_get(0)?)
}
