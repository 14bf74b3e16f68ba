//! UCI conversations with the `engine` binary.

use std::time::Duration;

mod common;
use common::Engine;

const LONG: Duration = Duration::from_secs(60);

#[test]
fn handshake_lists_options() {
    let mut e = Engine::start();
    e.send("uci");
    let lines = e.until("uciok", LONG);
    assert!(lines.iter().any(|l| l.starts_with("id name ")));
    assert!(lines.iter().any(|l| l.starts_with("id author ")));
    for opt in [
        "Hash",
        "Threads",
        "MPC",
        "ProbCut",
        "t_mid",
        "t_end",
        "MPCParams",
        "NullMove",
        "LMR",
        "MPCDiag",
        "MPCVerifySample",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("option name {opt} type"))),
            "missing option {opt}"
        );
    }
    assert_eq!(e.sync(), vec!["readyok"]);
    e.quit();
}

#[test]
fn setoption_good_and_bad_values() {
    let mut e = Engine::start();
    for good in [
        "setoption name Hash value 8",
        "setoption name MPC value false",
        "setoption name t_mid value 1.5",
        "setoption name ProbCut value single",
        "setoption name Clear Hash",
    ] {
        e.send(good);
        assert_eq!(e.sync(), vec!["readyok"], "{good}");
    }
    for bad in [
        "setoption name Hash value lots",
        "setoption name t_end value fast",
        "setoption name MPC value maybe",
        "setoption name MPCParams value /no/such/file.json",
        "setoption name NoSuchThing value 3",
    ] {
        e.send(bad);
        let lines = e.sync();
        assert!(lines[0].starts_with("info string"), "{bad}: {lines:?}");
    }
    e.send("position startpos");
    e.send("go depth 3");
    let lines = e.until("bestmove", LONG);
    assert!(lines.iter().any(|l| l.starts_with("info string mpc tries 0 cuts 0")));
    e.quit();
}

#[test]
fn go_depth_reports_info_and_mpc_before_bestmove() {
    let mut e = Engine::start();
    e.send("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1");
    e.send("go depth 6");
    let lines = e.until("bestmove", LONG);
    let info6 = lines.iter().find(|l| l.starts_with("info depth 6 ")).expect("depth 6 info");
    for field in [" seldepth ", " score cp ", " nodes ", " nps ", " time ", " hashfull ", " pv "] {
        assert!(info6.contains(field), "{info6} lacks {field}");
    }
    let n = lines.len();
    assert!(lines[n - 2].starts_with("info string mpc tries "), "{lines:?}");
    assert!(lines[n - 1].split_whitespace().nth(1).is_some_and(|m| m.len() >= 4));
    e.quit();
}

#[test]
fn stop_ends_go_infinite() {
    let mut e = Engine::start();
    e.send("position startpos");
    e.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    // Still searching: isready is answered at once, no bestmove yet.
    let lines = e.sync();
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    // `until` fails if no bestmove comes: an ignored stop never answers. No wall-clock bound
    // beyond that (a loaded machine may take a while to schedule the engine).
    e.send("stop");
    let lines = e.until("bestmove", Duration::from_secs(60));
    assert!(!lines.last().unwrap().contains("0000"));
    e.quit();
}

#[test]
fn bad_input_is_ignored() {
    let mut e = Engine::start();
    for junk in [
        "hello there",
        "position fen not a fen at all",
        "position startpos moves e2e5",
        "go depth banana",
        "setoption",
        "\u{1F600}",
    ] {
        e.send(junk);
        // A malformed go is still answered: a depth-1 search on what parsed.
        let lines = if junk.starts_with("go") { e.until("bestmove", LONG) } else { e.sync() };
        assert!(lines.len() >= 2 && lines[0].starts_with("info string"), "{junk}: {lines:?}");
    }
    e.send("position startpos moves e2e4 e7e5");
    e.send("go depth 2");
    let lines = e.until("bestmove", LONG);
    assert!(lines.last().unwrap().starts_with("bestmove "));
    e.quit();
}

fn nodes_run(e: &mut Engine) -> (String, String) {
    e.send("ucinewgame");
    e.send("position startpos moves d2d4 g8f6 c2c4");
    e.send("go nodes 30000");
    let lines = e.until("bestmove", LONG);
    let nodes = lines
        .iter()
        .find(|l| l.starts_with("info nodes "))
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string();
    (lines.last().unwrap().clone(), nodes)
}

#[test]
fn go_nodes_is_deterministic() {
    let mut e = Engine::start();
    let a = nodes_run(&mut e);
    let b = nodes_run(&mut e);
    assert_eq!(a, b);
    assert_eq!(a.1, "30000");
    let mut other = Engine::start();
    assert_eq!(nodes_run(&mut other), a);
    e.quit();
    other.quit();
}

/// The last `info string mpc` counter named `name` in `lines`.
fn counter(lines: &[String], name: &str) -> u64 {
    let l = lines.iter().rev().find(|l| l.starts_with("info string mpc ")).expect("mpc line");
    let t: Vec<&str> = l.split_whitespace().collect();
    let i = t.iter().position(|&w| w == name).unwrap_or_else(|| panic!("{name} not in {l}"));
    t[i + 1].parse().unwrap()
}

#[test]
fn mpc_diagnostics_count_without_changing_the_move() {
    let mut e = Engine::start();
    let run = |e: &mut Engine| {
        e.send("ucinewgame");
        e.send("position startpos moves d2d4 g8f6 c2c4");
        e.send("go depth 9");
        e.until("bestmove", LONG)
    };
    let off = run(&mut e);
    e.send("setoption name MPCDiag value true");
    e.send("setoption name MPCVerifySample value 100");
    let lines = run(&mut e);
    let n = lines.len();
    // The counters stay one `info string` line, the last before bestmove; the search's own
    // node count and move are those of the search without diagnostics.
    assert!(lines[n - 2].starts_with("info string mpc tries "), "{lines:?}");
    let nodes = |l: &[String]| l.iter().find(|l| l.starts_with("info nodes ")).cloned().unwrap();
    let word = |l: String| l.split_whitespace().nth(2).unwrap().to_string();
    assert_eq!(word(nodes(&lines)), word(nodes(&off)));
    assert_eq!(lines[n - 1], off[off.len() - 1], "the diagnostics changed the move");
    assert_eq!(counter(&lines, "cuts"), counter(&off, "cuts"));
    assert_eq!(counter(&off, "verified_beta") + counter(&off, "null_checks"), 0);
    let cuts = counter(&lines, "cuts");
    assert!(cuts > 0, "{lines:?}");
    assert_eq!(counter(&lines, "verified_beta") + counter(&lines, "verified_alpha"), cuts);
    assert_eq!(counter(&lines, "null_checks"), counter(&lines, "null_cond"));
    e.quit();
}

#[test]
fn positions_vampirc_rejects_are_read_by_hand() {
    let mut e = Engine::start();
    // Shredder-FEN castling with a Chess960 castling move (king takes rook).
    e.send("setoption name UCI_Chess960 value true");
    e.send("position fen r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1 moves e1h1");
    e.send("d");
    let lines = e.sync();
    assert_eq!(lines[0], "info string fen r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1", "{lines:?}");
    e.send("setoption name UCI_Chess960 value false");
    // A FEN without move counters.
    e.send("position fen 8/8/8/8/8/8/1K6/7k w - - moves b2c3");
    e.send("d");
    let lines = e.sync();
    assert_eq!(lines[0], "info string fen 8/8/8/8/8/2K5/8/7k b - - 1 1", "{lines:?}");
    // A negative clock (some GUIs send it when flagging) still gives a move.
    e.send("position startpos");
    e.send("go wtime -20 btime 1000 winc 10 binc 10");
    let lines = e.until("bestmove", LONG);
    assert!(!lines.last().unwrap().contains("0000"));
    e.quit();
}
