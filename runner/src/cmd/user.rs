//! `runner user add|passwd|disable|token|revoke NAME --db URL`: the server's people, on the
//! server's machine (`crate::fleet::queue::users`). A token is printed once, alone on the last
//! line; a password is read from standard input and never printed.

use std::io::{BufRead, Read};

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::{UserAction, UserArgs};
use crate::exit::Exit;
use crate::fleet::bounded::Name;
use crate::fleet::connect::connect;
use crate::fleet::credentials::{PASSWORD_MAX, hash_password};
use crate::fleet::queue::users;
use crate::fleet::schema;

/// `runner user`. Returns the process exit code.
pub async fn run(args: &UserArgs) -> Result<Exit> {
    let (db_flag, name) = match &args.action {
        UserAction::Add(a) => (a.db.db.as_deref(), &a.name),
        UserAction::Passwd(a)
        | UserAction::Disable(a)
        | UserAction::Token(a)
        | UserAction::Revoke(a) => (a.db.db.as_deref(), &a.name),
    };
    let name = Name::new(name).map_err(|e| anyhow!("user name {name:?}: {e}"))?;
    // The password first: a prompt-less read that fails leaves the database untouched.
    let password = match &args.action {
        UserAction::Passwd(_) => Some(read_password()?),
        _ => None,
    };
    let (_, mut db) = connect(db_flag).await?;
    schema::check(&db).await?;
    match &args.action {
        UserAction::Add(a) => {
            let token = users::user_add(&mut db, &name, a.approver).await?;
            let role = if a.approver { "approver" } else { "submitter" };
            outln!("user {name} added ({role}); their API token, shown once:");
            outln!("{token}");
        }
        UserAction::Passwd(_) => {
            let pw = password.unwrap_or_default();
            let hash = tokio::task::spawn_blocking(move || hash_password(&pw)).await??;
            users::set_password(&mut db, &name, &hash).await?;
            outln!("user {name}: password set (their web sessions ended)");
        }
        UserAction::Disable(_) => {
            users::disable(&mut db, &name).await?;
            outln!("user {name} disabled: their tokens and sessions are refused");
        }
        UserAction::Token(_) => {
            let token = users::token_add(&mut db, &name).await?;
            outln!("user {name}: a new API token, shown once:");
            outln!("{token}");
        }
        UserAction::Revoke(_) => {
            let n = users::token_revoke(&mut db, &name).await?;
            outln!("user {name}: {n} token(s) revoked");
        }
    }
    Ok(Exit::Done)
}

/// The first line of standard input, without its line end.
fn read_password() -> Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .take(PASSWORD_MAX as u64 + 2)
        .read_line(&mut line)
        .context("cannot read the password from standard input")?;
    let pw = line.strip_suffix('\n').unwrap_or(&line);
    let pw = pw.strip_suffix('\r').unwrap_or(pw);
    if pw.is_empty() {
        bail!("no password on standard input (echo it, or pipe it from a file)");
    }
    if pw.len() > PASSWORD_MAX {
        bail!("the password is longer than {PASSWORD_MAX} bytes");
    }
    Ok(pw.to_string())
}
