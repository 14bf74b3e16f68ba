//! `runner cancel --db URL RUN`: an active run becomes cancelled; workers lose their leases on it
//! at their next heartbeat and stop its games (`crate::fleet::queue::cancel`).

use anyhow::{Result, bail};

use crate::cli::CancelArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::cancel;
use crate::fleet::schema;

/// `runner cancel`. Returns the process exit code.
pub async fn run(args: &CancelArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    match cancel(&db, args.run).await?.as_deref() {
        None => bail!("no run {} in the database", args.run),
        Some("active") => outln!("run {} cancelled", args.run),
        Some(state) => outln!("run {} is already {state}: nothing to cancel", args.run),
    }
    Ok(Exit::Done)
}
