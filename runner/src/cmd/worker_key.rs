//! `runner worker-key add|revoke|list --db URL`: the fleet's worker keys (approvers;
//! `crate::fleet::queue::{key_add, key_revoke, keys}`).

use anyhow::Result;

use crate::cli::{WorkerKeyAction, WorkerKeyArgs};
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::{key_add, key_revoke, keys};
use crate::fleet::schema;

/// `runner worker-key`. Returns the process exit code.
pub async fn run(args: &WorkerKeyArgs) -> Result<Exit> {
    let db_flag = match &args.action {
        WorkerKeyAction::Add(k) | WorkerKeyAction::Revoke(k) => k.db.db.as_deref(),
        WorkerKeyAction::List(db) => db.db.as_deref(),
    };
    let (_, db) = connect(db_flag).await?;
    schema::check(&db).await?;
    match &args.action {
        WorkerKeyAction::Add(k) => {
            let key = key_add(&db, &k.name).await?;
            errln!(
                "worker key {} issued; it is shown once: give it to the worker's machine in a file \
                 (runner worker --key-file FILE, mode 0600) or as RUNNER_WORKER_KEY",
                k.name
            );
            outln!("{key}");
        }
        WorkerKeyAction::Revoke(k) => {
            let n = key_revoke(&db, &k.name).await?;
            outln!("worker key {} revoked; {n} leased pair(s) went back to the queue", k.name);
        }
        WorkerKeyAction::List(_) => {
            let rows = keys(&db).await?;
            if rows.is_empty() {
                outln!("no worker keys (issue one with `runner worker-key add NAME`)");
            }
            for k in rows {
                let state = match &k.revoked {
                    Some(at) => format!("revoked {at}"),
                    None => "valid".into(),
                };
                outln!(
                    "{}: {state}; issued by {} {}; {} worker(s), {} pair(s) stored",
                    k.name,
                    k.created_by,
                    k.created,
                    k.workers,
                    k.pairs
                );
            }
        }
    }
    Ok(Exit::Done)
}
