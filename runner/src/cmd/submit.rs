//! `runner submit (--server URL | --db URL) match|sweep|tune ARGS...`: the run is built and
//! checked as the local command builds and checks it (`crate::fleet::submission`), its engines
//! uploaded as artifacts, then stored with its schedule, through the server's people API (the
//! server computes the schedule itself) or straight into the database; `run ID` is the last
//! line on stdout.

use anyhow::{Result, anyhow};
use serde_json::json;

use super::door::{Via, database_name, open};
use crate::cli::{SubmitArgs, SubmitWhat};
use crate::exit::Exit;
use crate::fleet::queue::share::Share;
use crate::fleet::source::submit::prepare_sources;
use crate::fleet::submission::{
    RunParts, Submission, store, submission_of_match_with, submission_of_sweep_with,
    submission_of_tune_with, upload_all,
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
    // Refused here as the server would refuse it, before any upload.
    RunParts::of(&sub)?;
    let share = Share { priority: args.share.priority, throughput: args.share.throughput };
    let (target, id, pending) = match open(&args.db, true).await? {
        Via::Db(mut op) => {
            let (id, pending) = store(&mut op.db, &op.who, &sub, share, &sources).await?;
            (database_name(args.db.db.as_deref())?, id, pending)
        }
        Via::Server(s) => {
            let shas = upload_all(&s, &sub, &sources).await?;
            let body = json!({
                "submission": sub,
                "priority": share.priority,
                "throughput": share.throughput,
                "artifacts": shas,
            });
            let v = s.post("/api/v1/runs", body).await?;
            let id = v.get("run").and_then(serde_json::Value::as_i64);
            let id = id.ok_or_else(|| anyhow!("the server's answer names no run"))?;
            let pending = v.get("state").and_then(serde_json::Value::as_str) == Some("pending");
            (s.base().to_string(), id, pending)
        }
    };
    said(&sub, &target, share);
    if pending {
        errln!("run {id} waits for an approver (`runner approve {id}`) before workers start on it");
    }
    outln!("run {id}");
    Ok(Exit::Done)
}

/// The line saying what was submitted where.
fn said(sub: &Submission, target: &str, share: Share) {
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
}
