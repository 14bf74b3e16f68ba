//! `--affinity` pins each concurrency slot's engines to one CPU. The engines
//! (`badengine cpus`) read their own `Cpus_allowed_list` from /proc/self/status at every `go`
//! and report it as their score, so games.jsonl shows where each move was thought.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

use e2e::{
    bad_spec, fails_before_any_game, match_args, read_games, read_json, run_games, scratch,
    spawn_runner_env, wait_exit, watchdog, write_book,
};

/// The CPUs this test process may run on (its own `Cpus_allowed_list`, e.g. `0-1`).
fn allowed() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list in /proc/self/status")
        .trim()
        .to_string();
    let mut cpus = Vec::new();
    for item in list.split(',') {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    cpus
}

/// The single CPU both engines of each game reported at every move.
fn game_cpus(games: &[serde_json::Value]) -> Vec<i64> {
    games
        .iter()
        .map(|g| {
            let cpus: BTreeSet<i64> = g["scores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["cp"].as_i64().expect("a cp score"))
                .collect();
            assert_eq!(cpus.len(), 1, "both engines of a game on one CPU: {g}");
            cpus.into_iter().next().unwrap()
        })
        .collect()
}

/// Two slots on the first two allowed CPUs: every move of every game was thought on a single
/// CPU, the same for both engines, one of the two given; both slots played (each engine's first
/// `go` waits until engines on both CPUs have started, `BADENGINE_MEET`, so neither slot can play
/// every game alone). run.json and summary.json name the CPUs.
#[test]
fn each_slot_pins_both_engines_of_its_games_to_its_cpu() {
    let _watchdog =
        watchdog("each_slot_pins_both_engines_of_its_games_to_its_cpu", Duration::from_secs(600));
    let cpus = allowed();
    assert!(cpus.len() >= 2, "this test needs 2 CPUs, the machine gives {cpus:?}");
    let dir = scratch("affinity");
    let book = write_book(&dir, 4);
    let (a, b) = (bad_spec("a", "cpus", None), bad_spec("b", "cpus", None));
    let list = format!("{},{}", cpus[0], cpus[1]);
    let extra = [
        "--nodes",
        "1",
        "--games",
        "16",
        "--book",
        &book,
        "--concurrency",
        "2",
        "--affinity",
        &list,
        "--maxmoves",
        "30",
    ];
    let out = dir.join("out");
    let meet = dir.join("meet");
    std::fs::create_dir(&meet).unwrap();
    let mut child = spawn_runner_env(
        &dir,
        &match_args(&a, &b, "out", &extra),
        &[("BADENGINE_MEET", format!("{}:2", meet.display()))],
    );
    let status = wait_exit(&mut child, "the run on two slots", Duration::from_secs(300));
    let mut err = String::new();
    let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
    assert!(status.success(), "{err}");
    let games = read_games(&out);
    assert_eq!(games.len(), 16);
    let used: BTreeSet<i64> = game_cpus(&games).into_iter().collect();
    let want: BTreeSet<i64> = [cpus[0] as i64, cpus[1] as i64].into();
    assert_eq!(used, want, "both slots' CPUs, and only those");
    assert_eq!(read_json(&out.join("run.json"))["affinity"], serde_json::json!([cpus[0], cpus[1]]));
    assert_eq!(
        read_json(&out.join("summary.json"))["affinity"],
        serde_json::json!([cpus[0], cpus[1]])
    );
    // `--affinity` alone, one slot (--concurrency 1): the first allowed CPU.
    let dir = scratch("affinity-all");
    let extra = [
        "--nodes",
        "1",
        "--games",
        "2",
        "--book",
        &book,
        "--concurrency",
        "1",
        "--affinity",
        "--maxmoves",
        "30",
    ];
    let games = run_games(&dir, &match_args(&a, &b, "out", &extra), &Path::new(&dir).join("out"));
    assert_eq!(game_cpus(&games), vec![cpus[0] as i64; 2]);
}

/// More slots than CPUs, a CPU outside the allowed set and a bad list are one-line errors
/// before any engine starts.
#[test]
fn affinity_mistakes_are_refused_before_any_game() {
    let cpus = allowed();
    let (a, b) = (bad_spec("a", "cpus", None), bad_spec("b", "cpus", None));
    let run = |name: &str, list: &str, needle: &str| {
        let extra = ["--nodes", "1", "--concurrency", "2", "--affinity", list];
        fails_before_any_game(name, &match_args(&a, &b, "out", &extra), needle);
    };
    run("aff-slots", &cpus[0].to_string(), "needs 2 CPUs, one per slot");
    let outside = (0..1024).find(|c| !cpus.contains(c)).unwrap();
    run("aff-outside", &outside.to_string(), "is not one this process may run on");
    run("aff-bad", "1-0", "bad --affinity");
}
