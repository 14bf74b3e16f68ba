//! Opening books and Chess960: finished
//! openings are skipped with a line naming the book and line; unreadable or illegal PGN moves
//! and non-UTF-8 books are errors naming the file; `--variant fischerandom` plays Chess960 with
//! engines that declare `UCI_Chess960` (castling written king-takes-rook on the pipe, the PGN
//! tagged `Variant "Chess960"`) and refuses an engine that does not; `runner book --chess960`
//! writes the 960 start positions.

use std::path::Path;
use std::process::Output;

use e2e::python::python_chess;
use e2e::{bad_spec, debian_engine, engine_bin, read_games, run_runner, scratch, stderr};

/// `runner match` between two engines over `book`, a few quiet games at a node limit.
fn play(dir: &Path, book: &str, engines: [&str; 2], extra: &[&str]) -> Output {
    let out = dir.join("run").to_string_lossy().into_owned();
    let mut args = vec![
        "match",
        "--engine",
        engines[0],
        "--engine",
        engines[1],
        "--book",
        book,
        "--book-order",
        "sequential",
        "--concurrency",
        "1",
        "--maxmoves",
        "20",
        "--progress",
        "quiet",
        "--seed",
        "1",
        "--out",
        &out,
    ];
    if !extra.contains(&"--games") {
        args.extend_from_slice(&["--games", "2"]);
    }
    args.extend_from_slice(extra);
    std::fs::create_dir_all(dir).expect("scratch dir");
    run_runner(dir, &args)
}

fn bundled(name: &str) -> String {
    format!("name={name},cmd={}", engine_bin().display())
}

#[test]
fn finished_openings_are_skipped_with_a_line_naming_book_and_line() {
    let dir = scratch("books-finished");
    std::fs::write(
        dir.join("book.epd"),
        "# openings that are over before a move is made\n\
         rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n\
         7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n\
         8/8/4k3/8/8/4K3/8/8 w - - 0 1\n\
         8/8/4k3/8/8/4K3/4P3/8 w - - 100 80\n\
         r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n",
    )
    .unwrap();
    let (a, b) = (bundled("a"), bundled("b"));
    let o = play(&dir, "book.epd", [&a, &b], &["--nodes", "300"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for (line, why) in
        [(2, "checkmated"), (3, "stalemate"), (4, "insufficient material"), (5, "fifty-move")]
    {
        assert!(
            err.lines().any(|l| l.contains("book.epd")
                && l.contains(&format!("line {line}"))
                && l.contains(why)),
            "no line about line {line} ({why}):\n{err}"
        );
    }
    let records = read_games(&dir.join("run"));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert!(r["fen"].as_str().unwrap().starts_with("r1bqkbnr/pppp1ppp/2n5"), "{r}");
        assert!(r["plies"].as_u64().unwrap() > 0, "a 0-ply game was played: {r}");
    }

    // A book with nothing playable is refused before any game.
    std::fs::write(dir.join("over.epd"), "8/8/4k3/8/8/4K3/8/8 w - - 0 1\n").unwrap();
    let dir2 = dir.join("y");
    std::fs::create_dir_all(&dir2).unwrap();
    let o2 = play(&dir2, dir.join("over.epd").to_str().unwrap(), [&a, &b], &["--nodes", "300"]);
    assert!(!o2.status.success());
    assert!(stderr(&o2).contains("over.epd"), "{}", stderr(&o2));
    assert!(read_games(&dir2.join("run")).is_empty());
}

#[test]
fn bad_pgn_moves_and_garbage_books_are_errors_naming_file_and_game() {
    let dir = scratch("books-badpgn");
    let (a, b) = (bundled("a"), bundled("b"));
    for (file, text, needles) in [
        (
            "typo.pgn",
            "[Event \"one\"]\n\n1. e4 e5 *\n\n[Event \"two\"]\n\n1. e4 e5 2. d4 d9 3. d5 *\n",
            &["typo.pgn", "game 2", "line 7", "d9"][..],
        ),
        ("illegal.pgn", "1. e4 e5 2. Ke3 *\n", &["illegal.pgn", "game 1", "Ke3"][..]),
        (
            "garbage.pgn",
            "Dear reader,\nthis is not chess.\n",
            &["garbage.pgn", "game 1", "line 1"][..],
        ),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
        let o = play(&dir, file, [&a, &b], &["--nodes", "300"]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{file} accepted:\n{err}");
        for n in needles {
            assert!(err.contains(n), "{file}: {n:?} missing from:\n{err}");
        }
        assert!(read_games(&dir.join("run")).is_empty());
    }
}

#[test]
fn non_utf8_books_name_the_file() {
    let dir = scratch("books-utf8");
    let (a, b) = (bundled("a"), bundled("b"));
    let mut epd = b"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n".to_vec();
    epd.extend_from_slice(b"8/8/4k3/8/8/4K3/4P3/8 w - - \xff\xfe\n");
    for name in ["latin.epd", "latin"] {
        std::fs::write(dir.join(name), &epd).unwrap();
        let o = play(&dir, name, [&a, &b], &["--nodes", "300"]);
        let err = stderr(&o);
        assert!(!o.status.success());
        let first = err.lines().find(|l| l.contains("error")).unwrap_or_default();
        assert!(
            first.contains(name) && first.contains("UTF-8") && first.contains("line 2"),
            "{err}"
        );
    }
}

/// A Chess960 position where White's only mate in one is castling queen side (king b1, rook a1:
/// the king goes to c1, the rook to d1 and mates on the d-file): `b1a1` on the pipe, `O-O-O#`
/// in the PGN.
const MATE_BY_CASTLING: &str = "2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1";

fn python_check_960_pgn(pgn: &Path) -> String {
    let script = r#"
import sys, chess, chess.pgn
f = open(sys.argv[1])
castles = 0
n = 0
while True:
    g = chess.pgn.read_game(f)
    if g is None:
        break
    n += 1
    assert g.headers.get("Variant") == "Chess960", g.headers
    assert "FEN" in g.headers, g.headers
    assert not g.errors, g.errors
    b = g.board()
    assert b.chess960
    for m in g.mainline_moves():
        assert b.is_legal(m), (m, b.fen())
        castles += b.is_castling(m)
        b.push(m)
print(n, castles)
"#;
    let pgn = pgn.to_string_lossy();
    python_chess("python-chess rejected the PGN", script, &[&pgn], None)
}

#[test]
fn chess960_games_castle_king_takes_rook_and_the_pgn_says_chess960() {
    let stockfish = debian_engine("stockfish");
    let dir = scratch("books-960");
    std::fs::write(dir.join("mate.epd"), format!("{MATE_BY_CASTLING}\n")).unwrap();
    let sf = |n: &str| format!("name={n},cmd={stockfish},option.Threads=1,option.Hash=8");
    let (a, b) = (sf("sf1"), sf("sf2"));
    let o = play(
        &dir,
        "mate.epd",
        [&a, &b],
        &["--variant", "fischerandom", "--depth", "4", "--debug-log"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let records = read_games(&dir.join("run"));
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["moves"][0], "b1a1", "castling is king takes rook: {r}");
        assert_eq!(r["termination"], "checkmate", "{r}");
        assert_eq!(r["result"], "1-0", "{r}");
    }
    let pgn = std::fs::read_to_string(dir.join("run/games.pgn")).unwrap();
    assert!(pgn.contains("[Variant \"Chess960\"]"), "{pgn}");
    assert!(pgn.contains("1. O-O-O#"), "{pgn}");
    assert_eq!(python_check_960_pgn(&dir.join("run/games.pgn")), "2 2");
    // The engines were told, and read the castling back.
    let log = std::fs::read_to_string(dir.join("run/logs/sf1-0.uci.log")).unwrap();
    assert!(log.contains("> setoption name UCI_Chess960 value true"), "{log}");

    // Standard chess refuses the position with a line pointing to --variant.
    let o =
        play(&dir.join("std"), dir.join("mate.epd").to_str().unwrap(), [&a, &b], &["--depth", "4"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--variant fischerandom"), "{}", stderr(&o));
}

#[test]
fn chess960_start_positions_play_out_legally() {
    let stockfish = debian_engine("stockfish");
    let dir = scratch("books-960-start");
    let o = run_runner(
        &dir,
        &["book", "--chess960", "--count", "3", "--seed", "5", "--out", "960.epd"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sf = |n: &str| format!("name={n},cmd={stockfish},option.Threads=1,option.Hash=8");
    let (a, b) = (sf("sf1"), sf("sf2"));
    let o =
        play(&dir, "960.epd", [&a, &b], &["--variant", "chess960", "--depth", "3", "--games", "6"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let records = read_games(&dir.join("run"));
    assert_eq!(records.len(), 6);
    for r in &records {
        assert_ne!(r["termination"], "illegal-move", "{r}");
        assert!(r["plies"].as_u64().unwrap() >= 20 || r["termination"] != "adjudication", "{r}");
    }
    let summary = python_check_960_pgn(&dir.join("run/games.pgn"));
    assert!(summary.starts_with("6 "), "{summary}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run/run.json")).unwrap()).unwrap();
    assert_eq!(run["plan"]["variant"], "fischerandom");
}

#[test]
fn chess960_refuses_an_engine_without_uci_chess960_before_any_game() {
    let dir = scratch("books-960-refuse");
    std::fs::write(dir.join("mate.epd"), format!("{MATE_BY_CASTLING}\n")).unwrap();
    let (a, b) = (bundled("a"), bad_spec("bad", "good", None));
    let o = play(&dir, "mate.epd", [&a, &b], &["--variant", "fischerandom", "--depth", "2"]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("UCI_Chess960")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("bad"), "{err}");
    assert!(read_games(&dir.join("run")).is_empty());
}

#[test]
fn runner_book_writes_the_960_start_positions() {
    let dir = scratch("books-960-gen");
    let o = run_runner(&dir, &["book", "--chess960", "--out", "all.epd"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = std::fs::read_to_string(dir.join("all.epd")).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 960);
    assert!(
        lines[518].starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha -"),
        "{}",
        lines[518]
    );
    assert!(lines[518].contains("id \"chess960 #518\""), "{}", lines[518]);
    assert!(
        lines[0].starts_with("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf -"),
        "{}",
        lines[0]
    );
    let o =
        run_runner(&dir, &["book", "--chess960", "--count", "12", "--seed", "9", "--out", "s.epd"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again =
        run_runner(&dir, &["book", "--chess960", "--count", "12", "--seed", "9", "--out", "t.epd"]);
    assert!(again.status.success());
    let s = std::fs::read_to_string(dir.join("s.epd")).unwrap();
    assert_eq!(s, std::fs::read_to_string(dir.join("t.epd")).unwrap(), "seeded");
    assert_eq!(s.lines().count(), 12);
    assert!(s.lines().all(|l| lines.contains(&l)));
}

/// `runner book --from` plays named human lines, scores them with an engine and keeps
/// those in the window, writing `eco`, `c0`, `ce` and the counters; `--uho` keeps the unbalanced
/// ones instead; a bad line is refused naming its file and line.
#[test]
fn books_from_named_lines_carry_eco_name_and_score() {
    let dir = scratch("books-from-lines");
    std::fs::create_dir_all(&dir).unwrap();
    // Two quiet lines and one that gives White a queen.
    std::fs::write(
        dir.join("lines.tsv"),
        "eco\tname\tpgn\n\
         C20\tKing's Pawn Game\t1. e4 e5\n\
         D00\tQueen's Pawn Game\t1. d4 d5\n\
         A00\tQueen Blunder\t1. e4 e5 2. Qh5 Qg5 3. Qxg5\n",
    )
    .unwrap();
    let book = |extra: &[&str], out: &str| {
        let mut args = vec!["book", "--from", "lines.tsv", "--depth", "3", "--concurrency", "1"];
        args.extend_from_slice(&["--progress", "quiet", "--out", out]);
        args.extend_from_slice(extra);
        run_runner(&dir, &args)
    };
    let o = book(&["--window", "150"], "balanced.epd");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("balanced.epd")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - "));
    assert!(lines[0].contains("eco \"C20\"; c0 \"King's Pawn Game\"; ce "), "{}", lines[0]);
    assert!(lines[0].ends_with("hmvc 0; fmvn 2;"), "{}", lines[0]);
    assert!(lines[1].contains("eco \"D00\""), "{}", lines[1]);
    // The queen line: Black to move, a queen down: ce far below zero, kept only by --uho.
    let o = book(&["--uho", "500:2000"], "uho.epd");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("uho.epd")).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("c0 \"Queen Blunder\"") && text.contains(" b KQkq - "), "{text}");
    let ce: i32 = text.split("ce ").nth(1).unwrap().split(';').next().unwrap().parse().unwrap();
    assert!(ce < -500, "ce is from the side to move (Black, a queen down): {ce}");
    // The books play.
    let o = play(
        &dir,
        &dir.join("balanced.epd").to_string_lossy(),
        [&bundled("a"), &bundled("b")],
        &["--depth", "2"],
    );
    assert!(o.status.success(), "{}", stderr(&o));

    std::fs::write(dir.join("bad.tsv"), "eco\tname\tpgn\nA00\tOops\t1. e4 e5 2. Ke3\n").unwrap();
    let o = run_runner(&dir, &["book", "--from", "bad.tsv", "--depth", "2", "--out", "x.epd"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("bad.tsv:2: illegal move Ke3 after 2 plies"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!dir.join("x.epd").exists());
}

/// `runner book --out` never writes through a symbolic
/// link (it used to overwrite the link's target).
#[test]
fn book_out_refuses_a_symlink() {
    let dir = scratch("books-out-link");
    let target = dir.join("precious.txt");
    std::fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.join("960.epd")).unwrap();
    let o = run_runner(&dir, &["book", "--chess960", "--count", "3", "--out", "960.epd"]);
    assert!(!o.status.success(), "wrote through a symlink: {}", stderr(&o));
    assert!(stderr(&o).contains("960.epd: it is a symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
}

/// The standard start position as games.jsonl records it.
const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A run started from a folder without `openings/default.epd` (this scratch folder) plays the
/// default book built into the runner, not the start position; `--book startpos` asks for the
/// start position alone; a book file of one opening is played with a note saying so.
#[test]
fn the_default_book_is_built_in_and_one_position_is_asked_for() {
    let dir = scratch("books-builtin");
    assert!(!dir.join("openings").exists());
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let run = |out: &str, extra: &[&str]| {
        let mut more = vec!["--games", "8", "--maxmoves", "2", "--seed", "7"];
        more.extend_from_slice(extra);
        let o = run_runner(&dir, &e2e::match_args(&a, &b, out, &more));
        assert!(o.status.success(), "{}", stderr(&o));
        (o, read_games(&dir.join(out)), e2e::read_json(&dir.join(out).join("run.json")))
    };
    let (o, games, run_json) = run("builtin", &[]);
    assert!(!stderr(&o).contains("start position"), "{}", stderr(&o));
    let book = &run_json["plan"]["book"];
    assert_eq!(book["path"], "openings/default.epd", "{book}");
    assert!(book["openings"].as_u64().unwrap_or(0) > 1000, "{book}");
    let fens: std::collections::BTreeSet<&str> =
        games.iter().filter_map(|g| g["fen"].as_str()).collect();
    assert_eq!(fens.len(), 4, "four pairs, four openings: {fens:?}");
    assert!(!fens.contains(STARTPOS), "{fens:?}");

    let (o, games, run_json) = run("startpos", &["--book", "startpos"]);
    assert!(games.iter().all(|g| g["fen"] == STARTPOS), "{games:?}");
    assert_eq!(run_json["plan"]["book"]["openings"], 1);
    assert!(!stderr(&o).contains("note: book"), "{}", stderr(&o));

    let one = e2e::write_book(&dir, 1);
    let (o, games, _) = run("one", &["--book", &one]);
    assert!(
        stderr(&o).contains("holds one opening: every game pair starts from it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(games.len(), 8);
}
