//! `runner cancel RUN (--server URL | --db URL)`: a pending or active run becomes cancelled (its
//! owner or an approver); workers lose their leases on it at their next heartbeat and stop its
//! games (`crate::fleet::queue::people::cancel`, or the server's `POST /api/v1/runs/RUN/cancel`).

use anyhow::Result;
use serde_json::json;

use super::door::{Via, open};
use crate::cli::CancelArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::queue::people;

/// `runner cancel`. Returns the process exit code.
pub async fn run(args: &CancelArgs) -> Result<Exit> {
    let was = match open(&args.db, true).await? {
        Via::Db(mut op) => {
            people::cancel(&mut op.db, &op.who, args.run).await?.as_str().to_string()
        }
        Via::Server(s) => {
            field(&s.post(&format!("/api/v1/runs/{}/cancel", args.run), json!({})).await?, "was")
        }
    };
    match was.as_str() {
        "active" | "pending" => outln!("run {} cancelled", args.run),
        state => outln!("run {} is already {state}: nothing to cancel", args.run),
    }
    Ok(Exit::Done)
}
