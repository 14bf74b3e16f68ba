//! `runner submit --db URL match|sweep|tune ARGS...`: the run is built and checked as the local
//! command builds and checks it (`crate::fleet::submission`), then stored with its schedule;
//! `run ID` is the last line on stdout.

use anyhow::Result;

use crate::cli::{SubmitArgs, SubmitWhat};
use crate::exit::Exit;
use crate::fleet::connect::connect;
use crate::fleet::queue::share::Share;
use crate::fleet::schema;
use crate::fleet::source::submit::prepare_sources;
use crate::fleet::submission::{
    store, submission_of_match_with, submission_of_sweep_with, submission_of_tune_with,
};

/// `runner submit`. Returns the process exit code.
pub async fn run(args: &SubmitArgs) -> Result<Exit> {
    // Engines from source (`src=`) are archived, built and benched first; their specs then
    // name their build.
    let mut what = args.what.clone();
    let specs = match &mut what {
        SubmitWhat::Match(m) => &mut m.run.engines.engines,
        SubmitWhat::Sweep(s) => &mut s.run.engines.engines,
        SubmitWhat::Tune(t) => &mut t.run.engines.engines,
    };
    let sources = prepare_sources(specs)?;
    let sub = match &what {
        SubmitWhat::Match(m) => submission_of_match_with(m, &sources).await?,
        SubmitWhat::Sweep(s) => submission_of_sweep_with(s, &sources).await?,
        SubmitWhat::Tune(t) => submission_of_tune_with(t, &sources).await?,
    };
    if sub.plan().scheduling.repeat == 1 {
        anyhow::bail!(
            "--repeat 1 is not supported by the fleet (its pairs hold one opening each): run it \
             locally, or use --repeat 2"
        );
    }
    let (target, mut db) = connect(args.db.db.as_deref()).await?;
    schema::check(&db).await?;
    let share = Share { priority: args.share.priority, throughput: args.share.throughput };
    let (id, pending) = store(&mut db, &sub, share, &sources).await?;
    let plan = sub.plan();
    errln!(
        "submitted to {target}: {} ({}), {} pairing(s) x {} games max, {}, {} opening(s), plan {}, \
         priority {}, throughput {}",
        sub.kind(),
        plan.kind,
        plan.pairings.len(),
        plan.pairs * 2,
        plan.limits_text(),
        sub.openings.len(),
        sub.run.plan_hash.get(..12).unwrap_or(&sub.run.plan_hash),
        share.priority,
        share.throughput
    );
    if pending {
        errln!("run {id} waits for an approver (`runner approve {id}`) before workers start on it");
    }
    outln!("run {id}");
    Ok(Exit::Done)
}
