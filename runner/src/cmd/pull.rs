//! `runner pull --db URL RUN --out DIR`: a fleet run's games as an ordinary results folder
//! (`crate::fleet::pull`).

use anyhow::Result;

use crate::cli::PullArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::pull::pull;
use crate::fleet::queue::workers::mark_pulled;
use crate::fleet::schema;

/// `runner pull`. Returns the process exit code.
pub async fn run(args: &PullArgs) -> Result<Exit> {
    let (target, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let text = pull(&db, &target.to_string(), args.run, &args.out).await?;
    // Noted so that `runner delete` knows the games are kept somewhere (a reader may not note).
    if let Err(e) = mark_pulled(&db, args.run).await {
        errln!("note: the run was not marked as pulled ({e:#}); `runner delete` will need --force");
    }
    out!("{text}");
    outln!("results: {}", args.out.display());
    Ok(Exit::Done)
}
