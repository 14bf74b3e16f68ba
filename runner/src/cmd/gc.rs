//! `runner gc (--server URL | --db URL)`: deletes the stored engine artifacts no fleet run
//! names (approvers only; `crate::fleet::queue::artifacts::gc`, or the server's
//! `POST /api/v1/artifacts/gc`).

use anyhow::{Context, Result};
use serde_json::json;

use super::door::{Via, open};
use crate::cli::GcArgs;
use crate::exit::Exit;
use crate::fleet::queue::artifacts::{Collected, gc};

/// `runner gc`. Returns the process exit code.
pub async fn run(args: &GcArgs) -> Result<Exit> {
    let min_age = args.min_age.max(0.0);
    let gone: Vec<Collected> = match open(&args.db, true).await? {
        Via::Db(op) => gc(&op.db, &op.who, min_age).await?,
        Via::Server(s) => {
            let v = s.post("/api/v1/artifacts/gc", json!({ "min_age_secs": min_age })).await?;
            let list = v.get("deleted").cloned().unwrap_or_default();
            serde_json::from_value(list).context("the server's answer to gc does not parse")?
        }
    };
    for g in &gone {
        outln!("deleted {} artifact {} ({} bytes)", g.kind, g.sha, g.size);
    }
    let bytes: i64 = gone.iter().map(|g| g.size).sum();
    outln!("{} artifact(s) deleted, {bytes} bytes", gone.len());
    Ok(Exit::Done)
}
