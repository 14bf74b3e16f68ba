//! `runner worker-key add|revoke|list (--server URL | --db URL)`: the fleet's worker keys
//! (approvers; `crate::fleet::queue::people::{key_add, key_revoke, keys}`, or the server's
//! `/api/v1/worker-keys`).

use anyhow::{Result, anyhow};
use serde_json::{Value, json};

use super::door::{Via, open};
use crate::cli::{WorkerKeyAction, WorkerKeyArgs};
use crate::exit::Exit;
use crate::fleet::bounded::Name;
use crate::fleet::client::people::field;
use crate::fleet::queue::people;

/// `runner worker-key`. Returns the process exit code.
pub async fn run(args: &WorkerKeyArgs) -> Result<Exit> {
    let door = match &args.action {
        WorkerKeyAction::Add(k) | WorkerKeyAction::Revoke(k) => &k.db,
        WorkerKeyAction::List(db) => db,
    };
    let mut via = open(door, true).await?;
    let name = |n: &str| Name::new(n).map_err(|e| anyhow!("worker key {n:?}: {e}"));
    match &args.action {
        WorkerKeyAction::Add(k) => {
            let key = match &mut via {
                Via::Db(op) => people::key_add(&mut op.db, &op.who, &name(&k.name)?).await?,
                Via::Server(s) => {
                    field(&s.post("/api/v1/worker-keys", json!({ "name": k.name })).await?, "key")
                }
            };
            errln!(
                "worker key {} issued; it is shown once: give it to the worker's machine in a file \
                 (runner worker --key-file FILE, mode 0600) or as RUNNER_WORKER_KEY",
                k.name
            );
            outln!("{key}");
        }
        WorkerKeyAction::Revoke(k) => {
            let n = match &mut via {
                Via::Db(op) => {
                    people::key_revoke(&mut op.db, &op.who, &name(&k.name)?).await?.to_string()
                }
                Via::Server(s) => {
                    let path = format!("/api/v1/worker-keys/{}/revoke", k.name);
                    field(&s.post(&path, json!({})).await?, "pairs")
                }
            };
            outln!("worker key {} revoked; {n} leased pair(s) went back to the queue", k.name);
        }
        WorkerKeyAction::List(_) => {
            // Name, issuer, issued, revoked (empty: valid), workers, pairs stored.
            let rows: Vec<[String; 6]> = match &via {
                Via::Db(op) => people::keys(&op.db, &op.who)
                    .await?
                    .into_iter()
                    .map(|k| {
                        [
                            k.name.to_string(),
                            k.created_by.to_string(),
                            k.created.to_string(),
                            k.revoked.map(|r| r.to_string()).unwrap_or_default(),
                            k.workers.to_string(),
                            k.pairs.to_string(),
                        ]
                    })
                    .collect(),
                Via::Server(s) => {
                    let v = s.get("/api/v1/worker-keys").await?;
                    let list = v.get("keys").and_then(Value::as_array).cloned().unwrap_or_default();
                    list.iter()
                        .map(|k| {
                            ["name", "created_by", "created", "revoked", "workers", "pairs"]
                                .map(|f| field(k, f))
                        })
                        .collect()
                }
            };
            if rows.is_empty() {
                outln!("no worker keys (issue one with `runner worker-key add NAME`)");
            }
            for [name, by, created, revoked, workers, pairs] in rows {
                let state = if revoked.is_empty() {
                    "valid".to_string()
                } else {
                    format!("revoked {revoked}")
                };
                outln!(
                    "{name}: {state}; issued by {by} {created}; {workers} worker(s), {pairs} \
                     pair(s) stored"
                );
            }
        }
    }
    Ok(Exit::Done)
}
