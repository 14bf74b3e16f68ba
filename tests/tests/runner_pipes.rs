//! A closed stdout or stderr (`runner ... | head -1`) never panics the runner
//! (exit 101): a run ends as on SIGTERM, with its games and final files consistent, and a
//! command that only prints drops its text.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};

use e2e::{bad_spec, match_args, read_games, run_runner, runner_bin, scratch};

fn pgn_games(out: &Path) -> usize {
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap_or_default();
    pgn.lines().filter(|l| l.starts_with("[Event ")).count()
}

/// `runner match ... 2>&1 | head -1`: stdout closed from the start, stderr closed after the first
/// progress line, while games are being played (the next progress line follows in 5 s).
#[test]
fn a_match_whose_output_is_closed_ends_cleanly() {
    let dir = scratch("closedpipes");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    // 5 ms a move: 400 games take far longer than the 10 s to the second progress line.
    let (a, b) = (bad_spec("a", "slow", Some(5)), bad_spec("b", "slow", Some(5)));
    let args = [
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--nodes",
        "100",
        "--maxmoves",
        "20",
        "--games",
        "400",
        "--concurrency",
        "2",
        "--seed",
        "1",
        "--progress",
        "plain",
        "--out",
        &out_s,
    ];
    let mut child = Command::new(runner_bin())
        .current_dir(&dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting runner");
    drop(child.stdout.take());
    // Read up to the first progress line (games are being played), then close the pipe.
    let mut first = String::new();
    if let Some(err) = child.stderr.take() {
        let mut err = std::io::BufReader::new(err);
        while !first.starts_with("games ") {
            first.clear();
            if err.read_line(&mut first).unwrap_or(0) == 0 {
                break;
            }
        }
    }
    let status = child.wait().expect("waiting for runner");
    assert!(status.code().is_some(), "runner killed by a signal: {status:?} (first line: {first})");
    assert_ne!(status.code(), Some(101), "runner panicked (first line: {first})");
    assert!(out.join("summary.json").is_file(), "no summary.json (first line: {first})");
    let games = read_games(&out);
    assert!(!games.is_empty(), "no game played");
    assert_eq!(games.len(), pgn_games(&out), "games.jsonl and games.pgn disagree");
}

/// `runner report DIR | head -1` with the reader gone before the first line.
#[test]
fn a_report_into_a_closed_pipe_does_not_panic() {
    let dir = scratch("closedreport");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let extra = ["--nodes", "100", "--maxmoves", "20", "--games", "2", "--seed", "1"];
    let o = run_runner(&dir, &match_args(&a, &b, &out_s, &extra));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut child = Command::new(runner_bin())
        .current_dir(&dir)
        .args(["report", &out_s])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting runner report");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("runner report");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert!(o.status.code().is_some(), "{:?}", o.status);
}
