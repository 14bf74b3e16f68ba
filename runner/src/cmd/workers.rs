//! `runner workers --db URL [--all]`: the fleet's workers (`crate::fleet::workers`).

use anyhow::Result;

use crate::cli::WorkersArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::schema;
use crate::fleet::workers::list;

/// `runner workers`. Returns the process exit code.
pub async fn run(args: &WorkersArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    out!("{}", list(&db, args.all).await?);
    Ok(Exit::Done)
}
