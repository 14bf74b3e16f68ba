//! Time use: each engine's mean and longest time per move (runner-measured, from games.jsonl),
//! the clock each engine had left at the end of its games (replayed with the runner's own clock),
//! and the runner's turnaround and overhead figures from summary.json.

use std::collections::BTreeMap;

use maud::{Markup, html};

use super::digest::Digest;
use super::input::RunFiles;
use super::text::{num, table};
use crate::store::GameRecord;

/// (whether White moved, time in ms) of each engine move of a game; book moves are skipped.
pub fn side_times(r: &GameRecord) -> impl Iterator<Item = (bool, f64)> + '_ {
    let white_first = r.fen.split_whitespace().nth(1) != Some("b");
    r.times_ms.iter().enumerate().map(move |(k, &ms)| {
        let ply = r.book_plies + k;
        (ply.is_multiple_of(2) == white_first, ms)
    })
}

/// (engine, time in ms) of each engine move of a game; book moves are skipped.
pub fn move_times(r: &GameRecord) -> impl Iterator<Item = (&str, f64)> + '_ {
    side_times(r).map(|(white, ms)| (if white { r.white.as_str() } else { r.black.as_str() }, ms))
}

/// Each engine's clock at the end of its games under a Fischer control, in ms: (games, sum,
/// lowest). The recorded move times are charged to the runner's own [`Clock`] with the plan's
/// margin; the side that lost on time ends at 0 ([`Digest`] does the replay). Empty without a
/// plan or a clock.
pub fn clock_left(files: &RunFiles) -> BTreeMap<String, (u64, f64, u64)> {
    Digest::of_files(files).clock
}

/// The section.
pub fn section(files: &RunFiles, digest: &Digest) -> Markup {
    let moves: Vec<Vec<String>> = digest
        .times
        .iter()
        .map(|(e, (n, sum, max))| {
            vec![e.clone(), n.to_string(), num(Some(sum / *n as f64), 2), num(Some(*max), 1)]
        })
        .collect();
    let left: Vec<Vec<String>> = digest
        .clock
        .iter()
        .map(|(e, (n, sum, min))| {
            vec![
                e.clone(),
                n.to_string(),
                num(Some(sum / *n as f64 / 1000.0), 2),
                num(Some(*min as f64 / 1000.0), 2),
            ]
        })
        .collect();
    let overhead = files.run_summary().and_then(|s| s.runner_overhead.as_ref());
    html! {
        section #time {
            h2 { "Time use" }
            @if moves.is_empty() {
                p { "No moves recorded yet." }
            } @else {
                (table("sortable", &["engine", "moves", "mean ms per move", "longest move ms"], &moves))
            }
            @if !left.is_empty() {
                h3 { "Clock left at the end of a game" }
                (table("sortable", &["engine", "games", "mean s left", "least s left"], &left))
            }
            @match overhead {
                Some(o) => (super::plan::facts_list(&overhead_facts(o))),
                None => p { "Runner overhead and turnaround: n/a (summary.json has none yet)." },
            }
        }
    }
}

/// The runner's turnaround and CPU figures of summary.json.
fn overhead_facts(o: &crate::store::formats::run::OverheadReport) -> Vec<(&'static str, String)> {
    let count = |v: Option<u64>| v.map_or("n/a".to_string(), |v| v.to_string());
    vec![
        ("bestmove→go turnaround mean (µs)", num(o.turnaround_us_mean, 0)),
        ("turnaround p99 (µs)", count(o.turnaround_us_p99)),
        ("turnaround max (µs)", count(o.turnaround_us_max)),
        ("runner CPU per game (ms)", num(o.runner_cpu_per_game_ms, 2)),
        ("runner CPU per move (µs)", num(o.runner_cpu_per_move_us, 1)),
        ("runner CPU / engines' CPU (%)", num(o.runner_cpu_share.map(|x| x * 100.0), 2)),
        ("measured minus reported time per move (ms)", num(o.measured_minus_reported_ms_mean, 3)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_to_move_starts_with_black() {
        let line = r#"{"seq":0,"pairing":0,"label":"A vs B","pair":0,"game":0,"opening":1,"fen":"8/8/8/8/8/8/8/K1k5 b - - 0 1","white":"A","black":"B","result":"1/2-1/2","termination":"stalemate","plies":2,"book_plies":0,"moves":["c1c2","a1a2"],"scores":[null,null],"depths":[null,null],"times_ms":[3.0,5.0],"engine_times_ms":[null,null],"latency":{},"duration_ms":1,"date":"2026.01.01"}"#;
        let r: GameRecord = serde_json::from_str(line).expect("record");
        let v: Vec<(&str, f64)> = move_times(&r).collect();
        assert_eq!(v, vec![("B", 3.0), ("A", 5.0)]);
    }
}
