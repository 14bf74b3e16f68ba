//! kill -9 in the middle of a run, then --resume: no finished game is lost or played twice.

use std::collections::HashSet;
use std::io::Write;
use std::time::Duration;

use e2e::{
    bad_spec, hold_after_games, match_args, read_games, run_runner, scratch, spawn_runner_env,
    wait_for_games, watchdog,
};

#[test]
fn killed_run_resumes_without_losing_or_repeating_games() {
    let _watchdog =
        watchdog("killed_run_resumes_without_losing_or_repeating_games", Duration::from_secs(600));
    let dir = scratch("resume");
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    // Each move takes ~3 ms, each game up to 40 plies; the engines stop answering once 4 games
    // are recorded, so the kill lands mid-run however slow the machine.
    let a = bad_spec("a", "slow", Some(3));
    let b = bad_spec("b", "slow", Some(3));
    let extra = ["--nodes", "1", "--games", "24", "--concurrency", "2", "--maxmoves", "20"];
    let args = match_args(&a, &b, &out_s, &[&extra[..], &["--seed", "5"]].concat());
    let mut child = spawn_runner_env(&dir, &args, &[hold_after_games(&out, 4)]);
    wait_for_games(&out, 4, Duration::from_secs(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = read_games(&out);
    assert!(before.len() >= 4 && before.len() < 24, "{} games before the kill", before.len());

    // Simulate a line cut short by the kill.
    let mut f = std::fs::OpenOptions::new().append(true).open(out.join("games.jsonl")).unwrap();
    f.write_all(b"{\"seq\":3,\"pairing\":0,\"lab").unwrap();
    drop(f);

    // A resume with a different plan is refused.
    let mut other: Vec<&str> = args.to_vec();
    let seed_at = other.iter().position(|a| *a == "5").unwrap();
    other[seed_at] = "6";
    other.push("--resume");
    let o = run_runner(&dir, &other);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("seed: stored 5, now 6"));

    let mut resumed: Vec<&str> = args.to_vec();
    resumed.push("--resume");
    let o = run_runner(&dir, &resumed);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = read_games(&out);
    assert_eq!(after.len(), 24, "every game once");
    let keys: HashSet<(u64, u64)> =
        after.iter().map(|g| (g["pair"].as_u64().unwrap(), g["game"].as_u64().unwrap())).collect();
    assert_eq!(keys.len(), 24, "no game twice");
    // Games finished before the kill are kept as they were.
    for (i, g) in before.iter().enumerate() {
        assert_eq!(&after[i], g);
    }
    // The PGN holds the same games.
    let pgn = std::fs::read_to_string(out.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 24);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["pairings"][0]["games"], 24);
    assert_eq!(summary["pairings"][0]["stats"]["pairs"], 12);
}
