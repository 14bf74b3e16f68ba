//! `runner fastchess`: a fastchess command line plays a real match (the translated `runner
//! match` command printed first), and options the runner lacks are refused before anything
//! starts.

use e2e::*;

#[test]
fn a_fastchess_command_line_plays_the_match_it_means() {
    let dir = scratch("fastchess-match");
    let book = write_book(&dir, 4);
    let engine = engine_bin().display().to_string();
    let out = dir.join("out");
    let (a, b) = (format!("cmd={engine}"), format!("cmd={engine}"));
    let args = [
        "fastchess",
        "-engine",
        &a,
        "name=first",
        "option.Hash=8",
        "-engine",
        &b,
        "name=second",
        "-each",
        "nodes=3000",
        "-openings",
        &format!("file={book}"),
        "format=epd",
        "order=sequential",
        "plies=2",
        "-games",
        "2",
        "-rounds",
        "2",
        "-concurrency",
        "2",
        "-draw",
        "movenumber=20",
        "movecount=4",
        "score=5",
        "-maxmoves",
        "60",
        "-srand",
        "11",
        "-recover",
        "--",
        "--out",
        out.to_str().expect("utf-8 path"),
        "--progress",
        "quiet",
    ];
    let o = run_runner(&dir, &args);
    let err = stderr(&o);
    assert!(o.status.success(), "runner fastchess failed:\n{err}");
    let first = err.lines().next().unwrap_or("");
    assert_eq!(
        first,
        format!(
            "runner match --engine name=first,cmd={engine},option.Hash=8 --engine \
             name=second,cmd={engine} --nodes 3000 --timemargin 0 --games 4 --concurrency 2 \
             --book {book} --book-order sequential --book-plies 2 \
             --draw movenumber=20,movecount=4,score=5 --maxmoves 60 --seed 11 --fault-limit 0 \
             --out {} --progress quiet",
            out.display()
        ),
        "the translated command comes first, on one line"
    );

    // The results folder is a runner match's, with fastchess's settings in the plan.
    let games = read_games(&out);
    assert_eq!(games.len(), 4, "2 rounds of 2 games");
    for g in &games {
        let players = [&g["white"], &g["black"]];
        assert!(players.contains(&&serde_json::json!("first")), "{g}");
        assert!(players.contains(&&serde_json::json!("second")), "{g}");
    }
    let plan = &read_json(&out.join("run.json"))["plan"];
    assert_eq!(plan["timemargin_ms"], 0);
    assert_eq!(plan["book_order"], "sequential");
    assert_eq!(plan["seed"], 11);
    assert_eq!(plan["pairs"], 2);
    assert_eq!(plan["tc"]["kind"], "nodes");
    assert_eq!(plan["adjudication"]["max_moves"], 60);
    assert_eq!(plan["adjudication"]["draw"]["movenumber"], 20);
    assert_eq!(plan["engines"][0]["options"][0], serde_json::json!(["Hash", "8"]));
    for f in ["games.pgn", "summary.json", "table.md"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let pgn = read_text(&out.join("games.pgn"));
    assert_eq!(pgn.matches("[White \"").count(), 4);
}

#[test]
fn options_the_runner_lacks_are_refused_before_anything_starts() {
    let dir = scratch("fastchess-refused");
    let engine = engine_bin().display().to_string();
    let cmd = format!("cmd={engine}");
    let args = [
        "fastchess",
        "-engine",
        &cmd,
        "-engine",
        &cmd,
        "-each",
        "nodes=100",
        "-crc32",
        "pgn=true",
        "-testEnv",
        "-config",
        "file=c.json",
        "--",
        "--out",
        "out",
    ];
    let o = run_runner(&dir, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "one line per refused option:\n{err}");
    assert!(lines[0].starts_with("error: -crc32: not supported"), "{err}");
    assert!(lines[1].starts_with("error: -testEnv: not supported"), "{err}");
    assert!(lines[2].starts_with("error: -config: not supported"), "{err}");
    assert!(!dir.join("out").exists(), "nothing may start");
}
