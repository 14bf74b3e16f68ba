//! `runner approve RUN [--yes] (--server URL | --db URL)`: a pending fleet run starts (approvers
//! only; `crate::fleet::queue::people::approve`, or the server's `POST /api/v1/runs/RUN/approve`), once
//! the approver has seen every engine it runs, as workers will run it
//! (`crate::fleet::what_runs`), and said yes on a terminal (or with `--yes`).

use std::io::IsTerminal as _;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::json;

use super::door::{Via, open};
use crate::cli::ApproveArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::queue::{self, people};
use crate::fleet::status::engines_of;

/// `runner approve`. Returns the process exit code.
pub async fn run(args: &ApproveArgs) -> Result<Exit> {
    let mut via = open(&args.db, true).await?;
    // What is approved: the run and its engines, then its state.
    let state = match &via {
        Via::Db(op) => {
            let db = &op.db;
            let row = queue::run(db, args.run)
                .await?
                .ok_or_else(|| anyhow!("no run {} in the database", args.run))?;
            outln!(
                "run {} ({}; submitted {} by {}): {}",
                row.id,
                row.kind,
                row.created,
                row.owner,
                row.state
            );
            out!("{}", engines_of(db, &row).await?);
            row.state
        }
        Via::Server(s) => {
            // A user who may not approve is told so before the engines are shown for a yes.
            let me = s.get("/api/v1/me").await?;
            if me.get("approver").and_then(|v| v.as_bool()) != Some(true) {
                bail!("{}", crate::fleet::rights::Refusal::ApproverOnly);
            }
            let v = s.get(&format!("/api/v1/runs/{}/status", args.run)).await?;
            out!("{}", field(&v, "text"));
            field(&v, "state")
        }
    };
    if state != "pending" {
        outln!("run {} is {state}: nothing to approve", args.run);
        return Ok(Exit::Done);
    }
    if !args.yes && !confirmed(args.run)? {
        errln!("run {} not approved", args.run);
        return Ok(Exit::Error);
    }
    let was = match &mut via {
        Via::Db(op) => people::approve(&mut op.db, &op.who, args.run).await?.as_str().to_string(),
        Via::Server(s) => {
            field(&s.post(&format!("/api/v1/runs/{}/approve", args.run), json!({})).await?, "was")
        }
    };
    match was.as_str() {
        "pending" => outln!("run {} approved: workers start on it", args.run),
        state => outln!("run {} is {state}: nothing to approve", args.run),
    }
    Ok(Exit::Done)
}

/// The approver's yes on a terminal; a standard input that is not one is refused.
fn confirmed(run: i64) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "not approved: standard input is not a terminal; read the engines above, then \
             `runner approve {run} --yes`"
        );
    }
    out!("approve run {run}: workers run the engines above? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).context("cannot read the answer")?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
