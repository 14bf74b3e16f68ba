//! Pages of synthetic run folders: escaping, live vs ended, unreadable input, and the size and
//! writing time of a 1000-game page.

use std::time::Instant;

use tempfile::TempDir;

use serde_json::json;

use super::input::{self, Liveness};
use super::*;

/// An empty folder for one test, removed with what it holds when the test ends, passed or
/// failed (also used by `live`'s test).
pub(super) fn folder(name: &str) -> TempDir {
    tempfile::Builder::new().prefix(&format!("html-report-{name}-")).tempdir().expect("temp dir")
}

fn run_json(sprt: bool) -> serde_json::Value {
    json!({"format": 1, "runner_version": "0.1.0", "created": "2026-01-01T00:00:00Z", "plan_hash": "x",
      "plan": {"kind": "match",
        "engines": [{"name": "A<script>", "cmd": "/e", "args": [], "dir": null, "options": [["LMR", "false"]]},
                    {"name": "B", "cmd": "/e", "args": [], "dir": null, "options": []}],
        "pairings": [{"label": "A<script> vs B", "first": 0, "second": 1}],
        "tc": {"kind": "nodes", "nodes": 2000}, "timemargin_ms": 100,
        "book": {"path": "book.epd", "sha256": "0", "openings": 4, "plies": null},
        "book_order": "random", "seed": 7, "pairs": 500,
        "adjudication": {"draw": null, "resign": null, "max_moves": null},
        "sprt": if sprt { json!({"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05, "model": "normalized"}) } else { json!(null) },
        "shard": null}})
}

/// A game record of pair `pair`, game `game` with `plies` moves.
fn record(pair: usize, game: u8, result: &str, termination: &str) -> String {
    let (w, b) = if game == 0 { ("A<script>", "B") } else { ("B", "A<script>") };
    let moves: Vec<&str> =
        ["g1f3", "g8f6", "f3g1", "f6g8"].iter().copied().cycle().take(80).collect();
    json!({"seq": pair, "pairing": 0, "label": "A<script> vs B", "pair": pair, "game": game,
      "opening": pair % 4, "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
      "white": w, "black": b, "result": result, "termination": termination, "plies": moves.len(),
      "book_plies": 0, "moves": moves, "scores": vec![json!({"cp": 12}); moves.len()],
      "depths": vec![json!(9); moves.len()], "times_ms": vec![json!(1.5); moves.len()],
      "engine_times_ms": vec![json!(1); moves.len()], "latency": {}, "duration_ms": 100,
      "date": "2026.01.01"})
    .to_string()
}

fn games(pairs: usize) -> String {
    let results = ["1-0", "0-1", "1/2-1/2", "1-0", "1/2-1/2"];
    let mut s = String::new();
    for p in 0..pairs {
        for g in 0..2u8 {
            let r = results[(p * 2 + g as usize) % results.len()];
            let t = if r == "1/2-1/2" {
                "threefold"
            } else if p % 50 == 7 {
                "time-forfeit"
            } else {
                "checkmate"
            };
            s.push_str(&record(p, g, r, t));
            s.push('\n');
        }
    }
    s
}

#[test]
fn a_finished_match_page_escapes_and_does_not_reload() {
    let t = folder("ended");
    let d = t.path();
    std::fs::write(d.join("run.json"), run_json(true).to_string()).unwrap();
    std::fs::write(
        d.join("games.jsonl"),
        games(3) + "{not json}\n" + &record(9, 0, "1-0", "checkmate"),
    )
    .unwrap();
    std::fs::write(
        d.join("summary.json"),
        r#"{"stopped_by":"complete","warnings":["w <1>"],"pairings":[]}"#,
    )
    .unwrap();
    let path = write_report(d).expect("page");
    let html = std::fs::read_to_string(path).unwrap();
    assert!(!html.contains("http-equiv=\"refresh\""), "an ended run does not reload");
    assert!(!html.contains("<script>\""), "names are escaped");
    assert!(html.contains("A&lt;script&gt; vs B"));
    assert_eq!(html.matches("<script>").count(), 1, "only the page's own script");
    assert!(html.contains("Ended: complete."));
    assert!(html.contains("SPRT [0, 10] (normalized) LLR"), "verdict line");
    assert!(html.contains("games.jsonl line 7: not a game record"), "the bad line is named");
    assert_eq!(html.matches("<li class=\"game\"").count(), 7);
    assert!(html.contains("w &lt;1&gt;"), "warnings are shown, escaped");
    assert!(html.contains("<img class=\"plot\" src=\"data:image/svg+xml;base64,"), "the LLR plot");
    assert!(html.contains("alt=\"LLR against games played: A&lt;script&gt; vs B "), "its numbers");
    assert!(!d.join("report.html.tmp").exists());
}

#[test]
fn no_summary_yet_is_live_and_garbage_files_say_na() {
    let t = folder("live");
    let d = t.path();
    std::fs::write(d.join("run.json"), run_json(false).to_string()).unwrap();
    std::fs::write(d.join("games.jsonl"), games(1)).unwrap();
    let files = input::read(d);
    assert!(matches!(input::liveness(&files), Liveness::Running(_)));
    let html = render(&files, &input::liveness(&files));
    assert!(html.contains("<meta http-equiv=\"refresh\" content=\"10\">"));
    assert!(html.contains("Elo estimate against games played"));

    std::fs::write(d.join("summary.json"), "{ broken").unwrap();
    std::fs::write(d.join("run.json"), "[]").unwrap();
    std::fs::write(d.join("games.pgn"), "garbage [Event \"x\"]").unwrap();
    let html = std::fs::read_to_string(write_report(d).expect("page")).unwrap();
    assert!(html.contains("summary.json: not valid JSON"), "{html}");
}

#[test]
fn a_killed_run_without_summary_does_not_reload() {
    let t = folder("killed");
    let d = t.path();
    std::fs::write(d.join("run.json"), run_json(false).to_string()).unwrap();
    std::fs::write(d.join("run.lock"), "1").unwrap();
    let files = input::read(d);
    assert!(matches!(input::liveness(&files), Liveness::Ended(_)));
    // A runner holding the lock: live until its summary.json is the newest file.
    let lock = std::fs::File::open(d.join("run.lock")).unwrap();
    lock.lock().unwrap();
    assert!(matches!(input::liveness(&files), Liveness::Running(_)));
    std::fs::write(d.join("summary.json"), r#"{"stopped_by":"sprt"}"#).unwrap();
    let files = input::read(d);
    assert_eq!(input::liveness(&files), Liveness::Ended("sprt".into()));
}

/// The figures of docs/measurements/report-page.md: size and writing time of a 1000-game
/// match page
/// (`cargo test -p runner --lib report::html::tests::thousand -- --nocapture`).
#[test]
fn thousand_games_page_size_and_time() {
    let t = folder("thousand");
    let d = t.path();
    std::fs::write(d.join("run.json"), run_json(true).to_string()).unwrap();
    let text = games(500);
    std::fs::write(d.join("games.jsonl"), &text).unwrap();
    std::fs::write(d.join("summary.json"), r#"{"stopped_by":"complete"}"#).unwrap();
    let start = Instant::now();
    let path = write_report(d).expect("page");
    let took = start.elapsed();
    let size = std::fs::metadata(&path).unwrap().len();
    let html = std::fs::read_to_string(&path).unwrap();
    assert_eq!(html.matches("<li class=\"game\"").count(), 1000);
    assert!(html.contains(" fault(s); each faulting engine lost"), "time forfeits are faults");
    println!(
        "1000 games (80 plies each, games.jsonl {} bytes): report.html {size} bytes in {took:?}",
        text.len()
    );
    assert!(size < 5_000_000, "{size} bytes");
}

#[test]
fn clock_left_replays_the_runner_clock() {
    let t = folder("clock");
    let d = t.path();
    let mut run = run_json(false);
    run["plan"]["tc"] = json!({"kind": "fischer", "moves": null, "base_ms": 1000, "inc_ms": 10});
    std::fs::write(d.join("run.json"), run.to_string()).unwrap();
    // 80 moves of 1.5 ms each, 40 per side: 1000 - 40 * 1.5 + 40 * 10 = 1340 ms left each; in
    // the time forfeit, B (White there, to move after 80 plies) flagged and ends at 0.
    let lines = record(0, 0, "1/2-1/2", "threefold") + "\n" + &record(0, 1, "0-1", "time-forfeit");
    std::fs::write(d.join("games.jsonl"), lines + "\n").unwrap();
    let left = timing::clock_left(&input::read(d));
    assert_eq!(left["A<script>"], (2, 2680.0, 1340), "{left:?}");
    assert_eq!(left["B"], (2, 1340.0, 0), "{left:?}");
    let page = std::fs::read_to_string(write_report(d).unwrap()).unwrap();
    assert!(page.contains("Clock left at the end of a game"), "{page}");
    // Under a node limit there is no clock to show.
    std::fs::write(d.join("run.json"), run_json(false).to_string()).unwrap();
    assert!(timing::clock_left(&input::read(d)).is_empty());
}

/// Every string a folder brings (engine names, commands, arguments, options, labels, illegal
/// moves, warnings, how the run stopped, sweep parameters, PGN text, table.md, file names)
/// reaches the page escaped: a planted tag never becomes markup.
#[test]
fn every_string_from_the_folder_is_escaped() {
    const TAG: &str = "\"'><x-inj>";
    let t = folder("hostile");
    let d = t.path();
    let mut run = run_json(false);
    let plan = &mut run["plan"];
    plan["engines"][0]["name"] = json!(format!("A{TAG}"));
    plan["engines"][0]["cmd"] = json!(format!("/e{TAG}"));
    plan["engines"][0]["args"] = json!([format!("--x{TAG}")]);
    plan["engines"][0]["dir"] = json!(format!("/d{TAG}"));
    plan["engines"][0]["options"] = json!([[format!("K{TAG}"), format!("V{TAG}")]]);
    plan["pairings"][0]["label"] = json!(format!("A{TAG} vs B"));
    plan["book"]["path"] = json!(format!("book{TAG}.epd"));
    std::fs::write(d.join("run.json"), run.to_string()).unwrap();
    let mut game: serde_json::Value =
        serde_json::from_str(&record(0, 0, "0-1", "illegal-move")).unwrap();
    game["label"] = json!(format!("A{TAG} vs B"));
    game["white"] = json!(format!("A{TAG}"));
    game["illegal_move"] = json!(format!("e2e5{TAG}"));
    let second = record(0, 1, "1-0", "checkmate")
        .replace("A<script>", &format!("A{TAG}").replace('"', "\\\""));
    std::fs::write(d.join("games.jsonl"), format!("{game}\n{second}\n{{{TAG}\n")).unwrap();
    std::fs::write(
        d.join("summary.json"),
        json!({"stopped_by": format!("complete{TAG}"), "warnings": [format!("w{TAG}")], "pairings": []})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        d.join("games.pgn"),
        format!("[Event \"runner{TAG}\"]\n[Pairing \"A{TAG} vs B\"]\n[Round \"1.1\"]\n\n1. e4 {{{TAG}}} 1-0\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("table.md"),
        format!("# T{TAG}\n\n| a{TAG} | b |\n| --- | --- |\n| `c{TAG}` | d{TAG} |\n\ntext{TAG}\n\n```\n{TAG}\n```\n"),
    )
    .unwrap();
    std::fs::write(d.join(format!("note{}.txt", TAG.replace('/', ""))), "x").unwrap();
    let html = std::fs::read_to_string(write_report(d).expect("page")).unwrap();
    assert!(!html.contains("<x-inj"), "{html}");
    assert!(html.contains("&lt;x-inj&gt;"), "the planted strings are shown, escaped");

    // A sweep's own file: its parameters and engines.
    std::fs::write(
        d.join("sweep.json"),
        json!({"params": [{"name": format!("t{TAG}"), "values": [format!("1{TAG}")]}],
               "fixed": [[format!("F{TAG}"), format!("v{TAG}")]], "points": [],
               "engine": {"name": format!("E{TAG}"), "cmd": format!("/e{TAG}"), "args": [], "options": []},
               "baseline": {"name": format!("B{TAG}"), "cmd": "/b", "args": [], "options": []},
               "alpha": 0.05})
        .to_string(),
    )
    .unwrap();
    let html = std::fs::read_to_string(write_report(d).expect("page")).unwrap();
    assert!(!html.contains("<x-inj"), "{html}");
}
