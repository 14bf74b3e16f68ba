//! Per-engine limits and time odds (`--engine ...,tc=,nodes=,...`, a clock
//! with a node cap), and the scheduling options (`--repeat`, `--noswap`, `--reverse`,
//! `--book-start`, `--wait`), end to end with badengine.

use std::path::Path;

use e2e::python::python_chess;
use e2e::{bad_spec, read_games, read_json, read_text, run_runner, scratch, stderr};

/// The `go` lines the runner sent to the engines whose log files start with `stem`.
fn go_lines(out: &Path, stem: &str) -> Vec<String> {
    let mut v = Vec::new();
    let logs = std::fs::read_dir(out.join("logs")).expect("logs folder");
    for e in logs.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(stem) && name.ends_with(".uci.log") {
            let text = read_text(&e.path());
            v.extend(text.lines().filter_map(|l| l.strip_prefix("> go")).map(|l| format!("go{l}")));
        }
    }
    v
}

/// python-chess reads `pgn` and prints, per game, its White, Black, TimeControl,
/// WhiteTimeControl, BlackTimeControl and Result tags (`None` when absent), tab-separated.
fn python_tags(pgn: &Path) -> Vec<Vec<String>> {
    let script = r#"
import sys, chess.pgn
f = open(sys.argv[1])
while True:
    g = chess.pgn.read_game(f)
    if g is None:
        break
    assert not g.errors, g.errors
    b = g.board()
    for m in g.mainline_moves():
        assert b.is_legal(m), (m, b.fen())
        b.push(m)
    h = g.headers
    tags = ["White", "Black", "TimeControl", "WhiteTimeControl", "BlackTimeControl", "Result"]
    print("\t".join(str(h.get(t)) for t in tags))
"#;
    let pgn = pgn.to_string_lossy();
    python_chess("python-chess rejected the PGN", script, &[&pgn], None)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// An engine's own `tc=` and `nodes=` replace the run's `--tc 60+1 --nodes 777`; the other
/// engine plays the run's clock with its node cap. Each reaches `go` (`go wtime .. btime .. winc
/// .. binc .. nodes N`), run.json holds them, games.jsonl has each game's per-side limits, and the
/// PGN has WhiteTimeControl/BlackTimeControl, read back by python-chess.
#[test]
fn per_engine_limits_and_time_odds_reach_go_and_the_records() {
    let dir = scratch("limits-odds");
    let a = format!("{},tc=30+0.5,nodes=1234,timemargin=250", bad_spec("A", "good", None));
    let b = bad_spec("B", "good", None);
    let args = [
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--tc",
        "60+1",
        "--nodes",
        "777",
        "--games",
        "2",
        "--maxmoves",
        "4",
        "--debug-log",
        "--progress",
        "quiet",
        "--out",
        "out",
    ];
    let o = run_runner(&dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join("out");
    let a_go = go_lines(&out, "A-");
    let b_go = go_lines(&out, "B-");
    assert!(!a_go.is_empty() && !b_go.is_empty(), "{a_go:?} {b_go:?}");
    // Both sides have Fischer clocks: wtime and btime each from its own control.
    let shape = |l: &str, nodes: &str| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() == 11
            && [w[0], w[1], w[3], w[5], w[7], w[9]]
                == ["go", "wtime", "btime", "winc", "binc", "nodes"]
            && w[10] == nodes
    };
    for l in &a_go {
        assert!(shape(l, "1234"), "A's own limits: {l}");
    }
    for l in &b_go {
        assert!(shape(l, "777"), "B plays the run's limits: {l}");
    }
    // A's increment is 0.5 s, B's 1 s, whichever colour each has.
    assert!(
        a_go.iter()
            .chain(&b_go)
            .all(|l| { l.contains("winc 500 binc 1000") || l.contains("winc 1000 binc 500") })
    );
    let run = read_json(&out.join("run.json"));
    let limits = &run["plan"]["engines"][0]["limits"];
    assert_eq!(limits["nodes"], 1234, "{run}");
    assert_eq!(limits["timemargin_ms"], 250, "{run}");
    assert!(run["plan"]["engines"][1].get("limits").is_none(), "{run}");
    assert_eq!(run["plan"]["nodes"], 777, "{run}");
    let games = read_games(&out);
    assert_eq!(games.len(), 2);
    for g in &games {
        let [w, b] = [&g["limits"][0], &g["limits"][1]];
        let (a_side, b_side) = if g["white"] == "A" { (w, b) } else { (b, w) };
        assert_eq!(a_side["nodes"], 1234, "{g}");
        assert_eq!(a_side["timemargin_ms"], 250, "{g}");
        assert_eq!(a_side["clock"]["base_ms"], 30000, "{g}");
        assert_eq!(b_side["nodes"], 777, "{g}");
        assert_eq!(b_side["clock"]["base_ms"], 60000, "{g}");
        assert_eq!(b_side["timemargin_ms"], 100, "{g}");
    }
    let tags = python_tags(&out.join("games.pgn"));
    assert_eq!(tags.len(), 2);
    for t in &tags {
        let (wtc, btc) = if t[0] == "A" { ("30+0.5", "60+1") } else { ("60+1", "30+0.5") };
        assert_eq!(t[2], "None", "no TimeControl when the sides differ: {t:?}");
        assert_eq!((t[3].as_str(), t[4].as_str()), (wtc, btc), "{t:?}");
        assert_eq!(t[5], "1/2-1/2", "{t:?}");
    }
}

/// Equal limits keep the one `TimeControl` tag; `--each` gives keys to every engine
/// (an engine's own key wins); a changed per-engine limit is a changed plan on `--resume`; bad
/// keys are refused in one line before any game.
#[test]
fn each_limits_resume_and_refusals() {
    let dir = scratch("limits-each");
    let a = format!("{},depth=3", bad_spec("A", "good", None));
    let b = bad_spec("B", "good", None);
    let run = |a: &str, resume: bool| {
        let mut args = vec![
            "match",
            "--engine",
            a,
            "--engine",
            &b,
            "--each",
            "tc=5+0.05,depth=2",
            "--games",
            "2",
            "--maxmoves",
            "3",
            "--debug-log",
            "--progress",
            "quiet",
            "--out",
            "out",
        ];
        if resume {
            args.push("--resume");
        }
        run_runner(&dir, &args)
    };
    let o = run(&a, false);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join("out");
    for l in go_lines(&out, "A-") {
        assert!(l.starts_with("go wtime ") && l.ends_with(" depth 3"), "{l}");
    }
    for l in go_lines(&out, "B-") {
        assert!(l.starts_with("go wtime ") && l.ends_with(" depth 2"), "{l}");
    }
    for t in python_tags(&out.join("games.pgn")) {
        assert_eq!((t[2].as_str(), t[3].as_str(), t[4].as_str()), ("5+0.05", "None", "None"));
    }
    let changed = format!("{},depth=4", bad_spec("A", "good", None));
    let o = run(&changed, true);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("engines changed"), "{}", stderr(&o));
    for (spec, needle) in [
        ("nodes=0", "nodes=0: expected 1 to"),
        ("depth=256", "depth=256: expected 1 to 255"),
        ("tc=10+0.1,st=1", "give one of tc= and st="),
        ("tc=abc", "bad time control"),
        ("timemargin=x", "timemargin=x: not milliseconds"),
    ] {
        let a = format!("{},{spec}", bad_spec("A", "good", None));
        let o = run_runner(&scratch("limits-bad"), &["match", "--engine", &a, "--engine", &b]);
        assert!(!o.status.success(), "{spec}");
        let err = stderr(&o);
        assert!(err.contains(needle) && err.trim().lines().count() == 1, "{spec}: {err}");
    }
}

/// One match of badengine against itself under `extra`, 4 games from a 4-opening book in
/// order; returns (opening, first engine White?) per game in schedule order, and stderr.
fn schedule_of(name: &str, extra: &[&str]) -> (Vec<(u64, bool)>, String, serde_json::Value) {
    let dir = scratch(name);
    let book = e2e::write_book(&dir, 4);
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let mut args = vec![
        "match",
        "--engine",
        &a,
        "--engine",
        &b,
        "--book",
        &book,
        "--book-order",
        "sequential",
        "--games",
        "4",
        "--maxmoves",
        "3",
        "--depth",
        "1",
        "--concurrency",
        "1",
        "--progress",
        "plain",
        "--out",
        "out",
    ];
    args.extend_from_slice(extra);
    let o = run_runner(&dir, &args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let mut games = read_games(&dir.join("out"));
    games.sort_by_key(|g| (g["seq"].as_u64(), g["game"].as_u64()));
    let seen = games.iter().map(|g| (g["opening"].as_u64().unwrap(), g["white"] == "A")).collect();
    let text = format!("{}\n{}", e2e::stdout(&o), stderr(&o));
    (seen, text, read_json(&dir.join("out/run.json")))
}

/// Each scheduling option's openings and colours, its place in run.json and the hash,
/// and the statistics: trinomial (with the reason said) when games are not colour-reversed pairs.
#[test]
fn scheduling_options_set_openings_colours_and_statistics() {
    let (plain, err, run) = schedule_of("sched-default", &[]);
    assert_eq!(plain, [(0, true), (0, false), (1, true), (1, false)]);
    assert!(run["plan"].get("scheduling").is_none(), "defaults keep older hashes: {run}");
    assert!(!err.contains("trinomial"), "{err}");
    let hash = |r: &serde_json::Value| r["plan_hash"].as_str().unwrap().to_string();
    let mut hashes = vec![hash(&run)];

    let (once, err, run) = schedule_of("sched-repeat1", &["--repeat", "1"]);
    assert_eq!(once, [(0, true), (1, false), (2, true), (3, false)]);
    assert_eq!(run["plan"]["scheduling"]["repeat"], 1);
    assert!(err.contains("--repeat 1 plays every opening once"), "{err}");
    assert!(err.contains("trinomial over 4 games"), "{err}");
    assert!(!err.contains("pentanomial [LL"), "no pentanomial counts claimed: {err}");
    hashes.push(hash(&run));

    let (noswap, err, run) = schedule_of("sched-noswap", &["--noswap"]);
    assert_eq!(noswap, [(0, true), (0, true), (1, true), (1, true)]);
    assert!(err.contains("trinomial over 4 games") && !err.contains("pentanomial [LL"), "{err}");
    hashes.push(hash(&run));

    let (rev, err, run) = schedule_of("sched-reverse", &["--reverse"]);
    assert_eq!(rev, [(0, false), (0, true), (1, false), (1, true)]);
    assert!(err.contains("pentanomial [LL"), "reversed pairs are still pairs: {err}");
    hashes.push(hash(&run));

    let (start, _, run) = schedule_of("sched-start", &["--book-start", "4"]);
    assert_eq!(start, [(3, true), (3, false), (0, true), (0, false)]);
    hashes.push(hash(&run));

    let (waited, _, run) = schedule_of("sched-wait", &["--wait", "20"]);
    assert_eq!(waited, plain);
    assert_eq!(run["plan"]["scheduling"]["wait_ms"], 20);
    hashes.push(hash(&run));

    let distinct: std::collections::BTreeSet<&String> = hashes.iter().collect();
    assert_eq!(distinct.len(), hashes.len(), "{hashes:?}");
}

/// A changed scheduling option is a changed plan on `--resume`; bad values are refused.
#[test]
fn scheduling_changes_are_refused_on_resume() {
    let dir = scratch("sched-resume");
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--games",
            "2",
            "--maxmoves",
            "3",
            "--depth",
            "1",
            "--seed",
            "1",
            "--progress",
            "quiet",
            "--out",
            "out",
        ];
        args.extend_from_slice(extra);
        run_runner(&dir, &args)
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["--resume", "--noswap"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("scheduling changed"), "{}", stderr(&o));
    let o = run(&["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (args, needle) in [
        (&["--repeat", "3"][..], "--repeat 3: give 1, 2 or an even number"),
        (&["--book-start", "2"][..], "--book-start 2: the book has 1 opening(s)"),
    ] {
        let mut v = vec!["match", "--engine", &a, "--engine", &b, "--book-order", "sequential"];
        let d = scratch("sched-bad");
        let book = e2e::write_book(&d, 1);
        v.extend(["--book", &book]);
        v.extend_from_slice(args);
        let o = run_runner(&d, &v);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

/// Engines on limits of their own (`--engine ..,nodes=3000 --engine ..,nodes=600`) are described
/// each with its own everywhere a run's limits are shown: the first progress line, table.md,
/// report.html (its facts, its engines table, and the command that plays the plan again, which
/// must give each engine its `nodes=`).
#[test]
fn each_engines_own_limits_are_shown_everywhere() {
    let dir = scratch("limits-shown");
    let book = e2e::write_book(&dir, 4);
    let a = format!("{},nodes=3000", bad_spec("n3000", "good", None));
    let b = format!("{},nodes=600", bad_spec("n600", "good", None));
    let args =
        e2e::match_args(&a, &b, "out", &["--book", &book, "--games", "2", "--maxmoves", "4"]);
    let o = run_runner(&dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = "n3000: nodes=3000; n600: nodes=600";
    assert!(stderr(&o).lines().next().unwrap_or("").contains(said), "{}", stderr(&o));
    let out = dir.join("out");
    let table = read_text(&out.join("table.md"));
    assert!(table.contains(said) && !table.contains("tc=10+0.1"), "{table}");
    let o = run_runner(&dir, &["report", "out", "--html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = read_text(&out.join("report.html"));
    let plan = e2e::html_section(&html, "plan");
    assert!(plan.contains(said) && !plan.contains("tc=10+0.1"), "{plan}");
    let cmd = plan.split("<pre class=\"cmd\">").nth(1).and_then(|s| s.split("</pre>").next());
    let cmd = cmd.expect("the rebuilt command");
    assert!(cmd.contains(",nodes=3000 ") && cmd.contains(",nodes=600 "), "{cmd}");
}
