//! Which way a person's fleet command goes (`crate::cli::FleetDoorArg`): `--server URL` (or
//! RUNNER_SERVER, unless `--db` is given) through the server's people API with the user's
//! token; else `--db URL` (or RUNNER_DB) straight to the database, the operator's way: on the
//! database's side, as an approver named after the database role, through the same Rust
//! operations (`crate::fleet::queue::people`, `submit`) the server runs for its users.

use anyhow::{Context, Result, bail};

use crate::cli::FleetDoorArg;
use crate::fleet::client::people::{PeopleClient, server_from_env, token};
use crate::fleet::connect::connect;
use crate::fleet::rights::Principal;
use crate::fleet::schema;

/// The way chosen, opened.
pub enum Via {
    Db(Operator),
    Server(PeopleClient),
}

/// The operator on the database's side: a connection and who acts through it, an approver
/// named after the database role (`session_user`), which the audit log and a submitted run's
/// owner then name. Whoever holds a database URL that may write the fleet's tables may do
/// anything anyway; through the server, rights are the users'.
pub struct Operator {
    pub db: tokio_postgres::Client,
    pub who: Principal,
}

/// Opens the way `arg` names. `changes`: the command changes something, so a token is needed
/// on the server's way (reading goes without one unless the server is `--private`).
pub async fn open(arg: &FleetDoorArg, changes: bool) -> Result<Via> {
    let server = match (&arg.server, &arg.db) {
        (Some(s), _) => Some(s.clone()),
        (None, Some(_)) => None,
        (None, None) => server_from_env(),
    };
    match server {
        Some(url) => {
            let token = token(arg.token_file.as_deref())?;
            if changes && token.is_none() {
                bail!(
                    "give --token-file FILE or set RUNNER_TOKEN: the token `runner user add` \
                     printed (the server at {url} says who may change what by it)"
                );
            }
            Ok(Via::Server(PeopleClient::new(&url, arg.ca.as_deref(), token)?))
        }
        None => {
            if arg.token_file.is_some() || arg.ca.is_some() {
                bail!("--token-file and --ca go with --server URL (or RUNNER_SERVER), not --db");
            }
            if arg.db.is_none() && std::env::var_os(crate::fleet::connect::DB_ENV).is_none() {
                bail!(
                    "no fleet: give --server URL (or set RUNNER_SERVER) with a user's token, or \
                     --db URL (or set RUNNER_DB) on the database's side"
                );
            }
            let (_, db) = connect(arg.db.as_deref()).await?;
            schema::check(&db).await?;
            let name: String = db
                .query_one("SELECT session_user::text AS name", &[])
                .await
                .context("cannot read the database role's name")?
                .try_get("name")?;
            Ok(Via::Db(Operator { db, who: Principal::User { name, approver: true } }))
        }
    }
}

/// The database `--db` (or RUNNER_DB) names, as a pulled folder and the messages name it
/// (`user@host:port/db`, never a password).
pub fn database_name(flag: Option<&str>) -> Result<String> {
    use crate::fleet::connect::{db_url, parse_target};
    Ok(parse_target(&db_url(flag)?)?.to_string())
}
