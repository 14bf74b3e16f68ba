//! `runner status --db URL [RUN]`: the fleet's runs (`crate::fleet::status`).

use anyhow::Result;

use crate::cli::StatusArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::schema;
use crate::fleet::status::status;

/// `runner status`. Returns the process exit code.
pub async fn run(args: &StatusArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    out!("{}", status(&db, args.run).await?);
    Ok(Exit::Done)
}
