//! `runner purge --db URL RUN --worker NAME`: every pair worker key NAME stored in the run is
//! taken back and played again, and the run decided anew (`crate::fleet::queue::purge`).

use anyhow::Result;

use crate::cli::PurgeArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::purge;
use crate::fleet::schema;

/// `runner purge`. Returns the process exit code.
pub async fn run(args: &PurgeArgs) -> Result<Exit> {
    let (_, mut db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let (n, settled) = purge(&mut db, args.run, &args.worker).await?;
    outln!(
        "run {}: {n} pair(s) of worker key {} taken back and handed out again; the run is {}",
        args.run,
        args.worker,
        settled.state
    );
    Ok(Exit::Done)
}
