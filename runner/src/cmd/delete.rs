//! `runner delete RUN [--force] (--server URL | --db URL)`: a finished run and its games are
//! removed (its owner or an approver; `crate::fleet::queue::people::delete`, or the
//! server's `POST /api/v1/runs/RUN/delete`).

use anyhow::Result;
use serde_json::json;

use super::door::{Via, open};
use crate::cli::DeleteArgs;
use crate::exit::Exit;
use crate::fleet::client::people::field;
use crate::fleet::queue::people;

/// `runner delete`. Returns the process exit code.
pub async fn run(args: &DeleteArgs) -> Result<Exit> {
    let n = match open(&args.db, true).await? {
        Via::Db(mut op) => {
            people::delete(&mut op.db, &op.who, args.run, args.force).await?.to_string()
        }
        Via::Server(s) => {
            let path = format!("/api/v1/runs/{}/delete", args.run);
            field(&s.post(&path, json!({ "force": args.force })).await?, "games")
        }
    };
    outln!("run {} deleted with its {n} game(s)", args.run);
    Ok(Exit::Done)
}
