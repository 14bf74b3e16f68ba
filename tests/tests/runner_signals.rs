//! SIGTERM stops a run cleanly: exit code 130, engine processes gone, files consistent, and the
//! run can be resumed.

use std::process::Command;
use std::time::Duration;

use e2e::{
    badengine_bin, hold_after_games, match_args, processes_with, read_games, run_runner, scratch,
    spawn_runner_env, wait_for, wait_for_games, watchdog,
};

#[test]
fn sigterm_kills_engines_and_keeps_files_consistent() {
    let _watchdog =
        watchdog("sigterm_kills_engines_and_keeps_files_consistent", Duration::from_secs(600));
    let dir = scratch("sigterm");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let token = format!("sigterm-token-{}", std::process::id());
    let spec = |name: &str| {
        format!("name={name},cmd={},arg=slow,arg=5,arg={token}", badengine_bin().display())
    };
    let (a, b) = (spec("a"), spec("b"));
    let extra = ["--nodes", "1", "--games", "40", "--maxmoves", "20", "--concurrency", "2"];
    let args = match_args(&a, &b, &out_s, &extra);
    // The engines stop answering once 2 games are recorded: the run is still going at the
    // SIGTERM, however slow the machine.
    let child = spawn_runner_env(&dir, &args, &[hold_after_games(&out, 2)]);
    wait_for_games(&out, 2, Duration::from_secs(300));
    assert!(!processes_with(&token).is_empty(), "engines are running");
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    // Engines are killed with their process groups.
    wait_for("the engine processes to end", Duration::from_secs(60), || {
        processes_with(&token).is_empty()
    });
    let played = read_games(&out);
    assert!(played.len() < 40);
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), played.len(), "PGN matches games.jsonl");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["stopped_by"], "interrupted");

    let mut resumed = args.to_vec();
    resumed.push("--resume");
    let o = run_runner(&dir, &resumed);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_games(&out).len(), 40);
}
