//! `runner workers [--all] (--server URL | --db URL)`: the fleet's workers
//! (`crate::fleet::workers`, or the server's `GET /api/v1/workers`, the same text).

use anyhow::Result;

use super::door::{Via, open};
use crate::cli::WorkersArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::workers::list;

/// `runner workers`. Returns the process exit code.
pub async fn run(args: &WorkersArgs) -> Result<Exit> {
    let text = match open(&args.db, false).await? {
        Via::Db(op) => list(&op.db, args.all).await?,
        Via::Server(s) => {
            field(&s.get(&format!("/api/v1/workers?all={}", args.all)).await?, "text")
        }
    };
    out!("{text}");
    Ok(Exit::Done)
}
