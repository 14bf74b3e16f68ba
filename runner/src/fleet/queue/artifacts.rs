//! Artifacts (engine binaries, source archives) stored by SHA-256 in chunks: a submitter
//! uploads and seals them and names its run's; a worker lists an approved, active run's and
//! reads their chunks; an approver deletes those no run names.

use anyhow::{Context, Result};
use tokio_postgres::GenericClient;
use tokio_postgres::types::Type;

use super::lease::{Refused, WorkerId};
use super::{one, rows};

/// An artifact as a worker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRow {
    pub sha: String,
    pub size: i64,
    pub chunks: i32,
    /// `binary` or `source`.
    pub kind: String,
}

/// Whether artifact `sha` is stored and sealed.
pub async fn artifact_sealed(db: &impl GenericClient, sha: &str) -> Result<bool> {
    let row = one(db, "SELECT fleet_artifact_sealed($1) AS s", &[(&sha, Type::TEXT)])
        .await
        .with_context(|| format!("cannot look up artifact {sha}"))?;
    Ok(row.try_get("s")?)
}

/// Stores chunk `n` of `chunks` of artifact `sha` (`size` bytes in all).
pub async fn artifact_put(
    db: &impl GenericClient,
    sha: &str,
    size: i64,
    chunks: i32,
    kind: &str,
    n: i32,
    bytes: &[u8],
) -> Result<()> {
    rows(
        db,
        "SELECT fleet_artifact_put($1, $2, $3, $4, $5, $6)",
        &[
            (&sha, Type::TEXT),
            (&size, Type::INT8),
            (&chunks, Type::INT4),
            (&kind, Type::TEXT),
            (&n, Type::INT4),
            (&bytes, Type::BYTEA),
        ],
    )
    .await
    .with_context(|| format!("cannot store chunk {n} of artifact {sha}"))?;
    Ok(())
}

/// Seals artifact `sha` (the database checks its size and hash).
pub async fn artifact_seal(db: &impl GenericClient, sha: &str) -> Result<()> {
    rows(db, "SELECT fleet_artifact_seal($1)", &[(&sha, Type::TEXT)])
        .await
        .with_context(|| format!("cannot seal artifact {sha}"))?;
    Ok(())
}

/// Names the artifacts run `run` executes.
pub async fn run_artifacts(db: &impl GenericClient, run: i64, shas: &[String]) -> Result<()> {
    rows(
        db,
        "SELECT fleet_run_artifacts($1, $2)",
        &[(&run, Type::INT8), (&shas, Type::TEXT_ARRAY)],
    )
    .await
    .with_context(|| format!("cannot name the artifacts of run {run}"))?;
    Ok(())
}

/// The artifacts run `run` names, with their sizes and kinds (`sha`, `size`, `kind`; chunks
/// 0): what an approver approves (`runner status RUN`, `runner approve`). Readable by
/// submitters, readers and approvers (docs/fleet-worker-role.sql).
pub async fn run_artifact_list(db: &impl GenericClient, run: i64) -> Result<Vec<ArtifactRow>> {
    let found = rows(
        db,
        "SELECT a.sha, a.size, a.kind FROM run_artifacts r JOIN artifacts a USING (sha) \
         WHERE r.run_id = $1 ORDER BY a.sha",
        &[(&run, Type::INT8)],
    )
    .await
    .with_context(|| format!("cannot list the artifacts of run {run}"))?;
    found
        .iter()
        .map(|r| {
            Ok(ArtifactRow {
                sha: r.try_get("sha")?,
                size: r.try_get("size")?,
                chunks: 0,
                kind: r.try_get("kind")?,
            })
        })
        .collect()
}

/// The artifacts of run `run` this worker may fetch (none unless it is approved and active).
pub async fn worker_artifacts(
    db: &impl GenericClient,
    w: &WorkerId,
    run: i64,
) -> Result<Vec<ArtifactRow>> {
    let found = rows(
        db,
        WORKER_ARTIFACTS,
        &[(&w.id, Type::INT8), (w.secret(), Type::TEXT), (&run, Type::INT8)],
    )
    .await
    .with_context(|| format!("cannot list the artifacts of run {run}"))?;
    let first = found.first().context("the artifact list: no answer")?;
    super::lease::known(first, w)?;
    let mut list = Vec::new();
    for r in &found {
        // The one row of a run with no artifact to fetch has none.
        let Some(sha) = r.try_get::<_, Option<String>>("sha")? else { continue };
        list.push(ArtifactRow {
            sha,
            size: r.try_get("size")?,
            chunks: r.try_get("chunks")?,
            kind: r.try_get("kind")?,
        });
    }
    Ok(list)
}

/// The worker's check ([`me!`]) and the artifacts of run `$3` it may fetch (none unless the
/// run is approved and active; only sealed ones), as `fleet_worker_artifacts` answered: one
/// row with `known` and no artifact when there is none (or the check failed).
const WORKER_ARTIFACTS: &str = concat!(
    "WITH ",
    me!(),
    ",
list AS (
    SELECT a.sha, a.size, a.chunks, a.kind
      FROM run_artifacts ra JOIN runs r ON r.id = ra.run_id JOIN artifacts a ON a.sha = ra.sha
     WHERE EXISTS (SELECT 1 FROM me) AND ra.run_id = $3 AND r.state = 'active'
       AND r.approved_by IS NOT NULL AND a.sealed)
SELECT EXISTS (SELECT 1 FROM me) AS known, l.sha, l.size, l.chunks, l.kind
  FROM (SELECT 1) one LEFT JOIN list l ON true ORDER BY l.sha"
);

/// The worker's check ([`me!`]), whether an approved, active run names sealed artifact `$3`,
/// and its chunk `$4` when it does, as `fleet_artifact_chunk` answered.
const ARTIFACT_CHUNK: &str = concat!(
    "WITH ",
    me!(),
    ",
named AS (
    SELECT 1 FROM run_artifacts ra JOIN runs r ON r.id = ra.run_id JOIN artifacts a ON a.sha = ra.sha
     WHERE EXISTS (SELECT 1 FROM me) AND ra.sha = $3 AND a.sealed AND r.state = 'active'
       AND r.approved_by IS NOT NULL
     LIMIT 1)
SELECT EXISTS (SELECT 1 FROM me) AS known, EXISTS (SELECT 1 FROM named) AS named,
       (SELECT c.bytes FROM artifact_chunks c
         WHERE c.sha = $3 AND c.n = $4 AND EXISTS (SELECT 1 FROM named)) AS b"
);

/// Chunk `n` of artifact `sha`, for worker `w`.
pub async fn artifact_chunk(
    db: &impl GenericClient,
    w: &WorkerId,
    sha: &str,
    n: i32,
) -> Result<Vec<u8>> {
    let row = one(
        db,
        ARTIFACT_CHUNK,
        &[(&w.id, Type::INT8), (w.secret(), Type::TEXT), (&sha, Type::TEXT), (&n, Type::INT4)],
    )
    .await
    .with_context(|| format!("cannot read chunk {n} of artifact {sha}"))?;
    super::lease::known(&row, w)?;
    if !row.try_get::<_, bool>("named")? {
        return Err(Refused::NotNamed(sha.to_string()).into());
    }
    row.try_get::<_, Option<Vec<u8>>>("b")?
        .ok_or_else(|| Refused::NoChunk(sha.to_string(), n).into())
}

/// Deletes the artifacts no run names, uploaded more than `min_age_secs` ago; returns them
/// (sha, size, kind).
pub async fn gc_artifacts(
    db: &impl GenericClient,
    min_age_secs: f64,
) -> Result<Vec<(String, i64, String)>> {
    let age = format!("{min_age_secs} seconds");
    let found = rows(
        db,
        "SELECT sha, size, kind FROM fleet_gc_artifacts($1::text::interval)",
        &[(&age, Type::TEXT)],
    )
    .await
    .context("cannot delete unused artifacts")?;
    found.iter().map(|r| Ok((r.try_get("sha")?, r.try_get("size")?, r.try_get("kind")?))).collect()
}
