//! `runner approve --db URL RUN [--yes]`: a pending fleet run starts (approvers only;
//! `crate::fleet::queue::approve`), once the approver has seen every engine it runs, as workers
//! will run it (`crate::fleet::what_runs`), and said yes on a terminal (or with `--yes`).

use std::io::IsTerminal as _;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::ApproveArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::{self, approve};
use crate::fleet::schema;
use crate::fleet::status::engines_of;

/// `runner approve`. Returns the process exit code.
pub async fn run(args: &ApproveArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let row = queue::run(&db, args.run)
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
    out!("{}", engines_of(&db, &row).await?);
    if row.state != "pending" {
        outln!("run {} is {}: nothing to approve", args.run, row.state);
        return Ok(Exit::Done);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "not approved: standard input is not a terminal; read the engines above, then \
                 `runner approve {} --yes`",
                args.run
            );
        }
        out!("approve run {}: workers run the engines above? [y/N] ", args.run);
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer).context("cannot read the answer")?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            errln!("run {} not approved", args.run);
            return Ok(Exit::Error);
        }
    }
    match approve(&db, args.run).await?.as_str() {
        "pending" => outln!("run {} approved: workers start on it", args.run),
        state => outln!("run {} is {state}: nothing to approve", args.run),
    }
    Ok(Exit::Done)
}
