//! badengine answers the UCI handshake and plays a legal move in its `good` mode. Being an
//! integration test of this package, it is also what makes `cargo test --workspace` (and its
//! `--no-run`) build `target/debug/badengine`, the binary every end-to-end test starts.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn the_good_mode_answers_uci_and_plays_a_legal_move() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_badengine"))
        .arg("good")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting badengine");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(b"uci\nisready\nposition startpos moves e2e4\ngo movetime 10\n").unwrap();
    input.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    let best = loop {
        let line = lines.next().expect("badengine ended before bestmove").expect("reading");
        if let Some(rest) = line.strip_prefix("bestmove ") {
            break rest.split_whitespace().next().unwrap_or_default().to_string();
        }
        seen.push(line);
    };
    assert!(seen.iter().any(|l| l == "uciok"), "{seen:?}");
    assert!(seen.iter().any(|l| l == "readyok"), "{seen:?}");
    // Black's replies to 1. e4, in UCI notation.
    let legal = [
        "a7a6", "a7a5", "b7b6", "b7b5", "c7c6", "c7c5", "d7d6", "d7d5", "e7e6", "e7e5", "f7f6",
        "f7f5", "g7g6", "g7g5", "h7h6", "h7h5", "b8a6", "b8c6", "g8f6", "g8h6",
    ];
    assert!(legal.contains(&best.as_str()), "bestmove {best} after 1. e4");
    input.write_all(b"quit\n").unwrap();
    drop(input);
    assert!(child.wait().expect("waiting for badengine").success());
}
