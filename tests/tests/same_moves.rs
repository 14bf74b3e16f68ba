//! Game pairs whose engines played the same moves: the bundled engine against itself at a node
//! limit is deterministic, so every pair's two games (colours reversed) are one game twice; the
//! runner counts such pairs in summary.json and says once, in the progress output and the
//! final summary, that the engines may not differ at this limit.

use e2e::{read_games, read_json, run_runner, scratch, stderr};

#[test]
fn a_deterministic_engine_against_itself_is_said_to_play_the_same_moves() {
    let dir = scratch("same-moves");
    let args = [
        "match",
        "--nodes",
        "300",
        "--games",
        "24",
        "--maxmoves",
        "12",
        "--seed",
        "3",
        "--progress",
        "plain",
        "--out",
        "out",
    ];
    let o = run_runner(&dir, &args);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(read_games(&dir.join("out")).len(), 24);
    let note =
        "12 of 12 pairs: the engines played the same moves; they may not differ at this limit";
    // While playing: once, when the share is first passed (after 10 pairs), with the label.
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| {
            l.starts_with("warning: engine vs engine: ")
                && l.ends_with(
                    " pairs: the engines played the same moves; they may not differ at this limit",
                )
        })
        .collect();
    assert_eq!(warned.len(), 1, "said once while playing:\n{err}");
    // In the final summary, with the final count.
    let out = e2e::stdout(&o);
    assert!(
        out.lines().chain(err.lines()).any(|l| l.trim() == format!("warning: {note}")),
        "in the summary:\n{out}\n{err}"
    );
    let summary = read_json(&dir.join("out/summary.json"));
    let same = &summary["pairings"][0]["same_moves"];
    assert_eq!(same["identical"].as_u64().unwrap() + same["alike"].as_u64().unwrap(), 12, "{same}");
    let warnings = summary["warnings"].to_string();
    assert!(warnings.contains(note), "{warnings}");
}
