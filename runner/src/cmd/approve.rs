//! `runner approve --db URL RUN`: a pending fleet run starts (approvers only;
//! `crate::fleet::queue::approve`).

use anyhow::Result;

use crate::cli::CancelArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::approve;
use crate::fleet::schema;

/// `runner approve`. Returns the process exit code.
pub async fn run(args: &CancelArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    match approve(&db, args.run).await?.as_str() {
        "pending" => outln!("run {} approved: workers start on it", args.run),
        state => outln!("run {} is {state}: nothing to approve", args.run),
    }
    Ok(Exit::Done)
}
