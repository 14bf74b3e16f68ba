//! End-to-end tests of `runner sweep` and `runner report`: real engine processes, small depth or
//! node limits and few games, so the whole file runs in seconds.

use std::fs;
use std::path::Path;

use e2e::{read_games, read_json as json, run_runner, scratch, stderr, stdout};

/// A small EPD book with three different openings.
fn book(dir: &Path) -> String {
    e2e::write_book(dir, 3)
}

fn text(o: &std::process::Output) -> (String, String) {
    (stdout(o), stderr(o))
}

const OUTPUTS: [&str; 4] = ["table.md", "table.csv", "summary.json", "plot.svg"];

#[test]
fn two_point_sweep_writes_every_output_and_report_reproduces_them() {
    let dir = scratch("sweep-two");
    let book = book(&dir);
    let out = dir.join("run");
    let o = run_runner(
        &dir,
        &[
            "sweep",
            "--param",
            "t_mid",
            "--values",
            "0.8,1.2",
            "--depth",
            "3",
            "--games",
            "4",
            "--book",
            &book,
            "--book-order",
            "sequential",
            "--concurrency",
            "2",
            "--seed",
            "7",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "sweep failed: {stderr}");
    for f in OUTPUTS.iter().chain(&["run.json", "sweep.json", "games.jsonl", "games.pgn"]) {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    for p in ["t_mid=0.8", "t_mid=1.2"] {
        let s = json(&out.join("points").join(p).join("summary.json"));
        assert_eq!(s["summary"]["games"], 4, "{p}: {s}");
    }

    assert_pairs_share_openings_and_points_interleave(&out);

    // The swept engine got the value, the baseline MPC off.
    let run = json(&out.join("run.json"));
    let engines = run["plan"]["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 3);
    assert_eq!(engines[0]["name"], "engine[t_mid=0.8]");
    assert!(
        engines[0]["options"].as_array().unwrap().contains(&serde_json::json!(["t_mid", "0.8"]))
    );
    assert_eq!(engines[2]["name"], "engine[MPC=false]");

    // The table: a row per point, the swept value first.
    let md = fs::read_to_string(out.join("table.md")).unwrap();
    let rows: Vec<&str> =
        md.lines().filter(|l| l.starts_with("| 0.8 ") || l.starts_with("| 1.2 ")).collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(rows.iter().all(|r| r.split(" | ").nth(1) == Some("4")), "{md}");
    assert!(md.contains("significant (Holm)") && md.contains("Leader so far:"), "{md}");
    let csv = fs::read_to_string(out.join("table.csv")).unwrap();
    assert!(csv.starts_with("t_mid,games,wins,draws,losses,"), "{csv}");
    assert_eq!(csv.lines().count(), 3);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["kind"], "sweep");
    assert_eq!(summary["points"].as_array().unwrap().len(), 2);
    assert_eq!(summary["stopped_by"], "complete");
    let svg = fs::read_to_string(out.join("plot.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("t_mid") && svg.contains("baseline 50%"));
    assert!(stdout.contains("Leader so far:") && stdout.contains("t_mid"), "{stdout}");
    assert!(!stdout.to_lowercase().contains("nan"), "{stdout}");

    assert_report_reproduces_the_outputs(&dir, &out, &stdout);

    // A resume with different values is refused; with the same command it has nothing to add.
    let resume = |values: &str| resume_two_point_sweep(&dir, &book, &out, values);
    let o = resume("0.8,1.3");
    assert!(!o.status.success());
    assert!(text(&o).1.contains("differs from the stored one"), "{}", text(&o).1);
    let o = resume("0.8,1.2");
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(read_games(&out).len(), 8, "no game played twice");
}

/// Pair i has the same openings at every point, and the points are interleaved.
fn assert_pairs_share_openings_and_points_interleave(out: &Path) {
    let games = read_games(out);
    assert_eq!(games.len(), 8);
    for pair in 0..2 {
        let openings: Vec<_> = games
            .iter()
            .filter(|g| g["pair"] == pair)
            .map(|g| g["opening"].as_u64().unwrap())
            .collect();
        assert_eq!(openings.len(), 4);
        assert!(openings.iter().all(|&x| x == openings[0]), "pair {pair}: {openings:?}");
    }
    let labels: Vec<&str> = games.iter().map(|g| g["label"].as_str().unwrap()).collect();
    assert_eq!(labels.iter().filter(|l| **l == "t_mid=0.8").count(), 4);
}

/// `runner report` rebuilds the same files from the store. summary.json stays: it keeps what
/// only the live run measured (stopped_by, the runner's overhead), which a report carries over.
/// `stdout` is the sweep's.
fn assert_report_reproduces_the_outputs(dir: &Path, out: &Path, stdout: &str) {
    let before: Vec<String> =
        OUTPUTS.iter().map(|f| fs::read_to_string(out.join(f)).unwrap()).collect();
    for f in ["table.md", "table.csv", "plot.svg"] {
        fs::remove_file(out.join(f)).unwrap();
    }
    fs::remove_dir_all(out.join("points")).unwrap();
    let o = run_runner(dir, &["report", out.to_str().unwrap()]);
    let (rstdout, rstderr) = text(&o);
    assert!(o.status.success(), "report failed: {rstderr}");
    let after: Vec<String> =
        OUTPUTS.iter().map(|f| fs::read_to_string(out.join(f)).unwrap_or_default()).collect();
    for (i, f) in OUTPUTS.iter().enumerate() {
        assert_eq!(before[i], after[i], "{f} differs after runner report");
    }
    assert!(out.join("points/t_mid=1.2/summary.json").is_file());
    let table_line = stdout.lines().find(|l| l.starts_with("0.8 ")).unwrap();
    assert!(rstdout.lines().any(|l| l == table_line), "{rstdout}");
}

/// The two-point sweep of `book` into `out` again with `values`, `--resume`d.
fn resume_two_point_sweep(
    dir: &Path,
    book: &str,
    out: &Path,
    values: &str,
) -> std::process::Output {
    run_runner(
        dir,
        &[
            "sweep",
            "--param",
            "t_mid",
            "--values",
            values,
            "--depth",
            "3",
            "--games",
            "4",
            "--book",
            book,
            "--book-order",
            "sequential",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
            "--resume",
        ],
    )
}

#[test]
fn grid_sweep_has_a_row_per_combination_and_a_heatmap() {
    let dir = scratch("sweep-grid");
    let out = dir.join("grid");
    // --range belongs to the --param before it, wherever the flags are.
    let o = run_runner(
        &dir,
        &[
            "sweep",
            "--param",
            "t_mid",
            "--values",
            "0.9,1.1",
            "--depth",
            "2",
            "--param",
            "t_end",
            "--games",
            "2",
            "--range",
            "0.9:1.0:0.1",
            "--seed",
            "1",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let csv = fs::read_to_string(out.join("table.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("t_mid,t_end,games,"), "{csv}");
    let keys: Vec<String> =
        lines[1..].iter().map(|l| l.split(',').take(3).collect::<Vec<_>>().join(",")).collect();
    assert_eq!(keys, ["0.9,0.9,2", "0.9,1.0,2", "1.1,0.9,2", "1.1,1.0,2"]);
    let svg = fs::read_to_string(out.join("plot.svg")).unwrap();
    assert!(svg.contains("(2g)") && svg.contains("t_end"), "heatmap cells name their games");
    assert_eq!(read_games(&out).len(), 8);
}

#[test]
fn t_mid_alone_takes_the_seed_range_against_mpc_off() {
    let dir = scratch("sweep-default");
    let out = dir.join("d");
    let o = run_runner(
        &dir,
        &[
            "sweep",
            "--param",
            "t_mid",
            "--depth",
            "1",
            "--games",
            "2",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let sweep = json(&out.join("sweep.json"));
    assert_eq!(
        sweep["params"][0]["values"],
        serde_json::json!(["0.8", "0.9", "1.0", "1.1", "1.2", "1.3"])
    );
    assert_eq!(sweep["baseline"]["name"], "engine[MPC=false]");
    assert!(
        sweep["engine"]["options"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(["MPC", "true"]))
    );
    assert_eq!(read_games(&out).len(), 12);
    let md = fs::read_to_string(out.join("table.md")).unwrap();
    assert_eq!(md.lines().filter(|l| l.starts_with("| 0.") || l.starts_with("| 1.")).count(), 6);
}

#[test]
fn bad_sweep_arguments_are_one_line_errors_before_any_game() {
    let dir = scratch("sweep-bad");
    let out = dir.join("x");
    let cases: [(&[&str], &str); 5] = [
        (&["--values", "1", "--param", "t_mid"], "comes before any --param"),
        (&["--param", "Hash"], "has no values"),
        (&["--param", "t_mid", "--range", "0.8:1.3"], "LO:HI:STEP"),
        (&["--param", "t_mid", "--values", "1", "--fixed", "t_mid=2"], "also appears as --param"),
        (&["--param", "t_mid", "--values", "1", "--baseline", "MPC"], "NAME=VALUE"),
    ];
    for (args, want) in cases {
        let mut all = vec!["sweep", "--depth", "1", "--games", "2", "--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        let o = run_runner(&dir, &all);
        let (_, err) = text(&o);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().filter(|l| l.starts_with("error")).count(), 1, "{err}");
        assert!(!out.join("games.jsonl").exists(), "{args:?} played games");
    }
}

#[test]
fn sweeping_an_external_engine_option_sends_it_with_setoption() {
    let dir = scratch("sweep-sf");
    let out = dir.join("sf");
    let mut args = e2e::stockfish_skill_sweep();
    let limits = ["--fixed", "Hash=8", "--nodes", "300", "--maxmoves", "20", "--games", "2"];
    args.extend(limits.map(String::from));
    let rest =
        ["--seed", "3", "--debug-log", "--progress", "quiet", "--out", out.to_str().unwrap()];
    args.extend(rest.map(String::from));
    let o = run_runner(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o).1);
    let run = json(&out.join("run.json"));
    let engines = run["plan"]["engines"].as_array().unwrap();
    assert_eq!(engines[0]["name"], "sf[Skill Level=0]");
    assert_eq!(engines[2]["name"], "sf[baseline]");
    assert_eq!(engines[2]["options"], serde_json::json!([]), "baseline keeps its defaults");
    // The protocol logs show the values going out with setoption.
    let mut sent = String::new();
    for e in fs::read_dir(out.join("logs")).unwrap() {
        sent.push_str(&fs::read_to_string(e.unwrap().path()).unwrap_or_default());
    }
    assert!(sent.contains("setoption name Skill Level value 0"), "no setoption in logs");
    assert!(sent.contains("setoption name Hash value 8"));
    let md = fs::read_to_string(out.join("table.md")).unwrap();
    assert!(md.starts_with("# Sweep of Skill Level: sf vs sf[baseline]"), "{md}");
}

#[test]
fn adaptive_sweep_drops_a_hopeless_point_and_report_agrees() {
    let dir = scratch("sweep-race");
    let out = dir.join("race");
    let mut args = e2e::stockfish_racing_sweep();
    args.extend(["--concurrency", "2", "--out", out.to_str().unwrap()].map(String::from));
    let o = run_runner(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let summary = json(&out.join("summary.json"));
    let points = summary["points"].as_array().unwrap();
    assert_eq!(points[0]["status"]["state"], "dropped", "{stdout}");
    let after = points[0]["status"]["after_games"].as_u64().unwrap();
    assert!((8..32).contains(&after), "dropped after {after} games");
    assert!(points[0]["summary"]["games"].as_u64().unwrap() < 32);
    // The run has ended: a point that was not dropped says so, with its games.
    assert_eq!(points[1]["status"]["state"], "ended");
    assert_eq!(points[1]["status"]["after_games"], 32);
    assert_eq!(points[1]["summary"]["games"], 32);
    assert!(stdout.contains("dropped@"), "{stdout}");
    let before = fs::read_to_string(out.join("table.md")).unwrap();
    let o = run_runner(&dir, &["report", out.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(before, fs::read_to_string(out.join("table.md")).unwrap());
}

/// The quadratic fitted across the points of a sweep of `badengine tunable`
/// (option X, strongest at 37) brackets the true optimum. 6 points x 20 games (10 pairs, the
/// fewest the fit accepts), seed 2: deterministic (the engine's moves depend on the position and
/// X only; --depth 1, one game at a time; the random-walk book, which does not change when the
/// default book does). Measured: X = 38.8, 95 % interval [32.9, 43.9];
/// with 200 games per point (same seed) X = 36.8 [34.3, 39.0].
#[test]
fn fitted_optimum_of_a_tunable_engine_brackets_the_truth() {
    let dir = scratch("sweep-surface");
    let out = dir.join("run");
    let engine = e2e::bad_spec("t", "tunable", None);
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/../openings/random-walks.epd");
    let o = run_runner(
        &dir,
        &[
            "sweep",
            "--engine",
            &engine,
            "--param",
            "X",
            "--values",
            "0,20,40,60,80,100",
            "--baseline",
            "X=50",
            "--games",
            "20",
            "--seed",
            "2",
            "--depth",
            "1",
            "--book",
            book,
            "--concurrency",
            "1",
            "--progress",
            "quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (sweep_out, sweep_err) = text(&o);
    assert!(o.status.success(), "sweep failed: {sweep_err}");
    let summary = json(&out.join("summary.json"));
    let sf = &summary["surface"];
    assert_eq!(sf["status"], "ok", "{sf}");
    let opt = sf["optimum"].as_f64().unwrap();
    let (lo, hi) = (sf["ci"][0].as_f64().unwrap(), sf["ci"][1].as_f64().unwrap());
    assert!(lo < 37.0 && 37.0 < hi && lo <= opt && opt <= hi, "{sf}");
    assert!(hi - lo < 20.0, "a useful interval: {sf}");
    assert!(sf["model"].as_str().unwrap().contains("Elo"), "{sf}");
    // The same line under table.md and the terminal table; the plot draws the fit.
    let line = sweep_out.lines().find(|l| l.starts_with("Fitted optimum")).expect("surface line");
    assert!(line.contains(&format!("X = {opt:.1} (95 % interval X [{lo:.1}, {hi:.1}]")), "{line}");
    let md = fs::read_to_string(out.join("table.md")).unwrap();
    assert!(md.lines().any(|l| l == line), "{md}");
    let svg = fs::read_to_string(out.join("plot.svg")).unwrap();
    assert!(svg.contains(&format!("X = {opt:.1} [{lo:.1}, {hi:.1}]")), "plot footer");
    // `runner report` computes the same surface (the bootstrap is seeded by the run's seed).
    let o = run_runner(&dir, &["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "report failed: {}", stderr(&o));
    assert!(stdout(&o).lines().any(|l| l == line), "{}", stdout(&o));
    assert_eq!(json(&out.join("summary.json"))["surface"], *sf);
}
