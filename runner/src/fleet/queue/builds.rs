//! Engines built from source and benched on the workers (schema version 4,
//! `sql/v4_builds.sql`): a worker records each engine it loaded (the server's statement
//! [`ENGINE_LOADED`]; `fleet_engine_loaded` stays in a migrated database for a server of the
//! version before, until the contract step);
//! `runner status` reads a run's builds, `runner workers` each worker's bench speeds.

use anyhow::{Context, Result};
use tokio_postgres::GenericClient;
use tokio_postgres::types::Type;

use super::{WorkerId, rows};

/// One engine a worker loaded for a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineLoad {
    pub engine: String,
    /// The commit it was built from (None: a binary).
    pub commit: Option<String>,
    /// `built`, `cached` or `failed` (None: no build).
    pub build: Option<&'static str>,
    pub build_secs: Option<f64>,
    /// Its bench's node count and speed, when a bench ran.
    pub nodes: Option<i64>,
    pub nps: Option<i64>,
    /// Why the build or the bench failed.
    pub error: Option<String>,
}

/// The worker's check ([`me!`]), then the engine it loaded for run `$3`, recorded only when
/// the run is approved and active and the worker holds a lease on it (else dropped with no
/// word, as a record for a run that ended), with its words and figures bounded, as
/// `fleet_engine_loaded` did. `known`: the check held.
const ENGINE_LOADED: &str = concat!(
    "WITH ",
    me!(),
    ",
noted AS (
    INSERT INTO engine_loads (worker_id, run_id, engine, commit, build, build_secs, nodes, nps,
                              error)
    SELECT me.id, $3, left($4, 200), left($5, 64), $6,
           CASE WHEN $7 BETWEEN 0 AND 1e7 THEN $7 END,
           CASE WHEN $8 >= 0 THEN $8 END, CASE WHEN $9 >= 0 THEN $9 END, left($10, 300)
      FROM me
     WHERE EXISTS (SELECT 1 FROM runs WHERE id = $3 AND state = 'active'
                    AND approved_by IS NOT NULL)
       AND EXISTS (SELECT 1 FROM pairs p WHERE p.worker_id = me.id AND p.run_id = $3
                    AND p.state = 'leased')
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known"
);

/// Records that worker `w` loaded `e` for run `run`; `Err` ([`NotAuthorized`]) when the
/// worker's check fails (nothing written).
///
/// [`NotAuthorized`]: super::lease::NotAuthorized
pub async fn engine_loaded(
    db: &impl GenericClient,
    w: &WorkerId,
    run: i64,
    e: &EngineLoad,
) -> Result<()> {
    let found = rows(
        db,
        ENGINE_LOADED,
        &[
            (&w.id, Type::INT8),
            (w.secret(), Type::TEXT),
            (&run, Type::INT8),
            (&e.engine, Type::TEXT),
            (&e.commit, Type::TEXT),
            (&e.build, Type::TEXT),
            (&e.build_secs, Type::FLOAT8),
            (&e.nodes, Type::INT8),
            (&e.nps, Type::INT8),
            (&e.error, Type::TEXT),
        ],
    )
    .await
    .with_context(|| format!("cannot record engine {} of run {run}", e.engine))?;
    let row = found.first().context("engine loaded: no answer")?;
    super::lease::known(row, w)
}

/// A run's build, as `runner status` shows it: the last of each worker and engine.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildRow {
    /// `KEY#ID` of the worker.
    pub worker: String,
    pub engine: String,
    pub commit: String,
    pub build: String,
    pub build_secs: Option<f64>,
    pub nps: Option<i64>,
    pub error: Option<String>,
}

/// The builds of run `run`: per worker and engine, the last one recorded.
pub async fn run_builds(db: &impl GenericClient, run: i64) -> Result<Vec<BuildRow>> {
    let found = rows(
        db,
        "SELECT DISTINCT ON (l.worker_id, l.engine) \
           coalesce(k.name, '-') || '#' || l.worker_id AS worker, l.engine, l.commit, l.build, \
           l.build_secs, l.nps, l.error \
         FROM engine_loads l JOIN workers w ON w.id = l.worker_id \
           LEFT JOIN worker_keys k ON k.id = w.key_id \
         WHERE l.run_id = $1 AND l.build IS NOT NULL \
         ORDER BY l.worker_id, l.engine, l.at DESC, l.id DESC",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the run's builds")?;
    found
        .iter()
        .map(|r| {
            Ok(BuildRow {
                worker: r.try_get("worker")?,
                engine: r.try_get("engine")?,
                commit: r.try_get::<_, Option<String>>("commit")?.unwrap_or_default(),
                build: r.try_get("build")?,
                build_secs: r.try_get("build_secs")?,
                nps: r.try_get("nps")?,
                error: r.try_get("error")?,
            })
        })
        .collect()
}
