//! `runner pull (--server URL | --db URL) RUN --out DIR`: a fleet run's games as an ordinary
//! results folder (`crate::fleet::pull`), read through the server's people API or straight from
//! the database, and checked again here before anything is written.

use anyhow::{Context, Result};
use serde_json::json;

use super::door::{Via, database_name, open};
use crate::cli::PullArgs;
use crate::exit::Exit;
use crate::fleet::pull::{PullBundle, pull, write_bundle};
use crate::fleet::queue::people;

/// `runner pull`. Returns the process exit code.
pub async fn run(args: &PullArgs) -> Result<Exit> {
    let text = match open(&args.db, false).await? {
        Via::Db(mut op) => {
            let name = database_name(args.db.db.as_deref())?;
            let text = pull(&op.db, &name, args.run, &args.out).await?;
            // Noted so that `runner delete` knows the games are kept somewhere (a reader may
            // not note).
            if let Err(e) = people::pulled(&mut op.db, &op.who, args.run).await {
                errln!(
                    "note: the run was not marked as pulled ({e:#}); `runner delete` will need \
                     --force"
                );
            }
            text
        }
        Via::Server(s) => {
            let v = s.get(&format!("/api/v1/runs/{}/pull", args.run)).await?;
            let bundle: PullBundle = serde_json::from_value(v)
                .context("the server's pull does not parse (a server of another version?)")?;
            let text = write_bundle(bundle, s.base(), &args.out)?;
            if !s.has_token() {
                errln!(
                    "note: read without a token, so the run was not marked as pulled; `runner \
                     delete` will need --force"
                );
            } else if let Err(e) =
                s.post(&format!("/api/v1/runs/{}/pulled", args.run), json!({})).await
            {
                errln!(
                    "note: the run was not marked as pulled ({e:#}); `runner delete` will need \
                     --force"
                );
            }
            text
        }
    };
    out!("{text}");
    outln!("results: {}", args.out.display());
    Ok(Exit::Done)
}
