//! `runner db init --db URL`: creates the fleet's schema, or migrates it to this runner's
//! version (`crate::fleet::schema`).

use anyhow::Result;

use crate::cli::{DbAction, DbArgs};
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::schema::{VERSION, init};

/// `runner db`. Returns the process exit code.
pub async fn run(args: &DbArgs) -> Result<Exit> {
    match &args.action {
        DbAction::Init(db) => {
            let (target, mut client) = connect(db.db.as_deref()).await?;
            let was = init(&mut client).await?;
            if was == VERSION {
                outln!("fleet schema version {VERSION} already in {target}");
            } else {
                outln!("fleet schema version {VERSION} ready in {target} (was {was})");
            }
            Ok(Exit::Done)
        }
    }
}
