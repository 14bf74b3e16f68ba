//! `runner status [RUN] (--server URL | --db URL)`: the fleet's runs (`crate::fleet::status`,
//! or the server's `GET /api/v1/status` and `/api/v1/runs/RUN/status`, the same text).

use anyhow::Result;

use super::door::{Via, open};
use crate::cli::StatusArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::status::status;

/// `runner status`. Returns the process exit code.
pub async fn run(args: &StatusArgs) -> Result<Exit> {
    let text = match open(&args.db, false).await? {
        Via::Db(op) => status(&op.db, args.run).await?,
        Via::Server(s) => {
            let path = match args.run {
                Some(id) => format!("/api/v1/runs/{id}/status"),
                None => "/api/v1/status".to_string(),
            };
            field(&s.get(&path).await?, "text")
        }
    };
    out!("{text}");
    Ok(Exit::Done)
}
