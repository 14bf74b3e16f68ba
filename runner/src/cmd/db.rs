//! `runner db init [--contract] --db URL`: creates the fleet's schema, or migrates it to this
//! runner's version; `--contract` also drops what runners of earlier versions needed
//! (`crate::fleet::schema`).

use anyhow::Result;

use crate::cli::{DbAction, DbArgs};
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::schema::{VERSION, contract, current_version, init};

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
            if now < VERSION {
                errln!(
                    "note: the functions runners of schema version {now} and earlier call are \
                     kept; once every server and worker runs this version, `runner db init \
                     --contract` drops them (schema version {VERSION})"
                );
            }
            Ok(Exit::Done)
        }
    }
}
