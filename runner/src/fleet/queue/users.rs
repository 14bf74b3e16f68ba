//! Users, their API tokens and web sessions (schema version 6, `sql/v6_people.sql`): what the
//! operator's `runner user` writes on the server's machine, and what the server reads to learn
//! who asks. Tokens and session ids arrive here hashed (`fleet::credentials`); a disabled
//! user's tokens and sessions are refused by every lookup.

use anyhow::{Context, Result, bail};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, GenericClient};

use super::people::{AuditAction, audit};
use super::{opt, rows};
use crate::fleet::bounded::Name;
use crate::fleet::credentials::{new_token, secret_hash};

/// The actor the operator's commands on the server's machine are logged as.
pub const OPERATOR: &str = "operator";

/// Who a token or a session belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRow {
    pub id: i64,
    pub name: String,
    pub approver: bool,
}

/// Adds user `name` with a first API token; returns the token (only its hash is stored).
pub async fn user_add(db: &mut Client, name: &Name, approver: bool) -> Result<String> {
    let token = new_token()?;
    let tx = db.transaction().await?;
    let made = opt(
        &tx,
        "INSERT INTO users (name, approver) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING \
         RETURNING id",
        &[(&name.as_str(), Type::TEXT), (&approver, Type::BOOL)],
    )
    .await
    .context("cannot add the user")?;
    let Some(row) = made else { bail!("a user named {name} exists already") };
    let id: i64 = row.try_get("id")?;
    insert_token(&tx, id, &token).await?;
    let detail = if approver { "approver" } else { "submitter" };
    audit(&tx, OPERATOR, AuditAction::UserAdd, None, Some(name.as_str()), detail).await?;
    tx.commit().await?;
    Ok(token)
}

async fn insert_token(db: &impl GenericClient, user: i64, token: &str) -> Result<()> {
    let hash = secret_hash(token);
    db.query_typed(
        "INSERT INTO user_tokens (user_id, token_hash) VALUES ($1, $2)",
        &[(&user, Type::INT8), (&hash, Type::BYTEA)],
    )
    .await
    .context("cannot store the token")?;
    Ok(())
}

async fn user_id(db: &impl GenericClient, name: &Name) -> Result<i64> {
    match opt(db, "SELECT id FROM users WHERE name = $1", &[(&name.as_str(), Type::TEXT)]).await? {
        Some(r) => Ok(r.try_get("id")?),
        None => bail!("no user named {name}"),
    }
}

/// Issues user `name` another API token; returns it.
pub async fn token_add(db: &mut Client, name: &Name) -> Result<String> {
    let token = new_token()?;
    let tx = db.transaction().await?;
    let id = user_id(&tx, name).await?;
    insert_token(&tx, id, &token).await?;
    audit(&tx, OPERATOR, AuditAction::TokenAdd, None, Some(name.as_str()), "").await?;
    tx.commit().await?;
    Ok(token)
}

/// Revokes every API token of user `name`; returns how many were live.
pub async fn token_revoke(db: &mut Client, name: &Name) -> Result<u64> {
    let tx = db.transaction().await?;
    let id = user_id(&tx, name).await?;
    let n = tx
        .execute(
            "UPDATE user_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL",
            &[&id],
        )
        .await
        .context("cannot revoke the tokens")?;
    audit(&tx, OPERATOR, AuditAction::TokenRevoke, None, Some(name.as_str()), &format!("{n}"))
        .await?;
    tx.commit().await?;
    Ok(n)
}

/// Sets user `name`'s password hash (argon2, made by the caller); ends their web sessions.
pub async fn set_password(db: &mut Client, name: &Name, hash: &str) -> Result<()> {
    let tx = db.transaction().await?;
    let id = user_id(&tx, name).await?;
    tx.execute("UPDATE users SET password_hash = $2 WHERE id = $1", &[&id, &hash])
        .await
        .context("cannot store the password")?;
    tx.execute("DELETE FROM web_sessions WHERE user_id = $1", &[&id]).await?;
    audit(&tx, OPERATOR, AuditAction::UserPasswd, None, Some(name.as_str()), "").await?;
    tx.commit().await?;
    Ok(())
}

/// Disables user `name`: their tokens and sessions are refused from now on (their runs stay).
pub async fn disable(db: &mut Client, name: &Name) -> Result<()> {
    let tx = db.transaction().await?;
    let id = user_id(&tx, name).await?;
    tx.execute("UPDATE users SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1", &[&id])
        .await
        .context("cannot disable the user")?;
    tx.execute("DELETE FROM web_sessions WHERE user_id = $1", &[&id]).await?;
    audit(&tx, OPERATOR, AuditAction::UserDisable, None, Some(name.as_str()), "").await?;
    tx.commit().await?;
    Ok(())
}

fn user_row(r: &tokio_postgres::Row) -> Result<UserRow> {
    Ok(UserRow { id: r.try_get("id")?, name: r.try_get("name")?, approver: r.try_get("approver")? })
}

/// The enabled user whose live API token hashes to `hash`.
pub async fn by_token(db: &Client, hash: &[u8]) -> Result<Option<UserRow>> {
    let found = opt(
        db,
        "SELECT u.id, u.name, u.approver FROM user_tokens t JOIN users u ON u.id = t.user_id \
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL",
        &[(&hash, Type::BYTEA)],
    )
    .await
    .context("cannot look the token up")?;
    found.as_ref().map(user_row).transpose()
}

/// An enabled user's row and password hash, by name (None: no such user, disabled, or no
/// password set).
pub async fn password_of(db: &Client, name: &str) -> Result<Option<(UserRow, String)>> {
    let found = opt(
        db,
        "SELECT id, name, approver, password_hash FROM users \
          WHERE name = $1 AND disabled_at IS NULL AND password_hash IS NOT NULL",
        &[(&name, Type::TEXT)],
    )
    .await
    .context("cannot look the user up")?;
    found.map(|r| Ok((user_row(&r)?, r.try_get("password_hash")?))).transpose()
}

/// A web session: its user and the CSRF token its forms carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    pub user: UserRow,
    pub csrf: String,
}

/// Stores a new session of `user` (the cookie id's hash) for `secs` seconds.
pub async fn session_add(
    db: &Client,
    user: i64,
    id_hash: &[u8],
    csrf: &str,
    secs: f64,
) -> Result<()> {
    db.query_typed(
        "INSERT INTO web_sessions (id_hash, user_id, csrf, expires_at) \
         VALUES ($1, $2, $3, now() + make_interval(secs => $4))",
        &[(&id_hash, Type::BYTEA), (&user, Type::INT8), (&csrf, Type::TEXT), (&secs, Type::FLOAT8)],
    )
    .await
    .context("cannot store the session")?;
    // Expired sessions go as new ones come (an index range, usually empty).
    db.query_typed("DELETE FROM web_sessions WHERE expires_at < now()", &[])
        .await
        .context("cannot remove expired sessions")?;
    Ok(())
}

/// The live session whose cookie id hashes to `id_hash`, of an enabled user.
pub async fn session(db: &Client, id_hash: &[u8]) -> Result<Option<SessionRow>> {
    let found = rows(
        db,
        "SELECT u.id, u.name, u.approver, s.csrf FROM web_sessions s \
           JOIN users u ON u.id = s.user_id \
          WHERE s.id_hash = $1 AND s.expires_at > now() AND u.disabled_at IS NULL",
        &[(&id_hash, Type::BYTEA)],
    )
    .await
    .context("cannot look the session up")?;
    found
        .first()
        .map(|r| Ok(SessionRow { user: user_row(r)?, csrf: r.try_get("csrf")? }))
        .transpose()
}

/// Ends the session whose cookie id hashes to `id_hash`.
pub async fn session_end(db: &Client, id_hash: &[u8]) -> Result<()> {
    db.query_typed("DELETE FROM web_sessions WHERE id_hash = $1", &[(&id_hash, Type::BYTEA)])
        .await
        .context("cannot end the session")?;
    Ok(())
}
