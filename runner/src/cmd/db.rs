//! `runner db init [--contract] --db URL`: creates the fleet's schema, or migrates it to this
//! runner's version; `--contract` also drops what runners of earlier versions needed
//! (`crate::fleet::schema`).

use anyhow::Result;

use crate::cli::{DbAction, DbArgs};
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::schema::{contract, current_version, init};

/// `runner db`. Returns the process exit code.
pub async fn run(args: &DbArgs) -> Result<Exit> {
    match &args.action {
        DbAction::Init(a) => {
            let (target, mut client) = connect(a.db.db.as_deref()).await?;
            let was =
                if a.contract { contract(&mut client).await? } else { init(&mut client).await? };
            let now = current_version(&client).await?;
            if was == now {
                outln!("fleet schema version {now} already in {target}");
            } else {
                outln!("fleet schema version {now} ready in {target} (was {was})");
            }
            Ok(Exit::Done)
        }
    }
}
