//! The engine survives any input line, each reproduction of a crash kept
//! as a regression test against the binary, and a Chess960 conversation.

use std::time::Duration;

mod common;
use common::{Engine, run_batch};

const LONG: Duration = Duration::from_secs(60);

/// vampirc-uci kept depth in a u8, and `go depth 256` made the engine exit with
/// status 101.
#[test]
fn go_depth_256_does_not_crash() {
    let (ok, lines) = run_batch(b"uci\nposition startpos\ngo depth 256\n");
    assert!(ok, "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("info string go depth 256: out of range")));
    assert!(lines.last().unwrap().starts_with("bestmove "), "{lines:?}");
}

/// Each bad line is answered by an `info string` before the next `readyok`,
/// and the engine goes on.
#[test]
fn every_bad_line_gets_an_info_string() {
    let long_moves: String = " g1f3 g8f6 f3g1 f6g8".repeat(3000);
    let mut too_long = b"position startpos moves".to_vec();
    too_long.resize(2 << 20, b' ');
    let bad: Vec<Vec<u8>> = vec![
        b"go movestogo 256 wtime 100 btime 100 depth 300".to_vec(),
        b"go mate 256".to_vec(),
        b"go depth 18446744073709551616".to_vec(),
        b"go depth -5 nodes -1".to_vec(),
        b"go wtime 99999999999999999999999 btime -99999999999999999999 depth 1 fly".to_vec(),
        b"go depth".to_vec(),
        b"go depth 1.5".to_vec(),
        b"go \xff\xfe depth 1".to_vec(),
        b"position fen \xc3\x28 w - - 0 1".to_vec(),
        b"position startpos moves e2e4 \xff".to_vec(),
        b"position".to_vec(),
        b"setoption name Hash value 99999999999999999999".to_vec(),
        b"setoption name".to_vec(),
        b"setoption value 3".to_vec(),
        b"\xff\xfe\xfd".to_vec(),
        b"\x00\x01\x1b[2J".to_vec(),
        too_long,
        format!("position startpos moves{long_moves} e2e5").into_bytes(),
    ];
    let mut e = Engine::start();
    for line in &bad {
        e.send_bytes(line);
        let lines = e.sync();
        assert!(
            lines.iter().any(|l| l.starts_with("info string ")),
            "{:?}: {lines:?}",
            String::from_utf8_lossy(&line[..line.len().min(60)])
        );
    }
    e.send("stop");
    e.send("position startpos moves e2e4");
    e.send("go depth 3");
    let lines = e.until("bestmove", LONG);
    assert!(!lines.last().unwrap().contains("0000"), "{lines:?}");
    e.quit();
}

/// Invalid UTF-8 used to end the input loop (the engine quit).
#[test]
fn invalid_utf8_does_not_end_the_session() {
    let (ok, lines) = run_batch(b"isready\n\xff\xfe\nisready\n");
    assert!(ok);
    assert_eq!(lines.iter().filter(|l| *l == "readyok").count(), 2, "{lines:?}");
}

/// Chess960: castling read and written as king takes rook, both sides.
#[test]
fn chess960_conversation_castles_both_ways() {
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.until("uciok", LONG);
    assert!(lines.iter().any(|l| l == "option name UCI_Chess960 type check default false"));
    e.send("setoption name UCI_Chess960 value true");
    // Input: White castles long (e1a1), Black short (e8g8), X-FEN castling field.
    e.send("position fen 1r2k1r1/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1a1 e8g8");
    e.send("d");
    let lines = e.sync();
    assert_eq!(lines[0], "info string fen 1r3rk1/8/8/8/8/8/8/2KR3R w - - 2 2", "{lines:?}");
    // Output: the only mate is short castling f1h1 (Shredder-FEN field).
    e.send("position fen 4rkr1/4p1p1/8/8/8/8/8/5K1R w H - 0 1");
    e.send("go depth 3");
    let lines = e.until("bestmove", LONG);
    assert_eq!(lines.last().unwrap(), "bestmove f1h1", "{lines:?}");
    // ... and long castling b1a1 (X-FEN field).
    e.send("position fen 2rkr3/2p1p3/8/8/8/8/8/RK6 w Q - 0 1");
    e.send("go depth 3");
    let lines = e.until("bestmove", LONG);
    assert_eq!(lines.last().unwrap(), "bestmove b1a1", "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" score mate 1 ") && l.contains(" pv b1a1")));
    // Off again: standard notation.
    e.send("setoption name UCI_Chess960 value false");
    e.send("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6");
    e.send("go depth 1");
    e.send("position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1g1 e8c8");
    e.send("d");
    let lines = e.sync();
    let fen = lines.iter().find(|l| l.starts_with("info string fen")).unwrap();
    assert_eq!(fen, "info string fen 2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2", "{lines:?}");
    e.quit();
}
