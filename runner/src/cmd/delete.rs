//! `runner delete --db URL RUN [--force]`: a finished run and its games are removed (its owner or
//! an approver; `crate::fleet::queue::workers::delete_run`).

use anyhow::Result;

use crate::cli::DeleteArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::workers::delete_run;
use crate::fleet::schema;

/// `runner delete`. Returns the process exit code.
pub async fn run(args: &DeleteArgs) -> Result<Exit> {
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let n = delete_run(&db, args.run, args.force).await?;
    outln!("run {} deleted with its {n} game(s)", args.run);
    Ok(Exit::Done)
}
