//! `runner cancel --db URL RUN`: a pending or active run becomes cancelled (its owner or an
//! approver); workers lose their leases on it at their next heartbeat and stop its games
//! (`crate::fleet::queue::cancel`).

use anyhow::Result;

use crate::cli::CancelArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::cancel;
use crate::fleet::schema;

/// `runner cancel`. Returns the process exit code.
pub async fn run(args: &CancelArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    match cancel(&db, args.run).await?.as_str() {
        "active" | "pending" => outln!("run {} cancelled", args.run),
        state => outln!("run {} is already {state}: nothing to cancel", args.run),
    }
    Ok(Exit::Done)
}
