//! `runner match` with more than two engines: gauntlet and round-robin pairings, several time
//! controls, the tables and ratings written next to the games, and start-up errors.

use e2e::{
    bad_spec, engine_bin, fails_before_any_game, ok_stdout, read_games, read_text, run_runner,
    scratch,
};

fn bundled(name: &str, options: &str) -> String {
    format!("name={name},cmd={}{options}", engine_bin().display())
}

#[test]
fn gauntlet_of_three_engines_at_a_node_limit_writes_the_tables() {
    let dir = scratch("gauntlet-nodes");
    let (mpc, nompc) = (bundled("mpc", ",option.MPC=true"), bundled("nompc", ",option.MPC=false"));
    let mover = bad_spec("mover", "mate", None);
    let args = [
        "match",
        "--engine",
        &mpc,
        "--engine",
        &nompc,
        "--engine",
        &mover,
        "--nodes",
        "300",
        "--games",
        "4",
        "--maxmoves",
        "30",
        "--seed",
        "5",
        "--concurrency",
        "2",
        "--anchor",
        "nompc",
        "--progress",
        "quiet",
        "--out",
        "out",
    ];
    let stdout = ok_stdout(&run_runner(&dir, &args));
    let out = dir.join("out");
    let games = read_games(&out);
    assert_eq!(games.len(), 8, "2 pairings x 4 games");
    let labels: std::collections::BTreeSet<&str> =
        games.iter().map(|g| g["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["mpc vs mover", "mpc vs nompc"].into_iter().collect());

    let md = read_text(&out.join("table.md"));
    assert!(stdout.contains(&md), "the terminal shows table.md");
    for needle in [
        "## Pairings",
        "| mpc vs nompc | nodes=300 | 4 |",
        "| mpc vs mover | nodes=300 | 4 |",
        "## Ratings (nodes=300; anchor nompc = 0)",
        "| Rank | Engine | Elo | +/- | Games | Score | Draws |",
        "Table 4 layout",
        "| Pairing | nodes=300 |",
    ] {
        assert!(md.contains(needle), "{needle:?} missing in\n{md}");
    }
    // The anchor's rating is 0 +/- 0; mpc played 8 games.
    assert!(md.contains("| nompc | 0.0 | 0.0 | 4 |"), "{md}");
    assert!(md.lines().any(|l| l.contains("| mpc |") && l.contains("| 8 |")), "{md}");
    assert!(!md.contains("NaN") && !md.contains("inf"), "{md}");

    let csv = read_text(&out.join("table.csv"));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("pairing,tc,first,second,games,wins,draws,losses,ll,ld,dd,wd,ww"));
    let cols: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(&cols[..5], ["mpc vs nompc", "nodes=300", "mpc", "nompc", "4"]);
    let wdl: u64 = cols[5..8].iter().map(|c| c.parse::<u64>().unwrap()).sum();
    let penta: u64 = cols[8..13].iter().map(|c| c.parse::<u64>().unwrap()).sum();
    assert_eq!((wdl, penta), (4, 2));
    let ratings = read_text(&out.join("ratings.csv"));
    assert_eq!(ratings.lines().count(), 4, "{ratings}");

    let summary: serde_json::Value =
        serde_json::from_str(&read_text(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["pairings"].as_array().unwrap().len(), 2);
    assert_eq!(summary["gauntlet"]["rows"].as_array().unwrap().len(), 2);
    let run: serde_json::Value = serde_json::from_str(&read_text(&out.join("run.json"))).unwrap();
    assert_eq!(run["plan"]["kind"], "gauntlet");

    // Resuming a finished gauntlet plays nothing and rewrites the same tables.
    let mut again = args.to_vec();
    again.push("--resume");
    ok_stdout(&run_runner(&dir, &again));
    assert_eq!(read_games(&out).len(), 8);
    assert_eq!(read_text(&out.join("table.md")), md);
}

#[test]
fn round_robin_at_two_time_controls() {
    let dir = scratch("gauntlet-rr-tc");
    let a = bad_spec("a", "mate", None);
    let b = bad_spec("b", "good", None);
    let c = bad_spec("c", "garbage", None);
    let o = run_runner(
        &dir,
        &[
            "match",
            "--engine",
            &a,
            "--engine",
            &b,
            "--engine",
            &c,
            "--tournament",
            "round-robin",
            "--tc",
            "2+0.05",
            "--tc",
            "3+0.05",
            "--games",
            "2",
            "--maxmoves",
            "8",
            "--book-order",
            "sequential",
            "--seed",
            "1",
            "--progress",
            "quiet",
            "--concurrency",
            "2",
            "--out",
            "out",
        ],
    );
    ok_stdout(&o);
    let out = dir.join("out");
    let games = read_games(&out);
    assert_eq!(games.len(), 12, "3 pairings x 2 time controls x 2 games");
    let pgn = read_text(&out.join("games.pgn"));
    assert_eq!(pgn.matches("[TimeControl \"2+0.05\"]").count(), 6, "{pgn}");
    assert_eq!(pgn.matches("[TimeControl \"3+0.05\"]").count(), 6);
    let md = read_text(&out.join("table.md"));
    for needle in [
        "| a vs b | 2+0.05 | 2 |",
        "| b vs c | 3+0.05 | 2 |",
        "## Ratings (2+0.05; anchor a = 0)",
        "## Ratings (3+0.05; anchor a = 0)",
        "## Ratings (all; anchor a = 0)",
        "| Pairing | 2+0.05 | 3+0.05 |",
        "| a vs c |",
    ] {
        assert!(md.contains(needle), "{needle:?} missing in\n{md}");
    }
    let run: serde_json::Value = serde_json::from_str(&read_text(&out.join("run.json"))).unwrap();
    assert_eq!(run["plan"]["kind"], "round-robin");
    assert_eq!(run["plan"]["pairings"][3]["label"], "a vs b @ 3+0.05");
}

fn fails(name: &str, args: &[&str], needle: &str) {
    let err = fails_before_any_game(name, args, needle);
    assert_eq!(err.lines().filter(|l| l.starts_with("error")).count(), 1, "{err}");
}

#[test]
fn bad_gauntlets_fail_before_any_game() {
    let a = bad_spec("a", "good", None);
    let b = bad_spec("b", "good", None);
    let ghost = "name=ghost,cmd=/nonexistent/opponent";
    let base = ["match", "--engine", &a, "--engine", &b, "--nodes", "10", "--out", "out"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().copied().chain(extra.iter().copied()).map(String::from).collect()
    };
    let run = |name: &str, v: Vec<String>, needle: &str| {
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        fails(name, &refs, needle);
    };
    run("ghost", with(&["--engine", ghost]), "engine ghost: cannot start /nonexistent/opponent");
    run(
        "seats",
        with(&["--engine", "name=c,cmd=/bin/true", "--gauntlet-seats", "3"]),
        "--gauntlet-seats 3 needs at least one opponent",
    );
    run(
        "anchor",
        with(&["--engine", "name=c,cmd=/bin/true", "--anchor", "zz"]),
        "--anchor \"zz\" is not one of the engines (a, b, c)",
    );
    run("dup", with(&["--engine", &bad_spec("a", "mate", None)]), "two engines are named \"a\"");
}

/// `runner report` on a tournament folder reads its
/// summary.json only as a regular file, never through a symbolic link (it used to follow one).
#[test]
fn report_refuses_a_symlinked_summary_of_a_tournament() {
    let dir = scratch("gauntlet-summary-link");
    let specs: Vec<String> = ["a", "b", "c"].iter().map(|n| bad_spec(n, "good", None)).collect();
    let mut args = vec!["match"];
    for s in &specs {
        args.extend(["--engine", s]);
    }
    args.extend(["--nodes", "1", "--games", "2", "--maxmoves", "4", "--seed", "5"]);
    args.extend(["--progress", "quiet", "--out", "out"]);
    ok_stdout(&run_runner(&dir, &args));
    let summary = dir.join("out/summary.json");
    let elsewhere = dir.join("elsewhere.json");
    std::fs::rename(&summary, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &summary).unwrap();
    let o = run_runner(&dir, &["report", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a symlinked summary.json was read: {err}");
    assert!(err.contains("summary.json is a symbolic link"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
