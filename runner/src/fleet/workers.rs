//! `runner workers`: every worker process of the fleet as one line of a table (its key, its
//! machine, its state, what it serves and did), and under the table the runs each one refused,
//! with the reasons.
//!
//! State: `blocked` (its key was revoked), `stopped` (it ended), `alive` (a heartbeat within
//! three lease periods), `lost` (no heartbeat for longer, never stopped: killed, or cut off from
//! the database). Pairs per hour come from the worker's exponentially weighted pairs of the
//! last hour (counted by the database as each pair is stored), divided by the part of the hour
//! the worker has been registered for, so that a worker started ten minutes ago is not shown at
//! a sixth of its pace. Bench speeds are the last bench of each engine the worker loaded
//! (nodes per second on that machine; `queue::builds::engine_loaded`).

use anyhow::Result;
use tokio_postgres::Client;

use super::queue::workers::{WorkerRow, workers};

/// The table of workers (every one with `all`).
pub async fn list(db: &Client, all: bool) -> Result<String> {
    let rows = workers(db, all).await?;
    if rows.is_empty() {
        return Ok(if all {
            "no worker has registered yet\n".into()
        } else {
            "no worker alive or seen in the last hour (`runner workers --all` lists every one)\n"
                .into()
        });
    }
    Ok(format_workers(&rows))
}

/// A worker's name: its key's name and process id (`box1#12`).
pub fn worker_name(w: &WorkerRow) -> String {
    format!("{}#{}", w.key_name.as_deref().unwrap_or("-"), w.id)
}

/// The worker's state word.
pub fn state(w: &WorkerRow) -> &'static str {
    if w.blocked {
        "blocked"
    } else if w.stopped {
        "stopped"
    } else if w.beating {
        "alive"
    } else {
        "lost"
    }
}

/// Pairs per hour of late (None before its first pair).
pub fn pairs_per_hour(w: &WorkerRow) -> Option<f64> {
    if w.pairs == 0 || w.age <= 0.0 {
        return None;
    }
    let covered = 1.0 - (-w.age / 3600.0).exp();
    (covered > 0.0).then(|| w.recent / covered)
}

/// "12 s", "5 min", "3 h", "2 d".
pub fn ago(secs: f64) -> String {
    let s = secs.max(0.0);
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 90.0 * 60.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 36.0 * 3600.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} d", s / 86400.0)
    }
}

const HEADER: [&str; 14] = [
    "worker",
    "host",
    "cpu",
    "cores",
    "conc",
    "version",
    "state",
    "last heartbeat",
    "runs now",
    "pairs/h",
    "games",
    "crashes",
    "time losses",
    "bench",
];

/// "engine 1.23 Mnps, dev 850 knps", or "-".
pub fn bench_speeds(w: &WorkerRow) -> String {
    if w.benches.is_empty() {
        return "-".into();
    }
    let speed = |n: i64| match n {
        n if n >= 1_000_000 => format!("{:.2} Mnps", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.0} knps", n as f64 / 1e3),
        n => format!("{n} nps"),
    };
    w.benches.iter().map(|(e, n)| format!("{e} {}", speed(*n))).collect::<Vec<_>>().join(", ")
}

pub fn format_workers(rows: &[WorkerRow]) -> String {
    let mut table: Vec<Vec<String>> = vec![HEADER.iter().map(|h| h.to_string()).collect()];
    for w in rows {
        table.push(vec![
            worker_name(w),
            w.host.clone(),
            w.cpu.clone().unwrap_or_else(|| "unknown".into()),
            w.cores.map_or_else(|| "-".into(), |c| c.to_string()),
            w.concurrency.to_string(),
            w.version.clone().unwrap_or_else(|| "-".into()),
            state(w).into(),
            format!("{} ({} ago)", w.heartbeat, ago(w.heartbeat_ago)),
            w.runs_now.to_string(),
            pairs_per_hour(w).map_or_else(|| "-".into(), |r| format!("{r:.0}")),
            w.games.to_string(),
            w.crashes.to_string(),
            w.time_losses.to_string(),
            bench_speeds(w),
        ]);
    }
    let mut out = align(&table);
    let refused: Vec<String> = rows
        .iter()
        .flat_map(|w| {
            w.refusals
                .iter()
                .map(move |(run, why)| format!("  {} refused run {run}: {why}\n", worker_name(w)))
        })
        .collect();
    if !refused.is_empty() {
        out.push_str("refusals:\n");
        out.extend(refused);
    }
    out
}

/// Columns left-aligned, two spaces apart, no trailing space.
pub fn align(table: &[Vec<String>]) -> String {
    let cols = table.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            table.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in table {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', width[c] - cell.chars().count()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> WorkerRow {
        WorkerRow {
            id: 12,
            key_name: Some("box1".into()),
            host: "h1".into(),
            cpu: Some("AMD Ryzen 9 7950X".into()),
            cores: Some(32),
            concurrency: 30,
            version: Some("0.1.0".into()),
            beating: true,
            heartbeat: "2026-11-28T01:00:00Z".into(),
            heartbeat_ago: 4.0,
            age: 3600.0 * 10.0,
            runs_now: 2,
            pairs: 500,
            games: 1000,
            crashes: 1,
            time_losses: 3,
            recent: 120.0,
            refusals: vec![(5, "engine B: not found".into())],
            ..WorkerRow::default()
        }
    }

    #[test]
    fn states_in_order_of_precedence() {
        let w = row();
        assert_eq!(state(&w), "alive");
        assert_eq!(state(&WorkerRow { beating: false, ..w.clone() }), "lost");
        assert_eq!(state(&WorkerRow { stopped: true, ..w.clone() }), "stopped");
        assert_eq!(state(&WorkerRow { stopped: true, blocked: true, ..w }), "blocked");
    }

    #[test]
    fn pairs_per_hour_count_only_the_time_registered() {
        let w = row();
        assert!((pairs_per_hour(&w).unwrap() - 120.0).abs() < 0.01);
        // Ten minutes old with 20 weighted pairs: about 120 per hour, not 20.
        let young = WorkerRow { age: 600.0, recent: 20.0, ..w.clone() };
        let r = pairs_per_hour(&young).unwrap();
        assert!((r - 130.8).abs() < 1.0, "{r}");
        assert_eq!(pairs_per_hour(&WorkerRow { pairs: 0, ..w }), None);
    }

    #[test]
    fn the_table_has_every_column_and_the_refusals_under_it() {
        let benched = WorkerRow {
            benches: vec![("engine".into(), 1_234_567), ("dev".into(), 850_000)],
            ..row()
        };
        let text =
            format_workers(&[benched, WorkerRow { id: 13, cpu: None, cores: None, ..row() }]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("worker   host  cpu"), "{text}");
        assert!(lines[0].ends_with("games  crashes  time losses  bench"), "{text}");
        assert!(lines[1].starts_with("box1#12  h1    AMD Ryzen 9 7950X  32"), "{text}");
        assert!(lines[1].contains("alive  2026-11-28T01:00:00Z (4 s ago)"), "{text}");
        assert!(
            lines[1]
                .ends_with("120      1000   1        3            engine 1.23 Mnps, dev 850 knps"),
            "{text}"
        );
        assert!(lines[2].ends_with("3            -"), "{text}");
        assert!(lines[2].starts_with("box1#13  h1    unknown            -"), "{text}");
        assert!(
            text.contains("refusals:\n  box1#12 refused run 5: engine B: not found\n"),
            "{text}"
        );
        assert_eq!(ago(4000.0), "67 min");
        assert_eq!(ago(7200.0), "2 h");
    }
}
