//! `runner tune` end to end with `badengine tunable` (option X, strongest at 37; deterministic
//! given the position and X, answering at once): SPSA from X = 80 ends near 37; a run killed
//! midway resumes to exactly the games and values of an uninterrupted run; bad `--param` values
//! are one-line errors before any game. Concurrency 1 everywhere, so the order of updates, and
//! with it every result, is fixed by the seed.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use e2e::{
    bad_spec, fails_before_any_game, hold_after_games, ok_stdout, read_games, read_json,
    run_runner, scratch, spawn_runner_env, stderr, wait_for_games, watchdog,
};

/// The tuned parameter: c_end 10, r_end 0.1 (an r_end of 0.002 moves X by about 0.02 per game
/// point at the end: see runner/README.md).
const PARAM: &str = "X,80,0,100,10,0.1";
const GAMES: &str = "100";

fn tune_args<'a>(engine: &'a str, seed: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "tune",
        "--engine",
        engine,
        "--param",
        PARAM,
        "--games",
        GAMES,
        "--tc",
        "10+0.1",
        "--seed",
        seed,
        "--concurrency",
        "1",
        "--book",
        "startpos",
        "--progress",
        "quiet",
        "--out",
        out,
    ]
}

fn final_x(out: &Path) -> f64 {
    read_json(&out.join("tune.json"))["values"]["X"].as_f64().expect("values.X")
}

#[test]
fn spsa_finds_the_optimum_of_the_tunable_engine() {
    let _watchdog =
        watchdog("spsa_finds_the_optimum_of_the_tunable_engine", Duration::from_secs(600));
    let dir = scratch("tune-optimum");
    let engine = bad_spec("t", "tunable", None);
    let out = dir.join("run");
    let o = run_runner(&dir, &tune_args(&engine, "1", &out.to_string_lossy()));
    let table = ok_stdout(&o);
    let x = final_x(&out);
    assert!((x - 37.0).abs() <= 10.0, "X ended at {x}, not within 10 of 37:\n{table}");
    assert!(table.contains("| X | int | 80 | "), "{table}");
    assert_eq!(read_games(&out).len(), 100);
    let j = read_json(&out.join("tune.json"));
    assert_eq!(j["iterations"], 50);
    assert_eq!(j["history"].as_array().unwrap().len(), 50);
    let csv = std::fs::read_to_string(out.join("tune.csv")).unwrap();
    assert_eq!(csv.lines().count(), 51);
    assert!(std::fs::read_to_string(out.join("tune.svg")).unwrap().starts_with("<svg"));
    assert_eq!(
        std::fs::read_to_string(out.join("tune.md")).unwrap(),
        table.lines().take(5).map(|l| format!("{l}\n")).collect::<String>()
    );
}

#[test]
fn killed_tune_resumes_to_the_same_values() {
    let _watchdog = watchdog("killed_tune_resumes_to_the_same_values", Duration::from_secs(900));
    let dir = scratch("tune-resume");
    let engine = bad_spec("t", "tunable", None);
    let whole = dir.join("whole");
    ok_stdout(&run_runner(&dir, &tune_args(&engine, "3", &whole.to_string_lossy())));

    let out = dir.join("killed");
    let out_s = out.to_string_lossy().into_owned();
    // The engines stop answering once 7 games are recorded: the run is still going when the
    // test kills it, however slow the machine (within the 10 s clock of the held move).
    let mut child =
        spawn_runner_env(&dir, &tune_args(&engine, "3", &out_s), &[hold_after_games(&out, 7)]);
    wait_for_games(&out, 7, Duration::from_secs(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let games = read_games(&out);
    assert!(games.len() >= 7 && games.len() < 100, "{} games before the kill", games.len());
    assert!(
        games.iter().all(|g| g["termination"] != "time-forfeit"),
        "a held engine lost on time before the kill"
    );
    // Leave a pair half played (its second game dropped) and both files with a line cut short
    // by the kill.
    let jsonl = out.join("games.jsonl");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len().is_multiple_of(2) {
        lines.pop();
    }
    std::fs::write(&jsonl, lines.join("\n") + "\n{\"seq\":9,\"pair").unwrap();
    let mut log = std::fs::OpenOptions::new().append(true).open(out.join("tune.jsonl")).unwrap();
    log.write_all(b"{\"start\":{\"k\":").unwrap();
    drop(log);

    let mut resume = tune_args(&engine, "3", &out_s);
    resume.push("--resume");
    let o = run_runner(&dir, &resume);
    ok_stdout(&o);
    assert!(stderr(&o).contains("resuming:"), "{}", stderr(&o));
    let games = read_games(&out);
    assert_eq!(games.len(), 100, "exactly the planned games");
    let mut keys: Vec<(u64, u64)> =
        games.iter().map(|g| (g["pair"].as_u64().unwrap(), g["game"].as_u64().unwrap())).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 100, "no game played twice");
    let (a, b) = (read_json(&whole.join("tune.json")), read_json(&out.join("tune.json")));
    assert_eq!(a["values"], b["values"], "the same final values as the uninterrupted run");
    assert_eq!(a["history"], b["history"]);
    // The games themselves are the same games.
    let moves = |d: &Path| -> Vec<String> {
        let mut v: Vec<(u64, u64, String)> = read_games(d)
            .iter()
            .map(|g| {
                (g["pair"].as_u64().unwrap(), g["game"].as_u64().unwrap(), g["moves"].to_string())
            })
            .collect();
        v.sort();
        v.into_iter().map(|x| x.2).collect()
    };
    assert_eq!(moves(&whole), moves(&out));
}

#[test]
fn bad_params_are_one_line_errors() {
    let engine = bad_spec("t", "tunable", None);
    for (param, needle) in [
        ("X,80,0,100,10", "expected name,start,min,max,c_end,r_end (6 fields), got 5"),
        ("X,80,100,0,10,0.002", "min 100 must be below max 0"),
        ("X,120,0,100,10,0.002", "start 120 is outside [0, 100]"),
        ("X,80,0,100,0,0.002", "c_end must be > 0"),
        ("X,80,0,100,10,0", "r_end must be > 0"),
        ("Y,80,0,100,10,0.002", "does not declare the option Y"),
    ] {
        let args = [
            "tune",
            "--engine",
            &engine,
            "--param",
            param,
            "--games",
            "4",
            "--out",
            "out",
            "--progress",
            "quiet",
        ];
        let err = fails_before_any_game("tune-bad-param", &args, needle);
        let errors = err.lines().filter(|l| l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{param}: expected one error line, got:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
