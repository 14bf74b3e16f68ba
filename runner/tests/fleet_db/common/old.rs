//! The database's worker functions (schema version 2 and later) that the server no longer
//! calls, called directly as `runner/src/fleet/queue/` called them before: a server of
//! the previous version still calls them during a rolling deploy, so the tests of what the
//! fleet_worker role may do through them (`roles.rs`, `workers.rs`) keep testing them, with
//! the roles of that time ([`roles`]). The server's own statements are tested through its API
//! (`api.rs`).

use std::path::Path;
use std::time::Duration;

use e2e::pg::TempPg;
use runner::fleet::queue::share::{Change, Modified, Share};
use runner::fleet::queue::{
    Claim, Machine, NewRun, PairReport, PairingCounts, Reported, TUNE_IN_FLIGHT, WorkerId,
};
use serde_json::Value;
use tokio_postgres::Client;

/// Makes the roles of schema version 5 and earlier (`old_roles.sql`: owner, approver,
/// submitter, worker) and fleet_reader (docs/fleet-reader-role.sql) in `pg`'s database: run
/// once before `schema::init` (the roles) and once after (the grants on its tables).
pub fn roles(pg: &TempPg) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in ["../docs/fleet-reader-role.sql", "tests/fleet_db/common/old_roles.sql"] {
        pg.psql_file(&here.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

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

// What people did through the database's functions before the operator's `--db` commands went
// through the server's Rust operations (`queue::people`, `queue::submit`): the functions check
// the calling role, which `roles.rs` and `workers.rs` test.

/// `fleet_submit` at the default priority and throughput: the run's id and whether it waits
/// for approval.
pub async fn insert_run(db: &Client, run: &NewRun<'_>) -> anyhow::Result<(i64, bool)> {
    let first: Vec<&str> = run.engines.iter().map(|e| e.0.as_str()).collect();
    let second: Vec<&str> = run.engines.iter().map(|e| e.1.as_str()).collect();
    let pairing: Vec<i32> = run.jobs.iter().map(|j| j.0).collect();
    let pair: Vec<i32> = run.jobs.iter().map(|j| j.1).collect();
    let opening: Vec<i32> = run.jobs.iter().map(|j| j.2).collect();
    let draws: Option<&[Value]> = (!run.draws.is_empty()).then_some(run.draws);
    let row = db
        .query_one(
            "SELECT id, state FROM fleet_submit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
             $12, $13, 0, 100)",
            &[
                &run.kind,
                run.submission,
                &run.plan_hash,
                run.judge,
                &run.labels,
                &first,
                &second,
                &pairing,
                &pair,
                &opening,
                &run.theta,
                &draws,
                &run.refusal_limit,
            ],
        )
        .await?;
    let state: String = row.try_get("state")?;
    Ok((row.try_get("id")?, state == "pending"))
}

/// A function of one run returning one text: `fleet_approve`, `fleet_cancel` (the state before).
async fn run_text(db: &Client, function: &str, run: i64) -> anyhow::Result<String> {
    Ok(db.query_one(&format!("SELECT {function}($1)"), &[&run]).await?.try_get(0)?)
}

/// `fleet_approve`: the run's state before.
pub async fn approve(db: &Client, run: i64) -> anyhow::Result<String> {
    run_text(db, "fleet_approve", run).await
}

/// `fleet_cancel`: the run's state before.
pub async fn cancel(db: &Client, run: i64) -> anyhow::Result<String> {
    run_text(db, "fleet_cancel", run).await
}

/// `fleet_purge`, then `fleet_settle_run`: the pairs given back and the run's state after.
pub async fn purge(db: &mut Client, run: i64, key: &str) -> anyhow::Result<(i64, String)> {
    let tx = db.transaction().await?;
    let n: i64 = tx.query_one("SELECT fleet_purge($1, $2)", &[&run, &key]).await?.try_get(0)?;
    tx.commit().await?;
    let rows = db.query("SELECT state FROM fleet_settle_run($1)", &[&run]).await?;
    Ok((n, settled_state(&rows)?))
}

/// `fleet_settle` (a worker asking the database to decide): the run's state after.
pub async fn settle(db: &Client, w: &WorkerId, run: i64) -> anyhow::Result<String> {
    let rows =
        db.query("SELECT state FROM fleet_settle($1, $2, $3)", &[&w.id, w.secret(), &run]).await?;
    settled_state(&rows)
}

/// The run's state in the rows of `fleet_settle_run` or `fleet_settle` (the last row that
/// names one: the rows before it name the pairings stopped).
fn settled_state(rows: &[tokio_postgres::Row]) -> anyhow::Result<String> {
    let mut state = String::new();
    for r in rows {
        if let Some(s) = r.try_get::<_, Option<String>>("state")? {
            state = s;
        }
    }
    Ok(state)
}

/// `fleet_key_add`: the key.
pub async fn key_add(db: &Client, name: &str) -> anyhow::Result<String> {
    Ok(db.query_one("SELECT fleet_key_add($1)", &[&name]).await?.try_get(0)?)
}

/// `fleet_key_revoke`: the leased pairs given back.
pub async fn key_revoke(db: &Client, name: &str) -> anyhow::Result<i64> {
    Ok(db.query_one("SELECT fleet_key_revoke($1)", &[&name]).await?.try_get(0)?)
}

/// `fleet_keys`: each key's name and whether it is revoked.
pub async fn keys(db: &Client) -> anyhow::Result<Vec<(String, bool)>> {
    let found = db.query("SELECT name, revoked_at IS NOT NULL FROM fleet_keys()", &[]).await?;
    found.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
}

/// `fleet_pulled`.
pub async fn mark_pulled(db: &Client, run: i64) -> anyhow::Result<()> {
    db.execute("SELECT fleet_pulled($1)", &[&run]).await?;
    Ok(())
}

/// `fleet_delete`: the games removed.
pub async fn delete_run(db: &Client, run: i64, force: bool) -> anyhow::Result<i64> {
    Ok(db.query_one("SELECT fleet_delete($1, $2)", &[&run, &force]).await?.try_get(0)?)
}

/// `fleet_artifact_put` of chunk `n` of `chunks`.
pub async fn artifact_put(
    db: &Client,
    sha: &str,
    size: i64,
    chunks: i32,
    kind: &str,
    n: i32,
    bytes: &[u8],
) -> anyhow::Result<()> {
    db.execute(
        "SELECT fleet_artifact_put($1, $2, $3, $4, $5, $6)",
        &[&sha, &size, &chunks, &kind, &n, &bytes],
    )
    .await?;
    Ok(())
}

/// `fleet_artifact_seal`.
pub async fn artifact_seal(db: &Client, sha: &str) -> anyhow::Result<()> {
    db.execute("SELECT fleet_artifact_seal($1)", &[&sha]).await?;
    Ok(())
}

/// `fleet_run_artifacts`.
pub async fn run_artifacts(db: &Client, run: i64, shas: &[String]) -> anyhow::Result<()> {
    db.execute("SELECT fleet_run_artifacts($1, $2)", &[&run, &shas]).await?;
    Ok(())
}

/// `fleet_modify`: the run after.
pub async fn modify(db: &Client, run: i64, change: Change) -> anyhow::Result<Modified> {
    let r = db
        .query_one(
            "SELECT state, priority, throughput, skipped, reopened FROM fleet_modify($1, $2, $3, $4)",
            &[&run, &change.priority, &change.throughput, &change.pairs],
        )
        .await?;
    Ok(Modified {
        state: r.try_get("state")?,
        share: Share { priority: r.try_get("priority")?, throughput: r.try_get("throughput")? },
        skipped: r.try_get("skipped")?,
        reopened: r.try_get("reopened")?,
    })
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
