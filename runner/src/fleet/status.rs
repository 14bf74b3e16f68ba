//! `runner status`: the fleet's runs as the database holds them, one block per run: its state
//! and why it stopped, pairs done / leased / skipped of the schedule, workers alive, pairs per
//! hour, and per pairing the games, W-D-L, pentanomial, Elo and nElo with their 95 % intervals
//! and the LLR against its bounds (the `stats` crate, worded as a local run's summary words it);
//! then each worker key's part (`worker_stats`).

use anyhow::{Result, anyhow};
use stats::Options;
use tokio_postgres::Client;

use super::decide::stats_counts;
use super::queue::{self, PairingCounts, PairingRow, Progress, Refusal, RunRow};
use super::share::share_line;
use super::submission::Submission;
use super::worker_stats;
use crate::report::figures::{elo, nelo};
use crate::report::summary::summarize_or_na;
use crate::state::State;

/// Runs shown without a RUN argument (the newest).
pub const NEWEST: i64 = 20;

/// The status of run `run`, or of the newest runs.
pub async fn status(db: &Client, run: Option<i64>) -> Result<String> {
    let rows = match run {
        Some(id) => {
            vec![queue::run(db, id).await?.ok_or_else(|| anyhow!("no run {id} in the database"))?]
        }
        None => queue::runs(db, NEWEST).await?,
    };
    if rows.is_empty() {
        return Ok("no runs in the database (submit one with `runner submit`)\n".into());
    }
    let mut out = String::new();
    let shares = queue::share::shares(db).await?;
    for row in &rows {
        let counts = queue::pairing_counts(db, row.id, None).await?;
        let pairings = queue::pairings(db, row.id).await?;
        let progress = queue::progress(db, row.id).await?;
        let refusals = queue::refusals(db, row.id).await?;
        out.push_str(&format_run(row, &counts, &pairings, &progress, &refusals));
        // Owner, priority, throughput, share now, pairs per hour and time left (`share.rs`).
        let sprt = Submission::from_stored(&row.submission).ok().and_then(|s| s.plan().sprt);
        let share = queue::share::run_share(db, row.id).await?.unwrap_or_default();
        let now = shares.iter().find(|s| s.run == row.id);
        let active = row.state == "active";
        out.push_str(&share_line(share, now, &counts, sprt.as_ref(), &progress, active));
        out.push_str(&worker_stats::block(db, row.id).await?);
        out.push_str(&builds_block(&queue::builds::run_builds(db, row.id).await?));
        if run.is_some() {
            out.push_str(&engines_of(db, row).await?);
        }
    }
    Ok(out)
}

/// The block of `row`'s engines as workers run them ([`super::what_runs`]).
pub async fn engines_of(db: &Client, row: &RunRow) -> Result<String> {
    let Ok(sub) = Submission::from_stored(&row.submission) else {
        return Ok(String::new());
    };
    let artifacts = queue::artifacts::run_artifact_list(db, row.id).await?;
    Ok(super::what_runs::engines_block(&sub, &artifacts))
}

/// A run's engines built from source on the workers: per worker and engine, its last build
/// (`built in 41.2 s`, `cached`, `FAILED: why`) and bench speed; empty without any.
pub fn builds_block(builds: &[queue::builds::BuildRow]) -> String {
    if builds.is_empty() {
        return String::new();
    }
    let mut out = String::from("  builds:\n");
    for b in builds {
        let commit = b.commit.get(..12).unwrap_or(&b.commit);
        let how = match (b.build.as_str(), b.build_secs) {
            ("built", Some(s)) => format!("built in {s:.1} s"),
            ("failed", _) => "build FAILED".into(),
            (other, _) => other.to_string(),
        };
        let speed =
            b.nps.map(|n| format!(", bench {:.2} Mnps", n as f64 / 1e6)).unwrap_or_default();
        let error = b.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        out.push_str(&format!("    {} {} at {commit}: {how}{speed}{error}\n", b.worker, b.engine));
    }
    out
}

/// The SPRT verdicts of a run's pairings with pairs played (none without an SPRT), as the
/// server's pages judge them from the same counts.
fn verdicts(counts: &[PairingCounts], sprt: Option<stats::SprtSpec>) -> Vec<stats::Verdict> {
    counts
        .iter()
        .filter(|c| c.penta.iter().sum::<i64>() > 0)
        .filter_map(|c| {
            let options = Options { sprt, ..Options::default() };
            summarize_or_na(&stats_counts(c), &options, stats::summarize).0.sprt.map(|r| r.verdict)
        })
        .collect()
}

/// One run's block: its state in [`State`]'s words (`accepted (H1)`, `running`, ...).
pub fn format_run(
    row: &RunRow,
    counts: &[PairingCounts],
    pairings: &[PairingRow],
    p: &Progress,
    refusals: &[Refusal],
) -> String {
    let sub = Submission::from_stored(&row.submission);
    let sprt = sub.as_ref().ok().and_then(|s| s.plan().sprt);
    let what = match &sub {
        Ok(s) => format!("{}, {}", s.plan().kind, s.plan().limits_text()),
        Err(e) => format!("{} ({e})", row.kind),
    };
    let shown = State::of_fleet(&row.state, &verdicts(counts, sprt));
    let state = worker_stats::state_words(shown, p.pairs_done, p.pairs_leased, refusals.len());
    let mut out =
        format!("run {} ({what}; submitted {} by {}): {state}", row.id, row.created, row.owner);
    if let Some(why) = &row.stop_reason {
        out.push_str(&format!(" ({why})"));
    }
    out.push('\n');
    if row.state == "pending" {
        out.push_str(&format!(
            "  waits for an approver: `runner approve {}` (nothing is played before)\n",
            row.id
        ));
    }
    if !refusals.is_empty() {
        let who = refusals
            .iter()
            .map(|r| format!("{}: {}", r.key_name, r.reason))
            .collect::<Vec<_>>()
            .join("\n    ");
        let none_left = row.state == "active" && p.pairs_done == 0 && p.pairs_leased == 0;
        out.push_str(&format!(
            "  refused by {} worker(s){}:\n    {who}\n",
            refusals.len(),
            if none_left { " (no worker has played it)" } else { "" }
        ));
    }
    let rate = if p.reporting_secs > 0.0 && p.pairs_done > 1 {
        format!(
            "{:.0} pairs/h since the first report",
            (p.pairs_done - 1) as f64 * 3600.0 / p.reporting_secs
        )
    } else {
        "pairs/h n/a".into()
    };
    out.push_str(&format!(
        "  pairs: {} done, {} leased, {} skipped of {}; workers alive: {}; {} pairs in the last hour, {rate}\n",
        p.pairs_done, p.pairs_leased, p.pairs_skipped, p.pairs_total, p.workers_alive, p.pairs_last_hour
    ));
    for c in counts {
        let row = pairings.iter().find(|x| x.pairing == c.pairing);
        let label = row.map_or_else(|| format!("pairing {}", c.pairing), |r| r.label.clone());
        out.push_str(&format_pairing(&label, c, sprt));
        if let Some(r) = row
            && let Some(v) = &r.verdict
        {
            out.push_str(&format!(
                "    stopped: {v}{}\n",
                r.why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default()
            ));
        }
    }
    out
}

/// One pairing's lines: games, W-D-L, pentanomial, Elo, nElo, LLR.
fn format_pairing(label: &str, c: &PairingCounts, sprt: Option<stats::SprtSpec>) -> String {
    let [w, d, l] = c.wdl;
    let pe = c.penta;
    let mut s = format!(
        "  {label}: {} games, W-D-L {w}-{d}-{l}, pentanomial [LL LD DD WD WW] = [{} {} {} {} {}]\n",
        w + d + l,
        pe[0],
        pe[1],
        pe[2],
        pe[3],
        pe[4]
    );
    if pe.iter().sum::<i64>() == 0 {
        s.push_str("    no game pair yet\n");
        return s;
    }
    let (sum, why) = summarize_or_na(
        &stats_counts(c),
        &Options { sprt, ..Options::default() },
        stats::summarize,
    );
    s.push_str(&format!("    Elo {}, nElo {}", elo(&sum), nelo(&sum)));
    if let Some(r) = &sum.sprt {
        s.push_str(&format!(
            ", LLR {:.2} [{:.2}, {:.2}] (SPRT [{}, {}]: {})",
            r.llr, r.lower_bound, r.upper_bound, r.elo0, r.elo1, r.verdict
        ));
    }
    s.push('\n');
    if let Some(why) = why {
        s.push_str(&format!("    ({why})\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_block_shows_counts_figures_llr_and_progress() {
        let sub = json_submission();
        let row = RunRow {
            id: 7,
            kind: "match".into(),
            state: "decided".into(),
            stop_reason: Some("A vs B: SPRT accepted H1".into()),
            submission: sub,
            plan_hash: "h".into(),
            created: "2026-11-25T08:00:00Z".into(),
            finished: None,
            owner: "alice".into(),
            approved_by: Some("alice".into()),
        };
        let counts = [PairingCounts {
            pairing: 0,
            active: false,
            dropped: false,
            penta: [0, 2, 10, 20, 60],
            wdl: [140, 42, 2],
        }];
        let pairings = [PairingRow {
            pairing: 0,
            label: "A vs B".into(),
            active: false,
            verdict: Some("H1".into()),
            why: Some("SPRT accepted H1 after 184 games".into()),
            stop_games: Some(184),
            stop_best: None,
            stop_z: None,
        }];
        let p = Progress {
            pairs_total: 500,
            pairs_done: 92,
            pairs_leased: 0,
            pairs_skipped: 408,
            workers_alive: 3,
            pairs_last_hour: 92,
            reporting_secs: 1820.0,
        };
        let text = format_run(&row, &counts, &pairings, &p, &[]);
        assert!(text.starts_with("run 7 (match, nodes=100; "), "{text}");
        assert!(text.contains("submitted 2026-11-25T08:00:00Z by alice): accepted (H1)"), "{text}");
        assert!(text.contains(": accepted (H1) (A vs B: SPRT accepted H1)\n"), "{text}");
        assert!(text.contains("92 done, 0 leased, 408 skipped of 500; workers alive: 3; 92 pairs in the last hour, 180 pairs/h"), "{text}");
        assert!(
            text.contains(
                "A vs B: 184 games, W-D-L 140-42-2, pentanomial [LL LD DD WD WW] = [0 2 10 20 60]"
            ),
            "{text}"
        );
        assert!(
            text.contains("    Elo +") && text.contains(", nElo +") && text.contains(", LLR "),
            "{text}"
        );
        assert!(text.contains("(SPRT [0, 10]: H1)") || text.contains("SPRT [0, 10]"), "{text}");
        assert!(text.contains("    stopped: H1 (SPRT accepted H1 after 184 games)"), "{text}");
        // An unreadable submission still shows the counts.
        let bad = RunRow { submission: serde_json::json!({"x": 1}), ..row };
        let refused = [Refusal { key_name: "box1".into(), reason: "engine B: not found".into() }];
        let text = format_run(&bad, &counts, &pairings, &p, &refused);
        assert!(text.contains("refused by 1 worker(s):\n    box1: engine B: not found"), "{text}");
        assert!(
            text.contains("not one of this runner") && text.contains("W-D-L 140-42-2"),
            "{text}"
        );
    }

    /// A stored match submission with an SPRT, made without engines.
    fn json_submission() -> serde_json::Value {
        let mut plan = crate::store::tests::plan();
        plan.sprt = Some(stats::SprtSpec::parse("elo0=0,elo1=10").unwrap());
        let run = crate::store::RunFile {
            runner_version: "0".into(),
            created: "c".into(),
            ..crate::store::RunFile::new(plan)
        };
        serde_json::json!({
            "format": super::super::submission::SUBMISSION_FORMAT,
            "run": run,
            "openings": [],
            "engines": [],
            "settings": {"stall_timeout_s": 5.0, "start_timeout_s": 5.0, "fault_limit": 0},
            "experiment": {"kind": "match", "anchor": 0, "anchor_elo": 0.0}
        })
    }
}
