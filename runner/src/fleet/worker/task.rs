//! One leased pair on a worker: its tuning iteration (computed by the server), its two games,
//! each record checked against the rules by replaying its moves, the report (again and again
//! while the server is away), and the decision the server took after it, if any (an older
//! server that took none is asked for one when the counts say it may be due).

use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::Served;
use crate::fleet::client::WorkerClient;
use crate::fleet::link::is_transient;
use crate::fleet::pair::{PairEnd, play_pair};
use crate::fleet::queue::{Claim, PairReport, Reported, Settled, WorkerId};
use crate::plan::schedule::Job;
use crate::play::cancel::Cancel;
use crate::play::pause::PauseWatch;
use crate::store::GameRecord;
use crate::store::rules::check_rules;
use crate::tune::spsa::Iteration;

/// How a pair task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ended {
    Stored,
    /// The server refused the report (lease lost, run or pairing stopped): nothing written.
    Refused,
    /// Stopped before its report (lease lost, run stopped, worker stopping).
    Stopped,
    /// The server refused the report for another reason: recorded, the pair given back.
    Incident,
    /// The run cannot be played here (an engine does not start): the worker refuses it.
    CannotPlay,
}

/// A finished pair task: its slot is free.
pub(super) struct Done {
    pub token: i64,
    pub run: i64,
    pub ended: Ended,
    /// A line to print.
    pub line: Option<String>,
    /// Why the run cannot be played here (the worker refuses it).
    pub cannot_play: Option<String>,
    /// The pair's records, when it was played (the fault limit counts them).
    pub records: Option<Box<[GameRecord; 2]>>,
}

/// Plays a claimed pair and reports it.
pub(super) async fn pair_task(
    link: Arc<WorkerClient>,
    id: WorkerId,
    s: Arc<Served>,
    c: Claim,
    pair_cancel: Cancel,
    cancel: Cancel,
    pause: Arc<PauseWatch>,
) -> Done {
    // Either signal stops the pair.
    let stop = Cancel::new();
    let watch = {
        let (a, b, stop) = (pair_cancel.clone(), cancel.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = a.cancelled() => {}
                _ = b.cancelled() => {}
            }
            stop.cancel();
        })
    };
    let mut done = Done {
        token: c.token,
        run: c.run_id,
        ended: Ended::Stopped,
        line: None,
        cannot_play: None,
        records: None,
    };
    match play_and_report(&link, &id, &s, &c, (&stop, &cancel), &pause, &mut done).await {
        Ok(()) => {}
        Err(e) if stop.is_cancelled() || is_transient(&e) => {
            done.ended = Ended::Stopped;
            done.line = Some(lost_line(&c));
        }
        Err(e) => {
            // The server refused the report for a lasting reason: record it and go on.
            let what = format!("{e:#}");
            let (id, c, what) = (&id, &c, &what);
            let _ = link.incident(id, c, what).await;
            done.ended = Ended::Incident;
            done.line = Some(format!(
                "run {} pair {}: the server refused the report ({what}); recorded, the pair goes \
                 back to the queue",
                c.run_id,
                c.pair + 1
            ));
        }
    }
    watch.abort();
    done
}

async fn play_and_report(
    link: &WorkerClient,
    id: &WorkerId,
    s: &Served,
    c: &Claim,
    (stop, quit): (&Cancel, &Cancel),
    pause: &PauseWatch,
    done: &mut Done,
) -> Result<()> {
    let iteration = match s.spec.tuned {
        Some(_) => match iteration_of(link, id, c, stop).await? {
            Some(it) => Some(it),
            None => {
                done.line = Some(lost_line(c));
                return Ok(());
            }
        },
        None => None,
    };
    let Some(records) = play_through_pauses(s, c, iteration.as_ref(), stop, pause, done).await?
    else {
        return Ok(());
    };
    let outcome = report(link, id, s, c, stop, &records).await?;
    let label = s.spec.plan.pairings.get(c.pairing as usize).map_or("", |p| p.label.as_str());
    let results = format!("{} {}", records[0].result.pgn(), records[1].result.pgn());
    match outcome {
        Reported::Stored { counts, open, settled } => {
            done.ended = Ended::Stored;
            let mut line =
                format!("run {} {label} pair {}: {results} stored", c.run_id, c.pair + 1);
            match settled {
                // The server decided after the report.
                Some(settled) => line.push_str(&decision_lines(c.run_id, &settled)),
                None if s.judge.may_stop(&counts) || !open => {
                    line.push_str(&settle(link, id, c.run_id, quit).await);
                }
                None => {}
            }
            done.line = Some(line);
        }
        Reported::Refused(why) => {
            done.ended = Ended::Refused;
            done.line = Some(format!(
                "run {} {label} pair {}: {results} refused: {why}",
                c.run_id,
                c.pair + 1
            ));
        }
    }
    done.records = Some(records);
    Ok(())
}

/// Plays the claimed pair, again while the worker was paused during one of its games. `None`
/// when it ends otherwise (stopped, or the run cannot be played here): `done` then says how.
async fn play_through_pauses(
    s: &Served,
    c: &Claim,
    iteration: Option<&Iteration>,
    stop: &Cancel,
    pause: &PauseWatch,
    done: &mut Done,
) -> Result<Option<Box<[GameRecord; 2]>>> {
    let job = Job {
        seq: c.seq as usize,
        pairing: c.pairing as usize,
        pair: c.pair as usize,
        opening: c.opening as usize,
        // `runner submit` refuses --repeat 1, so a fleet pair has one opening.
        second_opening: None,
    };
    loop {
        match play_pair(&s.spec, job, iteration, stop, pause).await? {
            PairEnd::Played(r) => return Ok(Some(r)),
            PairEnd::Stopped => {
                done.line = Some(lost_line(c));
                return Ok(None);
            }
            PairEnd::Paused(why) => errln!("warning: {why}"),
            PairEnd::Failed(why) => {
                done.ended = Ended::CannotPlay;
                done.cannot_play = Some(why);
                return Ok(None);
            }
        }
    }
}

/// Checks both games against the rules of chess (replaying their moves) and reports the pair,
/// again while the server is away; the server's answer.
async fn report(
    link: &WorkerClient,
    id: &WorkerId,
    s: &Served,
    c: &Claim,
    stop: &Cancel,
    records: &[GameRecord; 2],
) -> Result<Reported> {
    let variant = s.spec.plan.variant;
    for r in records.iter() {
        check_rules(r, variant).map_err(|e| {
            anyhow!("game {} of the pair breaks the rules of chess: {e}", r.game + 1)
        })?;
    }
    let values = [serde_json::to_value(&records[0])?, serde_json::to_value(&records[1])?];
    let report = PairReport {
        run_id: c.run_id,
        pairing: c.pairing,
        pair: c.pair,
        token: c.token,
        records: [&values[0], &values[1]],
    };
    let all = s.judge.needs_all();
    let what = format!("reporting run {} pair {}", c.run_id, c.pair + 1);
    let report = &report;
    link.call(&what, stop, |d| d.report(id, report, all)).await
}

/// Asks the server to decide on run `run` after a stored pair that may end it (a server of this
/// version decides after a report by itself). The server decides, from every stored pair; this worker
/// only asks (its lease of the pair has ended: only a signal, `quit`, gives up, leaving the
/// decision to the next report or an idle worker). Returns [`decision_lines`].
async fn settle(link: &WorkerClient, id: &WorkerId, run: i64, quit: &Cancel) -> String {
    let settled =
        link.call("asking for a decision", quit, |d| d.settle(id, run)).await.unwrap_or_default();
    decision_lines(run, &settled)
}

/// The stops' reasons and the run's new state, each on a line of its own after a `\n` ("" when
/// nothing was decided).
fn decision_lines(run: i64, settled: &Settled) -> String {
    let mut lines = String::new();
    for st in &settled.stops {
        lines.push_str(&format!("\n{}", st.why));
    }
    if !settled.state.is_empty() && settled.state != "active" {
        lines.push_str(&format!("\nrun {run} {}", settled.state));
    }
    lines
}

pub(super) fn lost_line(c: &Claim) -> String {
    format!(
        "run {} pair {}: stopped (lease lost, run stopped, or worker stopping)",
        c.run_id,
        c.pair + 1
    )
}

/// A tuning pair's iteration (the server computes and logs it). `None`: the lease is lost.
async fn iteration_of(
    link: &WorkerClient,
    id: &WorkerId,
    c: &Claim,
    stop: &Cancel,
) -> Result<Option<Iteration>> {
    let value = match &c.spsa {
        Some(v) => Some(v.clone()),
        None => link.call("reading the tuning iteration", stop, |d| d.iteration(id, c)).await?,
    };
    value
        .map(|v| {
            serde_json::from_value(v).map_err(|e| anyhow!("a logged iteration does not parse: {e}"))
        })
        .transpose()
}
