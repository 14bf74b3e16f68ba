//! What people do to runs and worker keys through the server, with an explicit actor: the
//! server connects as the one role that owns the tables, so `session_user` says nothing about
//! who asks. Each operation reads the run's row `FOR UPDATE`, asks [`rights::may`], changes
//! what it changes and writes an audit row, in one transaction. The limits are those the
//! version-3 checks say (`fleet_check_priority`, `fleet_check_throughput`: priority in
//! [-1000, 1000], above 0 for approvers only; throughput in [1, 1000]).
//!
//! The operator's `--db` commands run the same operations, as an approver named after the
//! database role (`cmd/door.rs`). The database functions of the previous versions
//! (`fleet_approve`, `fleet_modify`, ...) stay in a database migrated from an earlier version,
//! for a server of the version before during a rolling deploy, until `runner db init
//! --contract`; a new database never has them, and nothing of this version calls them.

use anyhow::Context;
use serde::Serialize;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient, Transaction};

use super::report::Settled;
use super::settle;
use super::share::{Change, Modified, Share};
use super::{one, opt, rows};
use crate::fleet::bounded::Name;
use crate::fleet::credentials::{WORKER_KEY_PREFIX, new_secret};
use crate::fleet::rights::{self, Action, Principal, Refusal, RunFacts, RunState};
use crate::hex::sha256_hex;

/// What the audit log records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditAction {
    Approve,
    Cancel,
    Modify,
    Purge,
    Delete,
    Pulled,
    KeyAdd,
    KeyRevoke,
    UserAdd,
    UserPasswd,
    UserDisable,
    TokenAdd,
    TokenRevoke,
    Login,
}

impl AuditAction {
    /// The word stored (the `audit.action` column's check lists them).
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Approve => "approve",
            AuditAction::Cancel => "cancel",
            AuditAction::Modify => "modify",
            AuditAction::Purge => "purge",
            AuditAction::Delete => "delete",
            AuditAction::Pulled => "pulled",
            AuditAction::KeyAdd => "key-add",
            AuditAction::KeyRevoke => "key-revoke",
            AuditAction::UserAdd => "user-add",
            AuditAction::UserPasswd => "user-passwd",
            AuditAction::UserDisable => "user-disable",
            AuditAction::TokenAdd => "token-add",
            AuditAction::TokenRevoke => "token-revoke",
            AuditAction::Login => "login",
        }
    }
}

/// Why a people operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum PeopleError {
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("no run {0} in the database")]
    NoRun(i64),
    #[error("{0}")]
    NotFound(String),
    /// A value out of its limits.
    #[error("{0}")]
    Invalid(String),
    /// The run's state or the keys' names refuse it.
    #[error("{0}")]
    Conflict(String),
    #[error("{0:#}")]
    Failed(#[from] anyhow::Error),
}

impl From<tokio_postgres::Error> for PeopleError {
    fn from(e: tokio_postgres::Error) -> PeopleError {
        PeopleError::Failed(anyhow::Error::new(e))
    }
}

impl PeopleError {
    /// The HTTP status it is answered with.
    pub fn status(&self) -> u16 {
        match self {
            PeopleError::Refused(r) => r.status(),
            PeopleError::NoRun(_) | PeopleError::NotFound(_) => 404,
            PeopleError::Invalid(_) => 400,
            PeopleError::Conflict(_) => 409,
            PeopleError::Failed(_) => 500,
        }
    }
}

pub(super) type Out<T> = Result<T, PeopleError>;

/// Writes one audit row.
pub async fn audit(
    db: &impl GenericClient,
    actor: &str,
    action: AuditAction,
    run: Option<i64>,
    target: Option<&str>,
    detail: &str,
) -> anyhow::Result<()> {
    db.query_typed(
        "INSERT INTO audit (actor, action, run_id, target, detail) VALUES ($1, $2, $3, $4, $5)",
        &[
            (&actor, Type::TEXT),
            (&action.as_str(), Type::TEXT),
            (&run, Type::INT8),
            (&target, Type::TEXT),
            (&detail, Type::TEXT),
        ],
    )
    .await
    .context("cannot write the audit log")?;
    Ok(())
}

pub(super) fn actor(who: &Principal) -> &str {
    who.name().unwrap_or("anonymous")
}

/// Run `run`'s owner, state and kind, its row locked for this transaction.
async fn facts(tx: &Transaction<'_>, run: i64) -> Out<RunFacts> {
    let row = opt(
        tx,
        "SELECT owner, state, kind FROM runs WHERE id = $1 FOR UPDATE",
        &[(&run, Type::INT8)],
    )
    .await?
    .ok_or(PeopleError::NoRun(run))?;
    let state: String = row.try_get("state")?;
    let kind: String = row.try_get("kind")?;
    Ok(RunFacts {
        owner: row.try_get("owner")?,
        state: RunState::parse(&state)
            .ok_or_else(|| anyhow::anyhow!("run {run} has the unknown state {state:?}"))?,
        tune: kind == "tune",
    })
}

/// Run `run`'s owner, state and kind, unlocked (what a page shows).
pub async fn run_facts(db: &Client, run: i64) -> Out<Option<RunFacts>> {
    let Some(row) =
        opt(db, "SELECT owner, state, kind FROM runs WHERE id = $1", &[(&run, Type::INT8)]).await?
    else {
        return Ok(None);
    };
    let state: String = row.try_get("state")?;
    let kind: String = row.try_get("kind")?;
    Ok(RunState::parse(&state).map(|state| RunFacts {
        owner: row.try_get("owner").unwrap_or_default(),
        state,
        tune: kind == "tune",
    }))
}

/// Begins a transaction on run `run`: its facts locked, `what` checked for `who`.
async fn begin<'a>(
    db: &'a mut Client,
    who: &Principal,
    what: Action,
    run: i64,
) -> Out<(Transaction<'a>, RunFacts)> {
    let tx = db.transaction().await?;
    let f = facts(&tx, run).await?;
    rights::may(who, what, Some(&f), false)?;
    Ok((tx, f))
}

/// Approves run `run` (approvers); returns its state before (`pending` when this approved it).
pub async fn approve(db: &mut Client, who: &Principal, run: i64) -> Out<RunState> {
    let (tx, f) = begin(db, who, Action::Approve, run).await?;
    if f.state == RunState::Pending {
        tx.query_typed(
            "UPDATE runs SET state = 'active', approved_by = $2, approved_at = now() \
             WHERE id = $1",
            &[(&run, Type::INT8), (&actor(who), Type::TEXT)],
        )
        .await?;
        audit(&tx, actor(who), AuditAction::Approve, Some(run), Some(&f.owner), "").await?;
    }
    tx.commit().await?;
    Ok(f.state)
}

/// Cancels run `run` when pending or active (its owner or an approver); returns its state
/// before.
pub async fn cancel(db: &mut Client, who: &Principal, run: i64) -> Out<RunState> {
    let (tx, f) = begin(db, who, Action::Cancel, run).await?;
    if f.state.is_open() {
        let why = format!("cancelled by {}", actor(who));
        tx.query_typed(
            "UPDATE runs SET state = 'cancelled', stop_reason = $2, \
             finished_at = clock_timestamp() WHERE id = $1",
            &[(&run, Type::INT8), (&why, Type::TEXT)],
        )
        .await?;
        audit(&tx, actor(who), AuditAction::Cancel, Some(run), Some(&f.owner), "").await?;
    }
    tx.commit().await?;
    Ok(f.state)
}

/// Priority bounds (`fleet_check_priority`).
pub const PRIORITY: std::ops::RangeInclusive<i32> = -1000..=1000;
/// Throughput bounds (`fleet_check_throughput`).
pub const THROUGHPUT: std::ops::RangeInclusive<i32> = 1..=1000;

/// A priority and a throughput (those given) within [`PRIORITY`] and [`THROUGHPUT`].
pub fn check_share(priority: Option<i32>, throughput: Option<i32>) -> Out<()> {
    if let Some(p) = priority
        && !PRIORITY.contains(&p)
    {
        return Err(PeopleError::Invalid(format!("priority {p} is outside [-1000, 1000]")));
    }
    if let Some(t) = throughput
        && !THROUGHPUT.contains(&t)
    {
        return Err(PeopleError::Invalid(format!(
            "throughput {t} is outside [1, 1000] (100 is the default share)"
        )));
    }
    Ok(())
}

/// Changes run `run`'s priority, throughput or length (its owner or an approver; a priority
/// above 0 needs an approver), as `fleet_modify` does.
pub async fn modify(db: &mut Client, who: &Principal, run: i64, change: Change) -> Out<Modified> {
    check_share(change.priority, change.throughput)?;
    let (tx, f) = begin(db, who, Action::Modify, run).await?;
    if change.priority.is_some_and(|p| p > 0) {
        rights::may(who, Action::RaisePriority, Some(&f), false)?;
    }
    let (mut skipped, mut reopened) = (0i64, 0i64);
    if let Some(pairs) = change.pairs {
        if !matches!(f.state, RunState::Pending | RunState::Active | RunState::Complete) {
            return Err(PeopleError::Conflict(format!(
                "run {run} is {}: its length cannot change",
                f.state.as_str()
            )));
        }
        if f.tune {
            return Err(PeopleError::Conflict(format!(
                "run {run} is a tuning run: its gains follow its number of iterations, so its \
                 length cannot change (cancel it and submit it again)"
            )));
        }
        let most: i32 = one(
            &tx,
            "SELECT coalesce(max(pair) + 1, 0) AS most FROM pairs WHERE run_id = $1",
            &[(&run, Type::INT8)],
        )
        .await?
        .try_get("most")?;
        if pairs < 1 || pairs > most {
            return Err(PeopleError::Invalid(format!(
                "run {run} was submitted with {} games per pairing: games must be between 2 and \
                 that (submit a new run for more)",
                2 * i64::from(most)
            )));
        }
        skipped = one(
            &tx,
            "WITH s AS (UPDATE pairs x SET state = 'skipped' FROM pairings g \
              WHERE x.run_id = $1 AND x.state = 'pending' AND x.pair >= $2 \
                AND g.run_id = x.run_id AND g.pairing = x.pairing AND g.active RETURNING 1) \
             SELECT count(*) AS n FROM s",
            &[(&run, Type::INT8), (&pairs, Type::INT4)],
        )
        .await?
        .try_get("n")?;
        reopened = one(
            &tx,
            "WITH o AS (UPDATE pairs x SET state = 'pending', token = NULL, worker_id = NULL, \
                    lease_until = NULL FROM pairings g \
              WHERE x.run_id = $1 AND x.state = 'skipped' AND x.pair < $2 \
                AND g.run_id = x.run_id AND g.pairing = x.pairing AND g.active RETURNING 1) \
             SELECT count(*) AS n FROM o",
            &[(&run, Type::INT8), (&pairs, Type::INT4)],
        )
        .await?
        .try_get("n")?;
        if reopened > 0 && f.state == RunState::Complete {
            tx.query_typed(
                "UPDATE runs SET state = 'active', stop_reason = NULL, finished_at = NULL \
                 WHERE id = $1",
                &[(&run, Type::INT8)],
            )
            .await?;
        }
        // A shrunk run whose every pair left is played is complete now.
        settle::decide_in(&tx, run).await?;
    }
    let r = one(
        &tx,
        "UPDATE runs SET priority = coalesce($2, priority), throughput = coalesce($3, throughput) \
         WHERE id = $1 RETURNING state, priority, throughput",
        &[(&run, Type::INT8), (&change.priority, Type::INT4), (&change.throughput, Type::INT4)],
    )
    .await?;
    let detail = serde_json::json!({
        "priority": change.priority, "throughput": change.throughput,
        "games": change.pairs.map(|p| 2 * i64::from(p)),
    })
    .to_string();
    audit(&tx, actor(who), AuditAction::Modify, Some(run), Some(&f.owner), &detail).await?;
    let out = Modified {
        state: r.try_get("state")?,
        share: Share { priority: r.try_get("priority")?, throughput: r.try_get("throughput")? },
        skipped,
        reopened,
    };
    tx.commit().await?;
    Ok(out)
}

/// Takes back what worker key `key` stored in run `run` (its games and counts) and hands those
/// pairs out again (its owner or an approver; not a tuning run), as `fleet_purge` does; then
/// the run is decided anew. Returns the pairs given back and the run after.
pub async fn purge(db: &mut Client, who: &Principal, run: i64, key: &Name) -> Out<(i64, Settled)> {
    let (tx, f) = begin(db, who, Action::Purge, run).await?;
    let k: i64 =
        opt(&tx, "SELECT id FROM worker_keys WHERE name = $1", &[(&key.as_str(), Type::TEXT)])
            .await?
            .ok_or_else(|| PeopleError::NotFound(format!("no worker key named {key}")))?
            .try_get("id")?;
    let n: i64 = one(
        &tx,
        "WITH gone AS (UPDATE pairs p SET state = 'pending', token = NULL, worker_id = NULL, \
                lease_until = NULL FROM workers w \
          WHERE p.run_id = $1 AND p.worker_id = w.id AND w.key_id = $2 \
            AND p.state IN ('done', 'leased') RETURNING 1) \
         SELECT count(*) AS n FROM gone",
        &[(&run, Type::INT8), (&k, Type::INT8)],
    )
    .await?
    .try_get("n")?;
    tx.query_typed(
        "DELETE FROM games g USING workers w \
          WHERE g.run_id = $1 AND g.worker_id = w.id AND w.key_id = $2",
        &[(&run, Type::INT8), (&k, Type::INT8)],
    )
    .await?;
    tx.query_typed(
        "DELETE FROM tallies t USING workers w \
          WHERE t.run_id = $1 AND t.worker_id = w.id AND w.key_id = $2",
        &[(&run, Type::INT8), (&k, Type::INT8)],
    )
    .await?;
    if matches!(f.state, RunState::Decided | RunState::Complete) {
        tx.query_typed(
            "UPDATE pairings SET active = true, verdict = NULL, why = NULL, stop_games = NULL, \
                    stop_best = NULL, stop_z = NULL WHERE run_id = $1",
            &[(&run, Type::INT8)],
        )
        .await?;
        tx.query_typed(
            "UPDATE pairs SET state = 'pending' WHERE run_id = $1 AND state = 'skipped'",
            &[(&run, Type::INT8)],
        )
        .await?;
        tx.query_typed(
            "UPDATE runs SET state = 'active', stop_reason = NULL, finished_at = NULL \
             WHERE id = $1",
            &[(&run, Type::INT8)],
        )
        .await?;
    }
    let what = format!("purged by {}: {n} pair(s) of key {key} played again", actor(who));
    tx.query_typed(
        "INSERT INTO incidents (run_id, key_id, what) VALUES ($1, $2, $3)",
        &[(&run, Type::INT8), (&k, Type::INT8), (&what, Type::TEXT)],
    )
    .await?;
    audit(&tx, actor(who), AuditAction::Purge, Some(run), Some(key.as_str()), &format!("{n}"))
        .await?;
    tx.commit().await?;
    let settled = settle::decide(db, run).await?;
    Ok((n, settled))
}

/// Removes run `run` with everything stored of it (its owner or an approver; a pending or
/// active run is refused; so is one not pulled since it ended, unless `force`). Returns the
/// number of games removed.
pub async fn delete(db: &mut Client, who: &Principal, run: i64, force: bool) -> Out<i64> {
    let (tx, f) = begin(db, who, Action::Delete, run).await?;
    let pulled: bool = one(
        &tx,
        "SELECT coalesce(pulled_at >= coalesce(finished_at, created_at), false) AS ok \
           FROM runs WHERE id = $1",
        &[(&run, Type::INT8)],
    )
    .await?
    .try_get("ok")?;
    if !force && !pulled {
        return Err(PeopleError::Conflict(format!(
            "run {run} was not pulled since it ended: its games would be lost (runner pull \
             {run} --out DIR first, or runner delete {run} --force)"
        )));
    }
    let n: i64 =
        one(&tx, "SELECT count(*) AS n FROM games WHERE run_id = $1", &[(&run, Type::INT8)])
            .await?
            .try_get("n")?;
    tx.query_typed("DELETE FROM runs WHERE id = $1", &[(&run, Type::INT8)]).await?;
    let detail = format!("{n} games{}", if force { ", forced" } else { "" });
    audit(&tx, actor(who), AuditAction::Delete, Some(run), Some(&f.owner), &detail).await?;
    tx.commit().await?;
    Ok(n)
}

/// Records that run `run`'s games were written to a results folder (its owner or an approver:
/// `delete` trusts it).
pub async fn pulled(db: &mut Client, who: &Principal, run: i64) -> Out<()> {
    let (tx, f) = begin(db, who, Action::Pulled, run).await?;
    tx.query_typed(
        "UPDATE runs SET pulled_at = clock_timestamp(), pulled_by = $2 WHERE id = $1",
        &[(&run, Type::INT8), (&actor(who), Type::TEXT)],
    )
    .await?;
    audit(&tx, actor(who), AuditAction::Pulled, Some(run), Some(&f.owner), "").await?;
    tx.commit().await?;
    Ok(())
}

/// Issues a worker key named `name` (approvers); returns the key, shown once (only its SHA-256
/// is stored, as `fleet_key_hash` makes it).
pub async fn key_add(db: &mut Client, who: &Principal, name: &Name) -> Out<String> {
    rights::may(who, Action::ManageKeys, None, false)?;
    let key = format!("{WORKER_KEY_PREFIX}{}", new_secret()?);
    let tx = db.transaction().await?;
    let made = opt(
        &tx,
        "INSERT INTO worker_keys (name, key_hash, created_by) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING RETURNING id",
        &[
            (&name.as_str(), Type::TEXT),
            (&sha256_hex(key.as_bytes()), Type::TEXT),
            (&actor(who), Type::TEXT),
        ],
    )
    .await?;
    if made.is_none() {
        return Err(PeopleError::Conflict(format!(
            "a worker key named {name} exists already (revoke it, or choose another name)"
        )));
    }
    audit(&tx, actor(who), AuditAction::KeyAdd, None, Some(name.as_str()), "").await?;
    tx.commit().await?;
    Ok(key)
}

/// Revokes worker key `name` (approvers): its workers are stopped and their leased pairs go
/// back to the queue. Returns the number of pairs given back.
pub async fn key_revoke(db: &mut Client, who: &Principal, name: &Name) -> Out<i64> {
    rights::may(who, Action::ManageKeys, None, false)?;
    let tx = db.transaction().await?;
    let k: i64 = opt(
        &tx,
        "UPDATE worker_keys SET revoked_at = coalesce(revoked_at, now()) WHERE name = $1 \
         RETURNING id",
        &[(&name.as_str(), Type::TEXT)],
    )
    .await?
    .ok_or_else(|| PeopleError::NotFound(format!("no worker key named {name}")))?
    .try_get("id")?;
    tx.query_typed(
        "UPDATE workers SET stopped_at = coalesce(stopped_at, now()) WHERE key_id = $1",
        &[(&k, Type::INT8)],
    )
    .await?;
    let n: i64 = one(
        &tx,
        "WITH r AS (UPDATE pairs p SET state = 'pending', token = NULL, worker_id = NULL, \
                lease_until = NULL FROM workers w \
          WHERE w.key_id = $1 AND p.worker_id = w.id AND p.state = 'leased' RETURNING 1) \
         SELECT count(*) AS n FROM r",
        &[(&k, Type::INT8)],
    )
    .await?
    .try_get("n")?;
    audit(&tx, actor(who), AuditAction::KeyRevoke, None, Some(name.as_str()), &format!("{n}"))
        .await?;
    tx.commit().await?;
    Ok(n)
}

/// A worker key as `runner worker-key list` shows it (never the key itself).
#[derive(Clone, Debug, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct KeyRow {
    pub name: String,
    pub created_by: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`; none while the key is valid.
    pub revoked: Option<String>,
    /// Worker processes registered with it.
    pub workers: i64,
    /// Pairs its workers stored.
    pub pairs: i64,
}

/// Every worker key (approvers).
pub async fn keys(db: &Client, who: &Principal) -> Out<Vec<KeyRow>> {
    rights::may(who, Action::ManageKeys, None, false)?;
    let found = rows(
        db,
        "SELECT k.name, k.created_by, \
           to_char(k.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created, \
           to_char(k.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS revoked, \
           (SELECT count(*) FROM workers w WHERE w.key_id = k.id) AS workers, \
           (SELECT count(*) FROM games g JOIN workers w ON w.id = g.worker_id \
             WHERE w.key_id = k.id AND g.game = 1) AS pairs \
         FROM worker_keys k ORDER BY k.id",
        &[],
    )
    .await?;
    let mut out = Vec::with_capacity(found.len());
    for r in &found {
        out.push(KeyRow {
            name: r.try_get("name")?,
            created_by: r.try_get("created_by")?,
            created: r.try_get("created")?,
            revoked: r.try_get("revoked")?,
            workers: r.try_get("workers")?,
            pairs: r.try_get("pairs")?,
        });
    }
    Ok(out)
}

/// The names of the worker keys whose workers stored results in run `run` (the purge form's
/// choices), by name.
pub async fn run_keys(db: &Client, run: i64) -> Out<Vec<String>> {
    let found = rows(
        db,
        "SELECT DISTINCT k.name FROM tallies t JOIN workers w ON w.id = t.worker_id \
           JOIN worker_keys k ON k.id = w.key_id WHERE t.run_id = $1 ORDER BY k.name",
        &[(&run, Type::INT8)],
    )
    .await?;
    Ok(found.iter().map(|r| r.try_get("name")).collect::<Result<_, _>>()?)
}

/// One entry of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct AuditRow {
    pub id: i64,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
    pub actor: String,
    pub action: String,
    pub run: Option<i64>,
    pub target: Option<String>,
    pub detail: Option<String>,
}

/// The audit log, newest first: at most `limit` entries older than entry `before` (approvers).
pub async fn audit_log(
    db: &Client,
    who: &Principal,
    limit: i64,
    before: Option<i64>,
) -> Out<Vec<AuditRow>> {
    rights::may(who, Action::ReadAudit, None, false)?;
    let found = rows(
        db,
        "SELECT id, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS at, \
                actor, action, run_id, target, detail \
           FROM audit WHERE id < coalesce($1, 9223372036854775807) ORDER BY id DESC LIMIT $2",
        &[(&before, Type::INT8), (&limit.clamp(1, 1000), Type::INT8)],
    )
    .await?;
    let mut out = Vec::with_capacity(found.len());
    for r in &found {
        out.push(AuditRow {
            id: r.try_get("id")?,
            at: r.try_get("at")?,
            actor: r.try_get("actor")?,
            action: r.try_get("action")?,
            run: r.try_get("run_id")?,
            target: r.try_get("target")?,
            detail: r.try_get("detail")?,
        });
    }
    Ok(out)
}
