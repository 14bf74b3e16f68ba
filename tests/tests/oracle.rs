//! End-to-end: `runner searchtest --oracle` (Debian's stockfish scores the bundled engine's
//! moves), its evaluation cache, and test-suite scoring of EPD `bm`/`am`. Node and depth limits
//! only: every figure is deterministic.

use std::path::{Path, PathBuf};

use e2e::{debian_engine, engine_bin, read_json, run_runner, scratch, stderr};

fn default_positions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/positions/default.epd")
}

/// `searchtest` of the bundled engine at 20000 nodes (`full`) and the same engine at 50 nodes
/// (`t50`) on the first `n` default positions, scored by stockfish at `depth`.
fn oracle_run(dir: &Path, out: &str, n: usize, depth: u32, extra_variant: Option<&str>) -> String {
    let sf = debian_engine("stockfish");
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let positions = default_positions().display().to_string();
    let limit = n.to_string();
    let oracle = format!("name=stockfish,cmd={sf},depth={depth}");
    let mut args = vec![
        "searchtest",
        "--engine",
        &engine,
        "--positions",
        &positions,
        "--limit",
        &limit,
        "--nodes",
        "20000",
        "--concurrency",
        "2",
        "--variant",
        "full",
        "--variant",
        "t50:limit.nodes=50",
        "--oracle",
        &oracle,
        "--oracle-cache",
        "cache.jsonl",
        "--out",
        out,
    ];
    if let Some(v) = extra_variant {
        args.extend(["--variant", v]);
    }
    let o = run_runner(dir, &args);
    assert!(o.status.success(), "searchtest --oracle failed: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn oracle_finds_a_tiny_node_budget_worse() {
    let dir = scratch("oracle-worse");
    let stdout = oracle_run(&dir, "st", 30, 10, None);
    assert!(stdout.contains("# Oracle: `stockfish`"), "{stdout}");
    let o = read_json(&dir.join("st/oracle.json"));
    let vs = &o["summary"]["variants"];
    assert_eq!((vs[0]["name"].as_str(), vs[0]["scored"].as_u64()), (Some("full"), Some(30)));
    let (full, t50) = (f(&vs[0]["loss"]["mean"]), f(&vs[1]["loss"]["mean"]));
    assert!(t50 > full, "50 nodes should lose more than 20000: {t50} vs {full}");
    // The paired difference full - t50 has an interval below zero: the oracle tells them apart.
    let pair = &o["summary"]["pairs"][0];
    assert_eq!((pair["a"].as_str(), pair["b"].as_str()), (Some("full"), Some("t50")));
    let hi = f(&pair["test"]["diff"]["hi"]);
    assert!(hi < 0.0, "interval of full - t50 should exclude 0: {pair}");
    assert!(f(&pair["test"]["p"]) < 0.05, "{pair}");
    // Best-move rate and per-stage figures are there.
    assert!(vs[0]["best_move"]["rate"].as_f64().is_some(), "{vs}");
    let stages = &o["by_stage"];
    let n: u64 = ["middlegame", "endgame"]
        .iter()
        .map(|s| stages[s]["variants"][0]["scored"].as_u64().unwrap())
        .sum();
    assert_eq!(n, 30);
    let moves = std::fs::read_to_string(dir.join("st/oracle-moves.jsonl")).unwrap();
    assert_eq!(moves.lines().count(), 60);
}

#[test]
fn oracle_cache_serves_a_rerun_and_a_new_variant_pays_only_for_new_moves() {
    let dir = scratch("oracle-cache");
    oracle_run(&dir, "first", 8, 6, None);
    let first = read_json(&dir.join("first/oracle.json"));
    let run = &first["run"];
    assert_eq!(run["cached"].as_u64(), Some(0), "{run}");
    let searched = run["searched"].as_u64().unwrap();
    assert!(searched >= 8, "{run}");
    // The same test again: every oracle search comes from the cache, with the same losses.
    oracle_run(&dir, "again", 8, 6, None);
    let again = read_json(&dir.join("again/oracle.json"));
    assert_eq!(again["run"]["searched"].as_u64(), Some(0), "{}", again["run"]);
    assert_eq!(again["run"]["cached"], run["needed"]);
    assert_eq!(again["summary"], first["summary"]);
    // Lines come in the order the searches finished (--concurrency 2): compare them sorted.
    let moves = |d: &str| {
        let text = std::fs::read_to_string(dir.join(d).join("oracle-moves.jsonl")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    assert_eq!(moves("first"), moves("again"));
    // A new variant: only its moves that were not seen before are searched.
    oracle_run(&dir, "third", 8, 6, Some("t200:limit.nodes=200"));
    let third = read_json(&dir.join("third/oracle.json"));
    let r3 = &third["run"];
    assert!(r3["searched"].as_u64().unwrap() <= 8, "at most one new move per position: {r3}");
    assert_eq!(
        r3["cached"].as_u64().unwrap() + r3["searched"].as_u64().unwrap(),
        r3["needed"].as_u64().unwrap()
    );
    // A cut-off last line (a killed run) is skipped; the next run appends after it.
    let cache = dir.join("cache.jsonl");
    let mut text = std::fs::read_to_string(&cache).unwrap();
    let lines = text.lines().count();
    text.push_str("{\"oracle\":\"x\",\"fen\":\"8/8");
    std::fs::write(&cache, text).unwrap();
    oracle_run(&dir, "fourth", 9, 6, None);
    let after = std::fs::read_to_string(&cache).unwrap();
    assert!(after.lines().count() > lines + 1, "the ninth position was appended");
    let parsed = after.lines().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok());
    assert_eq!(parsed.count(), after.lines().count() - 1, "only the torn line fails to parse");
}

#[test]
fn epd_bm_and_am_are_scored_as_solved_or_failed() {
    let dir = scratch("oracle-suite");
    std::fs::write(
        dir.join("suite.epd"),
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#; id \"s1\";\n\
         6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Ra8#; id \"s2\";\n\
         4k3/8/8/3q4/8/8/8/3RK3 b - - am Qd4 Qd3 Qd2+; id \"s3\";\n\
         rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"no ops\";\n",
    )
    .unwrap();
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let o = run_runner(
        &dir,
        &[
            "searchtest",
            "--engine",
            &engine,
            "--positions",
            "suite.epd",
            "--depth",
            "3",
            "--variant",
            "a:MPC=false",
            "--variant",
            "b:MPC=true",
            "--out",
            "st",
        ],
    );
    assert!(o.status.success(), "searchtest failed: {}", stderr(&o));
    let s = read_json(&dir.join("st/summary.json"));
    let suite = s["suite"].as_array().unwrap_or_else(|| panic!("no suite rows: {s}"));
    assert_eq!(suite.len(), 2);
    for row in suite {
        assert_eq!(row["positions"].as_u64(), Some(3), "{row}");
        assert_eq!(row["solved"].as_u64(), Some(3), "mate in one at depth 3: {row}");
        assert_eq!(row["rate"]["rate"].as_f64(), Some(1.0), "{row}");
    }
    let table = std::fs::read_to_string(dir.join("st/table.md")).unwrap();
    assert!(table.contains("# Test suite: EPD bm/am"), "{table}");
    // A bm move that is not legal is a one-line error naming the line.
    std::fs::write(dir.join("bad.epd"), "6k1/5ppp/8/8/8/8/8/R5K1 w - - bm Qd8;\n").unwrap();
    let o = run_runner(
        &dir,
        &[
            "searchtest",
            "--positions",
            "bad.epd",
            "--depth",
            "1",
            "--variant",
            "a",
            "--variant",
            "b",
        ],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("bad.epd: line 1") && err.contains("Qd8"), "{err}");
}

#[test]
fn an_oracle_that_does_not_start_fails_before_any_search() {
    let dir = scratch("oracle-missing");
    let o = run_runner(
        &dir,
        &[
            "searchtest",
            "--positions",
            &default_positions().display().to_string(),
            "--limit",
            "2",
            "--nodes",
            "100",
            "--variant",
            "a",
            "--variant",
            "b",
            "--oracle",
            "name=nosuch,cmd=/nonexistent/oracle,depth=4",
            "--out",
            "st",
        ],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.trim().lines().count() == 1 && err.contains("/nonexistent/oracle"), "{err}");
    assert!(!dir.join("st/searches.jsonl").exists(), "no search may run");
}

#[test]
fn positions_from_a_results_folder_are_drawn_seeded_and_split_by_stage() {
    let dir = scratch("oracle-positions-from");
    std::fs::create_dir_all(dir.join("run")).unwrap();
    let opening = r#"["e2e4","e7e5","g1f3","b8c6","f1b5","a7a6","b5a4","g8f6"]"#;
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let end = "4k3/8/8/8/8/8/4P3/R3K3 w - - 0 40";
    let ending = r#"["a1a7","e8f8","e1f2","f8g8","f2f3","g8h8"]"#;
    std::fs::write(
        dir.join("run/games.jsonl"),
        format!("{{\"fen\":\"{start}\",\"moves\":{opening}}}\n{{\"fen\":\"{end}\",\"moves\":{ending}}}\n"),
    )
    .unwrap();
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let args = |out: &'static str| {
        vec![
            "searchtest".to_string(),
            "--engine".into(),
            engine.clone(),
            "--positions-from".into(),
            "run".into(),
            "--skip-plies".into(),
            "2".into(),
            "--limit".into(),
            "4".into(),
            "--depth".into(),
            "1".into(),
            "--variant".into(),
            "a".into(),
            "--variant".into(),
            "b".into(),
            "--out".into(),
            out.into(),
        ]
    };
    for out in ["one", "two"] {
        let a = args(out);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run_runner(&dir, &refs);
        assert!(o.status.success(), "searchtest --positions-from failed: {}", stderr(&o));
    }
    let epd = std::fs::read_to_string(dir.join("one/positions.epd")).unwrap();
    let lines: Vec<&str> = epd.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 4, "{epd}");
    let ends = lines.iter().filter(|l| l.contains("c0 \"endgame\"")).count();
    assert_eq!(ends, 2, "half of the draw from each stage: {epd}");
    assert_eq!(epd, std::fs::read_to_string(dir.join("two/positions.epd")).unwrap(), "seeded");
    let s = read_json(&dir.join("one/summary.json"));
    assert_eq!(s["by_stage"]["endgame"][0]["positions"].as_u64(), Some(2), "{s}");
}
