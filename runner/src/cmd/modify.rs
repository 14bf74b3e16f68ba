//! `runner modify RUN [--priority P] [--throughput T] [--games N] (--server URL | --db URL)`: a
//! run's priority, throughput or length changes (its owner or an approver;
//! `crate::fleet::queue::people::modify`, or the server's `POST /api/v1/runs/RUN/modify`). The next
//! claims of every worker see it.

use anyhow::{Result, bail};
use serde_json::json;

use super::door::{Via, open};
use crate::cli::ModifyArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::queue::people;
use crate::fleet::queue::share::Change;

/// `runner modify`. Returns the process exit code.
pub async fn run(args: &ModifyArgs) -> Result<Exit> {
    if args.priority.is_none() && args.throughput.is_none() && args.games.is_none() {
        bail!("nothing to change: give --priority, --throughput or --games");
    }
    let pairs = args.games.map(|g| i32::try_from(g.div_ceil(2)).unwrap_or(i32::MAX));
    // The run's state, priority, throughput, pending pairs skipped and reopened.
    let [state, priority, throughput, skipped, reopened] = match open(&args.db, true).await? {
        Via::Db(mut op) => {
            let change = Change { priority: args.priority, throughput: args.throughput, pairs };
            let m = people::modify(&mut op.db, &op.who, args.run, change).await?;
            let share = (m.share.priority.to_string(), m.share.throughput.to_string());
            [m.state.to_string(), share.0, share.1, m.skipped.to_string(), m.reopened.to_string()]
        }
        Via::Server(s) => {
            let body = json!({
                "priority": args.priority, "throughput": args.throughput, "games": args.games,
            });
            let v = s.post(&format!("/api/v1/runs/{}/modify", args.run), body).await?;
            ["state", "priority", "throughput", "skipped", "reopened"].map(|k| field(&v, k))
        }
    };
    let mut line =
        format!("run {} ({state}): priority {priority}, throughput {throughput}", args.run);
    if let Some(p) = pairs {
        line.push_str(&format!(
            "; {} games per pairing at most: {skipped} pending pair(s) skipped, {reopened} reopened",
            2 * p
        ));
    }
    outln!("{line}");
    Ok(Exit::Done)
}
