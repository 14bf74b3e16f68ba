//! Artifacts (engine binaries, source archives) stored by SHA-256 in chunks: a submitter
//! uploads and seals them and names its run's; a worker lists an approved, active run's and
//! reads their chunks; an approver deletes those no run names ([`gc`]). The submitter's upload
//! is `super::submit`'s.

use anyhow::{Context, Result};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient};

use super::lease::{Refused, WorkerId};
use super::people::PeopleError;
use super::{one, rows};
use crate::fleet::rights::{self, Action, Principal};

/// An artifact as a worker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRow {
    pub sha: String,
    pub size: i64,
    pub chunks: i32,
    /// `binary` or `source`.
    pub kind: String,
}

/// The artifacts run `run` names, with their sizes and kinds (`sha`, `size`, `kind`; chunks
/// 0): what an approver approves (`runner status RUN`, `runner approve`). Readable by the
/// server's role and by `fleet_reader` (docs/fleet-reader-role.sql).
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

/// An artifact deleted by [`gc`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Collected {
    pub sha: String,
    pub size: i64,
    /// `binary` or `source`.
    pub kind: String,
}

/// Deletes the artifacts no run names, uploaded more than `min_age_secs` ago (approvers: a
/// submission in progress names its uploads only when it stores the run, hence the age);
/// returns them.
pub async fn gc(
    db: &Client,
    who: &Principal,
    min_age_secs: f64,
) -> Result<Vec<Collected>, PeopleError> {
    rights::may(who, Action::CollectGarbage, None, false)?;
    if !(min_age_secs.is_finite() && (0.0..=1e9).contains(&min_age_secs)) {
        return Err(PeopleError::Invalid(format!(
            "the minimum age {min_age_secs} is outside [0, 1e9] seconds"
        )));
    }
    let found = rows(
        db,
        "DELETE FROM artifacts a WHERE NOT EXISTS (SELECT 1 FROM run_artifacts r WHERE r.sha = a.sha) \
           AND a.created_at < now() - make_interval(secs => $1) RETURNING a.sha, a.size, a.kind",
        &[(&min_age_secs, Type::FLOAT8)],
    )
    .await
    .context("cannot delete unused artifacts")?;
    let mut out = found
        .iter()
        .map(|r| {
            Ok(Collected {
                sha: r.try_get("sha")?,
                size: r.try_get("size")?,
                kind: r.try_get("kind")?,
            })
        })
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()?;
    out.sort_by(|a, b| a.sha.cmp(&b.sha));
    Ok(out)
}
