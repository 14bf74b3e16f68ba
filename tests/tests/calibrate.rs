//! End-to-end: `runner calibrate` and `runner searchtest` with the bundled engine.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{engine_bin, read_json as json, run_runner, runner_bin, scratch, wait_for, watchdog};

/// Five middlegame positions with different material balances (a pawn or two up or down), so
/// that shallow and deep scores spread and correlate.
const FIVE: &str = "\
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
rnbqkbnr/pppp1ppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
rnbqkbnr/pppppppp/8/8/8/8/PPP1PPPP/RNBQKBNR w KQkq - 0 1
rnbqkbnr/ppp2ppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
rnbqkbnr/pppppppp/8/8/8/8/PP2PPPP/RNBQKBNR w KQkq - 0 1
";

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Loads `params` into a fresh engine with `setoption name MPCParams` and returns the
/// `info string` lines it answered with before `readyok`.
fn engine_complaints(params: &Path) -> Vec<String> {
    let mut child = Command::new(engine_bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start engine");
    let mut stdin = child.stdin.take().expect("engine stdin");
    write!(stdin, "uci\nsetoption name MPCParams value {}\nisready\n", params.display())
        .expect("write to engine");
    stdin.flush().expect("flush");
    let mut said = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("engine stdout")).lines() {
        let line = line.expect("engine output");
        if line.trim() == "readyok" {
            break;
        }
        if line.starts_with("info string") {
            said.push(line);
        }
    }
    let _ = writeln!(stdin, "quit");
    drop(stdin);
    let _ = child.wait();
    said
}

#[test]
fn tiny_calibration_writes_params_the_engine_accepts() {
    let dir = scratch("calibrate-tiny");
    std::fs::write(dir.join("five.epd"), FIVE).unwrap();
    let out = run_runner(
        &dir,
        &[
            "calibrate",
            "--positions",
            "five.epd",
            "--pairs",
            "1:2,2:3",
            "--out",
            "cal",
            "--concurrency",
            "2",
        ],
    );
    assert!(out.status.success(), "calibrate failed: {}", String::from_utf8_lossy(&out.stderr));
    let cal = dir.join("cal");
    let params = json(&cal.join("params.json"));
    let rows = params.as_array().expect("params.json is an array");
    assert!(!rows.is_empty(), "no rows fitted: {params}");
    for row in rows {
        let obj = row.as_object().expect("row is an object");
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["a", "b", "deep", "n", "r", "shallow", "sigma", "stage"]);
        assert_eq!(row["stage"], "middlegame");
        let pair = (row["shallow"].as_u64().unwrap(), row["deep"].as_u64().unwrap());
        assert!(pair == (1, 2) || pair == (2, 3), "{row}");
        assert!((3..=5).contains(&row["n"].as_u64().unwrap()), "{row}");
        assert!(row["a"].as_f64().unwrap() > 0.5, "material-driven scores correlate: {row}");
    }
    assert_eq!(lines(&cal.join("searches.jsonl")).len(), 5);
    assert_eq!(lines(&cal.join("pairs.jsonl")).len(), 10);
    let table = std::fs::read_to_string(cal.join("table.md")).unwrap();
    assert!(table.contains("| (1,2) | middlegame |"), "{table}");
    for svg in ["scatter_1_2.svg", "scatter_2_3.svg"] {
        let text = std::fs::read_to_string(cal.join(svg)).unwrap();
        assert!(text.contains("<circle"), "{svg} has no points");
    }
    let summary = json(&cal.join("summary.json"));
    assert_eq!(
        (summary["searched"].as_u64(), summary["partial"].as_bool()),
        (Some(5), Some(false))
    );

    assert_eq!(engine_complaints(&cal.join("params.json")), Vec::<String>::new());
    // The check above can fail: a malformed file is answered with an info string.
    std::fs::write(dir.join("bad.json"), "[{\"stage\": \"opening\"}]").unwrap();
    assert_eq!(engine_complaints(&dir.join("bad.json")).len(), 1);
}

#[test]
fn searchtest_at_fixed_depth_compares_two_variants() {
    let dir = scratch("searchtest-depth");
    std::fs::write(dir.join("five.epd"), FIVE).unwrap();
    let out = run_runner(
        &dir,
        &[
            "searchtest",
            "--positions",
            "five.epd",
            "--variant",
            "base:MPC=false",
            "--variant",
            "mpc:MPC=true,t_mid=1.0",
            "--depth",
            "3",
            "--out",
            "st",
        ],
    );
    assert!(out.status.success(), "searchtest failed: {}", String::from_utf8_lossy(&out.stderr));
    let st = dir.join("st");
    let csv = lines(&st.join("table.csv"));
    assert_eq!(csv.len(), 3, "{csv:?}");
    assert!(csv[1].starts_with("base,MPC=false,5,0,3.0000,"), "{}", csv[1]);
    assert!(csv[2].starts_with("mpc,\"MPC=true,t_mid=1.0\",5,0,3.0000,"), "{}", csv[2]);
    let summary = json(&st.join("summary.json"));
    let v = summary["variants"].as_array().unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["speedup"], 1.0);
    assert_eq!(v[0]["same_move_pct"], 100.0);
    assert!(v[1]["nodes_mean"].as_f64().unwrap() > 0.0);
    assert_eq!(lines(&st.join("searches.jsonl")).len(), 10);
    let md = std::fs::read_to_string(st.join("table.md")).unwrap();
    assert!(md.contains("fixed depth 3") && md.contains("| mpc |"), "{md}");
    assert!(md.contains("## middlegame positions") && md.contains("## endgame positions"), "{md}");
    assert_eq!(summary["by_stage"]["middlegame"][0]["positions"], 5);
    assert_eq!(summary["by_stage"]["endgame"][0]["positions"], 0);
}

/// Two games for the sampler, in `dir/games.jsonl`.
fn sample_games(dir: &std::path::Path) {
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let games = format!(
        "{{\"fen\":\"{start}\",\"moves\":[\"e2e4\",\"e7e5\",\"g1f3\",\"b8c6\",\"f1b5\",\"a7a6\"]}}\n\
         {{\"fen\":\"4k3/8/8/8/8/8/4P3/R3K3 w - - 0 40\",\"moves\":[\"a1a7\",\"e8f8\",\"e1f2\",\"f8g8\"]}}\n"
    );
    std::fs::write(dir.join("games.jsonl"), games).unwrap();
}

/// `calibrate --sample-from games.jsonl --write-positions OUT --sample-count 4 --skip-plies 2`.
fn sample_to(dir: &std::path::Path, out: &str) -> std::process::Output {
    run_runner(
        dir,
        &[
            "calibrate",
            "--sample-from",
            "games.jsonl",
            "--write-positions",
            out,
            "--sample-count",
            "4",
            "--skip-plies",
            "2",
        ],
    )
}

#[test]
fn sampler_draws_positions_from_games() {
    let dir = scratch("calibrate-sample");
    sample_games(&dir);
    let out = sample_to(&dir, "set.epd");
    assert!(out.status.success(), "sampling failed: {}", String::from_utf8_lossy(&out.stderr));
    let epd: Vec<String> =
        lines(&dir.join("set.epd")).into_iter().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(epd.len(), 4, "{epd:?}");
    assert_eq!(epd.iter().filter(|l| l.contains("c0 \"endgame\"")).count(), 2, "{epd:?}");
}

/// `--write-positions` never writes through a symbolic
/// link (it used to overwrite the link's target).
#[test]
fn write_positions_refuses_a_symlink() {
    let dir = scratch("calibrate-sample-link");
    sample_games(&dir);
    let target = dir.join("precious.txt");
    std::fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.join("set.epd")).unwrap();
    let out = sample_to(&dir, "set.epd");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "wrote through a symlink: {err}");
    assert!(err.contains("set.epd: it is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = scratch("calibrate-bad");
    std::fs::write(dir.join("five.epd"), FIVE).unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["calibrate", "--positions", "five.epd", "--pairs", "3:2"], "--pairs"),
        (&["calibrate", "--positions", "missing.epd"], "not found"),
        (&["searchtest", "--positions", "five.epd", "--variant", "a", "--depth", "2"], "two"),
        (
            &["calibrate", "--positions", "five.epd", "--engine", "cmd=/nonexistent/eng"],
            "cannot start",
        ),
    ];
    for (args, needle) in cases {
        let out = run_runner(&dir, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn interrupted_calibration_keeps_a_partial_result() {
    let _watchdog =
        watchdog("interrupted_calibration_keeps_a_partial_result", Duration::from_secs(600));
    let dir = scratch("calibrate-interrupt");
    std::fs::write(dir.join("five.epd"), FIVE.repeat(4)).unwrap();
    let mut child = Command::new(runner_bin())
        .current_dir(&dir)
        .args(["calibrate", "--positions", "five.epd", "--pairs", "3:11", "--out", "cal"])
        .args(["--concurrency", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start runner");
    let searches = dir.join("cal/searches.jsonl");
    wait_for("a position in cal/searches.jsonl", Duration::from_secs(300), || {
        std::fs::read_to_string(&searches).is_ok_and(|t| t.lines().count() >= 1)
    });
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted runs exit with 130");
    let summary = json(&dir.join("cal/summary.json"));
    assert_eq!(summary["partial"], true);
    let done = lines(&searches).len();
    assert!((1..20).contains(&done), "{done} positions searched");
    assert!(dir.join("cal/params.json").exists() && dir.join("cal/table.md").exists());
}

#[test]
fn engine_faults_skip_a_position_and_the_run_goes_on() {
    let dir = scratch("calibrate-faults");
    std::fs::write(dir.join("five.epd"), FIVE).unwrap();
    // Crashes at its 3rd search, and again at the 3rd search after each restart.
    let crash = e2e::bad_spec("crashy", "crash", Some(2));
    let out = run_runner(
        &dir,
        &[
            "calibrate",
            "--engine",
            &crash,
            "--positions",
            "five.epd",
            "--pairs",
            "1:2",
            "--out",
            "cal",
            "--concurrency",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = json(&dir.join("cal/summary.json"));
    assert_eq!((summary["faults"].as_u64(), summary["searched"].as_u64()), (Some(1), Some(4)));
    let records = lines(&dir.join("cal/searches.jsonl"));
    assert_eq!(records.len(), 5);
    assert_eq!(records.iter().filter(|l| l.contains("\"fault\"")).count(), 1);

    // A hanging engine: the search times out, the engine is killed and replaced.
    let hang = e2e::bad_spec("hangs", "hang", Some(1));
    let out = run_runner(
        &dir,
        &[
            "searchtest",
            "--engine",
            &hang,
            "--positions",
            "five.epd",
            "--variant",
            "a:Hash=1",
            "--variant",
            "b:Hash=2",
            "--depth",
            "1",
            "--timeout",
            "0.5",
            "--concurrency",
            "1",
            "--out",
            "st",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = json(&dir.join("st/summary.json"));
    assert_eq!(summary["searches"], 10);
    assert!(summary["faults"].as_u64().unwrap() >= 1, "{summary}");
}
