//! `runner gc --db URL`: deletes the stored engine artifacts no fleet run names (approvers
//! only; `crate::fleet::queue::gc_artifacts`).

use anyhow::Result;

use crate::cli::GcArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::gc_artifacts;
use crate::fleet::schema;

/// `runner gc`. Returns the process exit code.
pub async fn run(args: &GcArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let gone = gc_artifacts(&db, args.min_age.max(0.0)).await?;
    for (sha, size, kind) in &gone {
        outln!("deleted {kind} artifact {sha} ({size} bytes)");
    }
    let bytes: i64 = gone.iter().map(|g| g.1).sum();
    outln!("{} artifact(s) deleted, {bytes} bytes", gone.len());
    Ok(Exit::Done)
}
