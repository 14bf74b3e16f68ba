//! `runner modify --db URL RUN [--priority P] [--throughput T] [--games N]`: a run's priority,
//! throughput or length changes (its owner or an approver; `crate::fleet::queue::share`). The
//! next claims of every worker see it.

use anyhow::{Result, bail};

use crate::cli::ModifyArgs;
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::share::{Change, modify};
use crate::fleet::schema;

/// `runner modify`. Returns the process exit code.
pub async fn run(args: &ModifyArgs) -> Result<Exit> {
    if args.priority.is_none() && args.throughput.is_none() && args.games.is_none() {
        bail!("nothing to change: give --priority, --throughput or --games");
    }
    let pairs = args.games.map(|g| i32::try_from(g.div_ceil(2)).unwrap_or(i32::MAX));
    let (_, db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let change = Change { priority: args.priority, throughput: args.throughput, pairs };
    let m = modify(&db, args.run, change).await?;
    let mut line = format!(
        "run {} ({}): priority {}, throughput {}",
        args.run, m.state, m.share.priority, m.share.throughput
    );
    if let Some(p) = pairs {
        line.push_str(&format!(
            "; {} games per pairing at most: {} pending pair(s) skipped, {} reopened",
            2 * p,
            m.skipped,
            m.reopened
        ));
    }
    outln!("{line}");
    Ok(Exit::Done)
}
