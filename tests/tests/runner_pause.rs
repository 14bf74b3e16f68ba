//! A runner that is itself stopped (SIGSTOP, Ctrl-Z) charges the time to the engine on move;
//! the game in flight is played again instead of being scored as a time forfeit.

use std::process::Command;
use std::time::Duration;

use e2e::{
    bad_spec, match_args, protocol_lines, read_games, read_json, scratch, spawn_runner, wait_for,
    watchdog,
};

#[test]
fn a_paused_runner_replays_the_game_in_flight() {
    let _watchdog =
        watchdog("a_paused_runner_replays_the_game_in_flight", Duration::from_secs(600));
    let dir = scratch("pause");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    // 50 ms a move for up to 60 plies: a game lasts seconds.
    let (a, b) = (bad_spec("a", "slow", Some(50)), bad_spec("b", "slow", Some(50)));
    let extra = ["--tc", "1+0.05", "--games", "4", "--maxmoves", "30", "--concurrency", "1"];
    let args = match_args(&a, &b, &out_s, &extra);
    let args = [&args[..], &["--seed", "1", "--debug-log"]].concat();
    let child = spawn_runner(&dir, &args);
    let pid = child.id().to_string();
    // Stopped while an engine of the second game thinks: the first game is recorded and the
    // protocol logs hold at least two `go` lines more than its moves.
    wait_for("the second game's second move", Duration::from_secs(300), || {
        let games = read_games(&out);
        assert!(games.len() < 2, "the second game ended before the test saw it start");
        let Some(first) = games.first() else { return false };
        let moves = first["plies"].as_u64().unwrap() - first["book_plies"].as_u64().unwrap();
        let gos = protocol_lines(&out).iter().filter(|l| l.starts_with("> go")).count() as u64;
        gos >= moves + 2
    });
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    // The engines now stay unanswered for 3 s (the length of the pause, not a wait): a 1 s
    // clock falls.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(read_games(&out).len(), 1, "the pause fell inside the second game");
    assert!(Command::new("kill").args(["-CONT", &pid]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let games = read_games(&out);
    assert_eq!(games.len(), 4, "{err}");
    for g in &games {
        assert_ne!(g["termination"], "time-forfeit", "{g}\n{err}");
    }
    assert_eq!(err.matches("the runner was paused during game").count(), 1, "{err}");
    let summary = read_json(&out.join("summary.json"));
    let warned = summary["warnings"].to_string();
    assert!(warned.contains("the runner was paused during game"), "{warned}");
}
