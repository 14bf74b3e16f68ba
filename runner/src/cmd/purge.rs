//! `runner purge RUN --worker NAME (--server URL | --db URL)`: every pair worker key NAME stored
//! in the run is taken back and played again, and the run decided anew
//! (`crate::fleet::queue::people::purge`, or the server's `POST /api/v1/runs/RUN/purge`).

use anyhow::{Result, anyhow};
use serde_json::json;

use super::door::{Via, open};
use crate::cli::PurgeArgs;
use crate::exit::Exit;
use crate::fleet::bounded::Name;
use crate::fleet::client::people::field;
use crate::fleet::queue::people;

/// `runner purge`. Returns the process exit code.
pub async fn run(args: &PurgeArgs) -> Result<Exit> {
    let (n, state) = match open(&args.db, true).await? {
        Via::Db(mut op) => {
            let key = Name::new(&args.worker).map_err(|e| anyhow!("--worker: {e}"))?;
            let (n, settled) = people::purge(&mut op.db, &op.who, args.run, &key).await?;
            (n.to_string(), settled.state.to_string())
        }
        Via::Server(s) => {
            let body = json!({ "worker": args.worker });
            let v = s.post(&format!("/api/v1/runs/{}/purge", args.run), body).await?;
            (field(&v, "pairs"), field(&v, "state"))
        }
    };
    outln!(
        "run {}: {n} pair(s) of worker key {} taken back and handed out again; the run is {state}",
        args.run,
        args.worker
    );
    Ok(Exit::Done)
}
