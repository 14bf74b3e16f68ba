//! What a person submits through the server, with an explicit actor (the server connects as
//! the one role that owns the tables): the artifacts they upload, and the run they store.
//!
//! An artifact's upload belongs to whoever began it: another user's chunks of the same hash are
//! refused while it is fresh ([`STALE_UPLOAD`]), so nobody can take over or spoil an upload in
//! flight; a sealed artifact is everyone's and never changes. Sealing checks that the chunks
//! are all there and that their concatenation has the announced size and SHA-256 (computed by
//! the database, next to the bytes); an upload that fails the check is dropped.
//!
//! A run is its submitter's, pending unless they approve runs; it names only sealed artifacts,
//! each an engine binary or source archive of its submission.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::people::{Out, PeopleError, actor, check_share};
use super::share::Share;
use super::{one, opt};
use crate::fleet::artifacts::{CHUNK_SIZE, MAX_SIZE};
use crate::fleet::rights::{self, Action, Principal};

/// A new run: its submission (stored as given), what the database decides with, its pairings
/// and its game pairs in schedule order.
pub struct NewRun<'a> {
    pub kind: &'a str,
    pub submission: &'a Value,
    pub plan_hash: &'a str,
    /// `{"sprt": .., "race": .., "spsa": ..}` (see `fleet::decide::judge_config`).
    pub judge: &'a Value,
    pub labels: &'a [String],
    /// Each pairing's first and second engine, as game records name them.
    pub engines: &'a [(String, String)],
    /// `(pairing, pair, opening)` per pair, in schedule order.
    pub jobs: &'a [(i32, i32, i32)],
    /// A tuning run's starting theta.
    pub theta: Option<&'a Value>,
    /// A tuning run's random draws per pair (schedule order), else empty.
    pub draws: &'a [Value],
    /// Distinct workers that must refuse the run before it fails.
    pub refusal_limit: i32,
}

/// An unsealed upload untouched this long may be begun again by another user.
pub const STALE_UPLOAD: &str = "1 day";

/// What an artifact is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    Binary,
    Source,
}

impl ArtifactKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::Binary => "binary",
            ArtifactKind::Source => "source",
        }
    }
}

/// An upload's announced shape: its hash, size in bytes, and kind.
#[derive(Clone, Debug)]
pub struct Upload {
    pub sha: String,
    pub size: u64,
    pub kind: ArtifactKind,
}

impl Upload {
    /// The number of chunks of an artifact of `size` bytes.
    pub fn chunks(size: u64) -> u64 {
        size.div_ceil(CHUNK_SIZE as u64)
    }

    /// The length chunk `n` must have.
    fn chunk_len(&self, n: u64) -> u64 {
        (self.size - n * CHUNK_SIZE as u64).min(CHUNK_SIZE as u64)
    }

    /// The shape checked: a SHA-256 in lowercase hex, 1 byte to [`MAX_SIZE`].
    pub fn check(&self) -> Out<()> {
        check_sha(&self.sha)?;
        if self.size == 0 || self.size > MAX_SIZE {
            return Err(PeopleError::Invalid(format!(
                "artifact size {} is outside [1, {MAX_SIZE}] bytes",
                self.size
            )));
        }
        Ok(())
    }
}

/// A SHA-256 as artifacts are named: 64 lowercase hex digits.
pub fn check_sha(sha: &str) -> Out<()> {
    if sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(PeopleError::Invalid(
            "an artifact is named by its SHA-256: 64 lowercase hex digits".into(),
        ))
    }
}

/// Whether artifact `sha` is stored and sealed.
pub async fn sealed(db: &Client, sha: &str) -> Out<bool> {
    check_sha(sha)?;
    let row = opt(db, "SELECT sealed FROM artifacts WHERE sha = $1", &[(&sha, Type::TEXT)]).await?;
    Ok(match row {
        Some(r) => r.try_get("sealed")?,
        None => false,
    })
}

/// Stores chunk `n` of `up` for `who`; returns whether the artifact was sealed already (then
/// nothing was written).
pub async fn put_chunk(
    db: &mut Client,
    who: &Principal,
    up: &Upload,
    n: u64,
    bytes: &[u8],
) -> Out<bool> {
    rights::may(who, Action::Submit, None, false)?;
    up.check()?;
    let chunks = Upload::chunks(up.size);
    if n >= chunks {
        return Err(PeopleError::Invalid(format!(
            "artifact {}: chunk {n} of {chunks} (numbered from 0)",
            up.sha
        )));
    }
    if bytes.len() as u64 != up.chunk_len(n) {
        return Err(PeopleError::Invalid(format!(
            "artifact {}: chunk {n} has {} bytes, not {}",
            up.sha,
            bytes.len(),
            up.chunk_len(n)
        )));
    }
    let me = actor(who);
    let (size, chunks) = (up.size as i64, chunks as i32);
    let tx = db.transaction().await?;
    let insert = "INSERT INTO artifacts (sha, size, chunks, kind, created_by) \
                  VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sha) DO NOTHING";
    let args: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 5] = [
        (&up.sha, Type::TEXT),
        (&size, Type::INT8),
        (&chunks, Type::INT4),
        (&up.kind.as_str(), Type::TEXT),
        (&me, Type::TEXT),
    ];
    tx.query_typed(insert, &args).await?;
    let row = one(
        &tx,
        &format!(
            "SELECT sealed, created_by, size, chunks, kind, \
             created_at < now() - interval '{STALE_UPLOAD}' AS stale \
             FROM artifacts WHERE sha = $1 FOR UPDATE"
        ),
        &[(&up.sha, Type::TEXT)],
    )
    .await?;
    if row.try_get::<_, bool>("sealed")? {
        tx.commit().await?;
        return Ok(true);
    }
    let owner: String = row.try_get("created_by")?;
    if owner != me && !row.try_get::<_, bool>("stale")? {
        return Err(PeopleError::Conflict(format!(
            "artifact {} is being uploaded by {owner}: an upload is its uploader's until it is \
             sealed (or untouched for {STALE_UPLOAD})",
            up.sha
        )));
    }
    let same = owner == me
        && row.try_get::<_, i64>("size")? == size
        && row.try_get::<_, i32>("chunks")? == chunks
        && row.try_get::<_, String>("kind")? == up.kind.as_str();
    if !same {
        // Begun again: by another shape of the same user's upload, or over a stale one.
        tx.query_typed("DELETE FROM artifacts WHERE sha = $1", &[(&up.sha, Type::TEXT)]).await?;
        tx.query_typed(insert, &args).await?;
    }
    let n = n as i32;
    tx.query_typed(
        "INSERT INTO artifact_chunks (sha, n, bytes) VALUES ($1, $2, $3) \
         ON CONFLICT (sha, n) DO UPDATE SET bytes = EXCLUDED.bytes",
        &[(&up.sha, Type::TEXT), (&n, Type::INT4), (&bytes, Type::BYTEA)],
    )
    .await?;
    tx.query_typed(
        "UPDATE artifacts SET created_at = now() WHERE sha = $1",
        &[(&up.sha, Type::TEXT)],
    )
    .await?;
    tx.commit().await?;
    Ok(false)
}

/// Seals artifact `sha` of `who`'s upload once the database checked it: every chunk there, the
/// size and the SHA-256 of their concatenation those announced. An upload that fails the check
/// is dropped.
pub async fn seal(db: &mut Client, who: &Principal, sha: &str) -> Out<()> {
    rights::may(who, Action::Submit, None, false)?;
    check_sha(sha)?;
    let tx = db.transaction().await?;
    let Some(a) = opt(
        &tx,
        "SELECT sealed, created_by, size, chunks FROM artifacts WHERE sha = $1 FOR UPDATE",
        &[(&sha, Type::TEXT)],
    )
    .await?
    else {
        return Err(PeopleError::NotFound(format!("no artifact {sha} was uploaded")));
    };
    if a.try_get::<_, bool>("sealed")? {
        return Ok(());
    }
    let owner: String = a.try_get("created_by")?;
    if owner != actor(who) {
        return Err(PeopleError::Conflict(format!("artifact {sha} is being uploaded by {owner}")));
    }
    let got = one(
        &tx,
        "SELECT count(*) AS n, coalesce(sum(length(bytes)), 0)::int8 AS size, \
         encode(sha256(coalesce(string_agg(bytes, ''::bytea ORDER BY n), ''::bytea)), 'hex') \
         AS sha FROM artifact_chunks WHERE sha = $1",
        &[(&sha, Type::TEXT)],
    )
    .await?;
    let (n, size, whole): (i64, i64, String) =
        (got.try_get("n")?, got.try_get("size")?, got.try_get("sha")?);
    let (want_n, want_size): (i32, i64) = (a.try_get("chunks")?, a.try_get("size")?);
    if n != i64::from(want_n) || size != want_size || whole != sha {
        tx.query_typed("DELETE FROM artifacts WHERE sha = $1", &[(&sha, Type::TEXT)]).await?;
        tx.commit().await?;
        return Err(PeopleError::Invalid(format!(
            "artifact {sha}: the chunks uploaded ({n} of {want_n}, {size} of {want_size} bytes) \
             are not the file of that hash; the upload was dropped"
        )));
    }
    tx.query_typed("UPDATE artifacts SET sealed = true WHERE sha = $1", &[(&sha, Type::TEXT)])
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Stores `run` as `who`'s, at `share`, naming the sealed artifacts `shas`; returns its id and
/// whether it waits for an approver.
pub async fn submit(
    db: &mut Client,
    who: &Principal,
    run: &NewRun<'_>,
    share: Share,
    shas: &[String],
) -> Out<(i64, bool)> {
    rights::may(who, Action::Submit, None, false)?;
    check_share(Some(share.priority), Some(share.throughput))?;
    if share.priority > 0 {
        rights::may(who, Action::RaisePriority, None, false)?;
    }
    for sha in shas {
        check_sha(sha)?;
    }
    let approver = matches!(who, Principal::User { approver: true, .. });
    let state = if approver { "active" } else { "pending" };
    let me = actor(who);
    let tx = db.transaction().await?;
    let sealed: i64 = one(
        &tx,
        "SELECT count(*) AS n FROM artifacts WHERE sha = ANY($1) AND sealed",
        &[(&shas, Type::TEXT_ARRAY)],
    )
    .await?
    .try_get("n")?;
    let distinct: std::collections::BTreeSet<&String> = shas.iter().collect();
    if sealed != distinct.len() as i64 {
        return Err(PeopleError::Invalid(
            "the run names an artifact that is not uploaded and sealed: upload it first".into(),
        ));
    }
    let approved_by: Option<&str> = approver.then_some(me);
    let id: i64 = one(
        &tx,
        "INSERT INTO runs (kind, state, submission, plan_hash, owner, approved_by, approved_at, \
         judge, refusal_limit, priority, throughput) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6::text IS NULL THEN NULL ELSE now() END, \
         $7, $8, $9, $10) RETURNING id",
        &[
            (&run.kind, Type::TEXT),
            (&state, Type::TEXT),
            (run.submission, Type::JSONB),
            (&run.plan_hash, Type::TEXT),
            (&me, Type::TEXT),
            (&approved_by, Type::TEXT),
            (run.judge, Type::JSONB),
            (&run.refusal_limit, Type::INT4),
            (&share.priority, Type::INT4),
            (&share.throughput, Type::INT4),
        ],
    )
    .await?
    .try_get("id")?;
    let first: Vec<&str> = run.engines.iter().map(|e| e.0.as_str()).collect();
    let second: Vec<&str> = run.engines.iter().map(|e| e.1.as_str()).collect();
    tx.query_typed(
        "INSERT INTO pairings (run_id, pairing, label, first_name, second_name) \
         SELECT $1, t.i - 1, t.l, t.f, t.s \
         FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(l, f, s, i)",
        &[
            (&id, Type::INT8),
            (&run.labels, Type::TEXT_ARRAY),
            (&first, Type::TEXT_ARRAY),
            (&second, Type::TEXT_ARRAY),
        ],
    )
    .await?;
    let pairing: Vec<i32> = run.jobs.iter().map(|j| j.0).collect();
    let pair: Vec<i32> = run.jobs.iter().map(|j| j.1).collect();
    let opening: Vec<i32> = run.jobs.iter().map(|j| j.2).collect();
    let draws: Option<&[serde_json::Value]> = (!run.draws.is_empty()).then_some(run.draws);
    tx.query_typed(
        "INSERT INTO pairs (run_id, seq, pairing, pair, opening, draws) \
         SELECT $1, t.i - 1, t.pg, t.pr, t.o, ($5::jsonb[])[t.i] \
         FROM unnest($2::int4[], $3::int4[], $4::int4[]) WITH ORDINALITY AS t(pg, pr, o, i)",
        &[
            (&id, Type::INT8),
            (&pairing, Type::INT4_ARRAY),
            (&pair, Type::INT4_ARRAY),
            (&opening, Type::INT4_ARRAY),
            (&draws, Type::JSONB_ARRAY),
        ],
    )
    .await?;
    if let Some(theta) = run.theta {
        tx.query_typed(
            "INSERT INTO tune_state (run_id, theta) VALUES ($1, $2)",
            &[(&id, Type::INT8), (theta, Type::JSONB)],
        )
        .await?;
    }
    tx.query_typed(
        "INSERT INTO run_artifacts (run_id, sha) SELECT $1, s FROM unnest($2::text[]) s \
         ON CONFLICT DO NOTHING",
        &[(&id, Type::INT8), (&shas, Type::TEXT_ARRAY)],
    )
    .await?;
    tx.commit().await?;
    Ok((id, !approver))
}
