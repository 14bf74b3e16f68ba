//! `runner pull --db URL RUN --out DIR`: a fleet run's games as an ordinary results folder
//! (`crate::fleet::pull`).

use anyhow::Result;

use crate::cli::PullArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::pull::pull;
use crate::fleet::schema;

/// `runner pull`. Returns the process exit code.
pub async fn run(args: &PullArgs) -> Result<Exit> {
    let (target, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let text = pull(&db, &target.to_string(), args.run, &args.out).await?;
    out!("{text}");
    outln!("results: {}", args.out.display());
    Ok(Exit::Done)
}
