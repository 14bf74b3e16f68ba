//! Engine faults: each misbehaviour of badengine ends the game with its own termination, the
//! faulting engine loses, is restarted, and the run completes.

use e2e::{bad_spec, run_games, scratch};

/// Plays `games` games of `bad` (mode, n) against a well-behaved badengine.
fn play(
    name: &str,
    mode: &str,
    n: Option<u64>,
    limit: &[&str],
    games: &str,
) -> Vec<serde_json::Value> {
    let dir = scratch(name);
    let out = dir.join("run");
    let bad = bad_spec("bad", mode, n);
    let good = bad_spec("good", "good", None);
    let mut args = vec![
        "match",
        "--engine",
        &bad,
        "--engine",
        &good,
        "--games",
        games,
        "--concurrency",
        "2",
        "--maxmoves",
        "20",
        "--stall-timeout",
        "1.5",
        "--progress",
        "quiet",
        // From the start position, so White moves first and a game's ply count says who moved.
        "--book",
        "startpos",
    ];
    args.extend_from_slice(limit);
    let out_s = out.to_string_lossy().into_owned();
    args.extend_from_slice(&["--out", &out_s]);
    let games = run_games(&dir, &args, &out);
    assert!(out.join("summary.json").is_file());
    assert!(out.join("games.pgn").is_file());
    games
}

fn assert_all_lost_by(games: &[serde_json::Value], termination: &str) {
    assert!(!games.is_empty());
    for g in games {
        assert_eq!(g["termination"], termination, "{g}");
        let bad_white = g["white"] == "bad";
        assert_eq!(g["result"], if bad_white { "0-1" } else { "1-0" }, "{g}");
    }
}

#[test]
fn crash_is_a_loss_and_the_engine_restarts() {
    // Crashes at its 3rd move of every process life: every game it plays is lost by crash, so
    // each game needed a fresh process.
    let games = play("crash", "crash", Some(2), &["--nodes", "100"], "4");
    assert_eq!(games.len(), 4);
    assert_all_lost_by(&games, "crash");
    // Two moves were played before the crash whenever the bad engine had the first move.
    assert!(games.iter().any(|g| g["plies"].as_u64().unwrap() >= 4), "{games:?}");
}

#[test]
fn silent_exit_is_a_disconnect() {
    let games = play("exit", "exit", Some(1), &["--nodes", "100"], "2");
    assert_all_lost_by(&games, "disconnect");
}

#[test]
fn hang_under_node_limit_is_a_stall() {
    let games = play("hang", "hang", Some(1), &["--nodes", "100"], "2");
    assert_all_lost_by(&games, "stall");
}

#[test]
fn hang_under_a_clock_is_a_time_forfeit() {
    // 2 s on the clock: the good side would need a 2 s stall on one instant move to flag first
    // (load can only make the hung side's forfeit later, never avoid it).
    let games = play("hangtc", "hang", Some(1), &["--tc", "2+0.01"], "2");
    assert_all_lost_by(&games, "time-forfeit");
}

#[test]
fn slow_answers_lose_on_time_even_when_they_arrive() {
    // 3 s per move against 1 s + the margin: the first move of the slow engine is late. The
    // good side answers at once; only a 1 s stall of one of its moves could make it flag first.
    let games = play("slow", "slow", Some(3000), &["--tc", "1+0.01"], "2");
    assert_all_lost_by(&games, "time-forfeit");
    for g in &games {
        // The late move is not part of the game.
        let bad_white = g["white"] == "bad";
        assert_eq!(g["plies"].as_u64().unwrap(), if bad_white { 0 } else { 1 }, "{g}");
    }
}

#[test]
fn illegal_move_is_recorded_and_never_reaches_the_pgn() {
    let games = play("illegal", "illegal", Some(2), &["--nodes", "100"], "2");
    assert_all_lost_by(&games, "illegal-move");
    for g in &games {
        assert_eq!(g["illegal_move"], "a1a1", "{g}");
        assert!(!g["moves"].as_array().unwrap().iter().any(|m| m == "a1a1"));
    }
}

#[test]
fn garbage_output_is_tolerated() {
    let games = play("garbage", "garbage", None, &["--nodes", "100"], "4");
    assert_eq!(games.len(), 4);
    for g in &games {
        let t = g["termination"].as_str().unwrap();
        assert!(
            !["crash", "stall", "disconnect", "illegal-move", "time-forfeit"].contains(&t),
            "{g}"
        );
    }
}

#[test]
fn fast_engines_do_not_lose_on_time_at_a_fast_control() {
    // Instant movers at 5+0.05 (25 moves each, so 250 ms per move): any time loss here would be
    // the runner's own latency. At 1+0.01 a loaded CI box could stall that long (a 156 ms
    // maximum was seen on a busy 2-core machine), so the control leaves a wide margin; the
    // runner's real turnaround is measured in summary.json, not asserted here.
    let dir = scratch("fasttc");
    let out = dir.join("run");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let out_s = out.to_string_lossy().into_owned();
    let games = run_games(
        &dir,
        &[
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--tc",
            "5+0.05",
            "--games",
            "4",
            "--concurrency",
            "2",
            "--maxmoves",
            "25",
            "--progress",
            "quiet",
            "--out",
            &out_s,
        ],
        &out,
    );
    assert_eq!(games.len(), 4);
    for g in &games {
        assert_ne!(g["termination"], "time-forfeit", "{g}");
        assert_eq!(
            g["times_ms"].as_array().unwrap().len() + g["book_plies"].as_u64().unwrap() as usize,
            g["plies"].as_u64().unwrap() as usize
        );
    }
}
