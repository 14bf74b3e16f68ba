//! Syzygy tablebase adjudication (`--tb`): real games from few-piece openings
//! (tests/data/few_pieces.epd) into the repository's 3- and 4-piece tables (tests/data/syzygy),
//! every adjudicated result checked against python-chess's own prober (`chess.syzygy`) on the
//! final position; the same openings without `--tb` play to the end; bad tables stop the run
//! before any game; `runner fastchess -tb` runs.

use std::path::{Path, PathBuf};

use e2e::python::python_chess;
use e2e::*;
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(rel)
}

fn tables() -> String {
    data("syzygy").display().to_string()
}

fn book() -> String {
    data("few_pieces.epd").display().to_string()
}

/// Replays each record on python-chess and checks each tablebase adjudication against
/// `chess.syzygy` (tables in `argv[1]`, `--tbpieces` `argv[2]`, `--tbignore50` when `argv[3]`
/// is 1): the final position's piece count, castling rights, WDL and halfmove clock are the
/// record's, and the result is the one the rule gives (see play/tablebase.rs): draw, cursed win
/// and blessed loss are draws; a win or loss is decisive at clock 0, and above 0 only when
/// |DTZ| + clock <= 100 (a draw when it is more), and only at clock 0 when the run had no DTZ
/// tables (`argv[4]` 0). Prints the number of adjudicated games.
const CHECK: &str = r#"
import json, sys
import chess, chess.syzygy
tb = chess.syzygy.open_tablebase(sys.argv[1])
limit, ignore50, dtz_tables = int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1"
names = {-2: "loss", -1: "blessed-loss", 0: "draw", 1: "cursed-win", 2: "win"}
n = 0
for line in sys.stdin:
    r = json.loads(line)
    b = chess.Board(r["fen"])
    for m in r["moves"]:
        b.push_uci(m)
    if r["termination"] != "adjudication-tablebase":
        assert "tablebase" not in r, r
        continue
    n += 1
    t = r["tablebase"]
    where = f'{r["fen"]} {" ".join(r["moves"])} -> {b.fen()}'
    assert not b.is_game_over(claim_draw=False), where
    assert not b.castling_rights, where
    pieces = chess.popcount(b.occupied)
    assert pieces == t["pieces"] and pieces <= limit, (where, t)
    assert t["halfmoves"] == b.halfmove_clock, (where, t)
    assert t["turn"] == ("white" if b.turn else "black"), (where, t)
    wdl = tb.probe_wdl(b)
    assert names[wdl] == t["wdl"], (where, t, wdl)
    mover = "1-0" if b.turn == chess.WHITE else "0-1"
    other = "0-1" if b.turn == chess.WHITE else "1-0"
    decisive = mover if wdl > 0 else other
    if ignore50:
        want = "1/2-1/2" if wdl == 0 else decisive
    elif abs(wdl) < 2:
        want = "1/2-1/2"
    elif b.halfmove_clock == 0:
        want = decisive
    elif not dtz_tables:
        assert False, ("decided at a clock above 0 without DTZ tables", where, t)
    else:
        dtz = tb.probe_dtz(b)
        want = decisive if abs(dtz) + b.halfmove_clock <= 100 else "1/2-1/2"
    assert r["result"] == want, (where, t, r["result"], want)
print(n)
"#;

/// Checks every record of `games` with [`CHECK`] and returns how many the tables ended.
fn check_with_python(games: &[Value], pieces: u32, ignore50: bool) -> usize {
    check_tables(games, pieces, ignore50, true)
}

/// [`check_with_python`], for a run with (`dtz`) or without DTZ tables.
fn check_tables(games: &[Value], pieces: u32, ignore50: bool, dtz: bool) -> usize {
    let lines: String = games.iter().map(|g| format!("{g}\n")).collect();
    let flag = |b: bool| if b { "1" } else { "0" }.to_string();
    let args = [tables(), pieces.to_string(), flag(ignore50), flag(dtz)];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = python_chess(
        "python-chess disagrees with a tablebase adjudication",
        CHECK,
        &args,
        Some(&lines),
    );
    out.parse().expect("python prints a count")
}

fn terminations(games: &[Value]) -> Vec<String> {
    games.iter().map(|g| g["termination"].as_str().unwrap_or("").to_string()).collect()
}

fn mean_plies(games: &[Value]) -> f64 {
    let total: u64 = games.iter().map(|g| g["plies"].as_u64().unwrap_or(0)).sum();
    total as f64 / games.len().max(1) as f64
}

/// A match of `a` against `b` on the few-piece book at `nodes` nodes a move, with `extra`.
fn few_piece_match(name: &str, a: &str, b: &str, nodes: &str, extra: &[&str]) -> Vec<Value> {
    book_match(name, (a, b), nodes, 64, extra).0
}

/// [`few_piece_match`] of `games` games; also returns the run's stderr.
fn book_match(
    name: &str,
    (a, b): (&str, &str),
    nodes: &str,
    games: usize,
    extra: &[&str],
) -> (Vec<Value>, String) {
    let dir = scratch(name);
    let out = dir.join("out");
    let book = book();
    let count = games.to_string();
    let mut rest = vec![
        "--book",
        book.as_str(),
        "--book-order",
        "sequential",
        "--nodes",
        nodes,
        "--games",
        &count,
        "--concurrency",
        "2",
        "--seed",
        "47",
    ];
    rest.extend_from_slice(extra);
    let args = match_args(a, b, out.to_str().expect("utf-8 path"), &rest);
    let o = ok(run_runner(&dir, &args), name);
    let games = read_games(&out);
    assert_eq!(games.len(), count.parse::<usize>().unwrap_or(0), "{name}: every game");
    let pgn = read_text(&out.join("games.pgn"));
    let by_tb = games.iter().filter(|g| g["termination"] == "adjudication-tablebase").count();
    assert_eq!(pgn.matches("[TerminationDetails \"adjudication-tablebase\"]").count(), by_tb);
    assert_eq!(pgn.matches("by adjudication: SyzygyTB, ").count(), by_tb, "the PGN comment");
    let summary = read_json(&out.join("summary.json"));
    let counted = &summary["pairings"][0]["terminations"]["adjudication-tablebase"];
    assert_eq!(counted.as_u64().unwrap_or(0), by_tb as u64, "summary.json counts them: {summary}");
    (games, stderr(&o))
}

/// Without DTZ tables (a copy of the WDL tables alone), a won or lost position is adjudicated
/// only at halfmove clock 0; the run says so in a note. The book's last 8 openings are 4-piece
/// ones, half of them at clock 30.
#[test]
fn without_dtz_tables_wins_wait_for_a_capture_or_pawn_move() {
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let dir = scratch("tb-wdl-only");
    let wdl = broken_copy(&dir, |d| {
        for e in std::fs::read_dir(d).expect("copy").flatten() {
            if e.path().extension().is_some_and(|x| x == "rtbz") {
                std::fs::remove_file(e.path()).expect("removing a DTZ table");
            }
        }
    });
    let extra = ["--tb", wdl.as_str(), "--book-start", "25"];
    let (games, err) = book_match("tb-wdl-only-run", (&engine, &engine), "2000", 16, &extra);
    assert!(err.contains("note: no DTZ tables"), "{err}");
    let adjudicated = check_tables(&games, 4, false, false);
    assert!(adjudicated >= 8, "only {adjudicated} of 16 games ended by the tables");
}

/// The bundled engine against itself: games from 4- and 5-piece openings end as soon as the
/// tables know the result, every result is python-chess's; without `--tb` the same openings
/// play to the end, longer, and none ends by the tables.
#[test]
fn bundled_engine_games_end_by_the_tables_as_python_chess_probes_them() {
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let tb = tables();
    let with = few_piece_match("tb-bundled", &engine, &engine, "2000", &["--tb", &tb]);
    let adjudicated = check_with_python(&with, 4, false);
    // The 16 four-piece openings alone are probed after the first move: at least those whose
    // clock is 0, 8 openings x 2 games, end by the tables; the 5-piece ones once a capture
    // leaves 4 pieces.
    assert!(adjudicated >= 16, "only {adjudicated} of 64 games ended by the tables");
    let without = few_piece_match("tb-bundled-none", &engine, &engine, "2000", &[]);
    assert!(!terminations(&without).iter().any(|t| t == "adjudication-tablebase"));
    assert_eq!(check_with_python(&without, 4, false), 0);
    for g in &without {
        let t = g["termination"].as_str().unwrap_or("");
        assert!(
            ["checkmate", "stalemate", "threefold", "fifty-move", "insufficient-material"]
                .contains(&t),
            "without --tb a game ends by the rules: {g}"
        );
    }
    assert!(
        mean_plies(&with) < mean_plies(&without),
        "tablebase adjudication shortens the games: {} vs {} plies",
        mean_plies(&with),
        mean_plies(&without)
    );
}

/// Debian's stockfish against the bundled engine, `--tbignore50 --tbadjudicate win-loss`: only
/// won and lost positions end the game, as python-chess's tables say without the fifty-move
/// rule; `--tbpieces 3` probes 3-piece positions only.
#[test]
fn stockfish_games_adjudicate_wins_and_losses_only() {
    let stockfish = format!("name=stockfish,cmd={}", debian_engine("stockfish"));
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let tb = tables();
    let extra = ["--tb", &tb, "--tbignore50", "--tbadjudicate", "win-loss"];
    let games = few_piece_match("tb-stockfish", &stockfish, &engine, "5000", &extra);
    let adjudicated = check_with_python(&games, 4, true);
    assert!(adjudicated >= 8, "only {adjudicated} of 64 games ended by the tables");
    for g in games.iter().filter(|g| g["termination"] == "adjudication-tablebase") {
        assert_ne!(g["result"], "1/2-1/2", "win-loss adjudicates no draw: {g}");
    }
    let extra = ["--tb", &tb, "--tbpieces", "3", "--tbadjudicate", "draw"];
    let three = few_piece_match("tb-stockfish-3", &stockfish, &engine, "5000", &extra);
    check_with_python(&three, 3, false);
    for g in three.iter().filter(|g| g["termination"] == "adjudication-tablebase") {
        assert_eq!(g["tablebase"]["pieces"], 3, "{g}");
        assert_eq!(g["result"], "1/2-1/2", "draw adjudicates no win: {g}");
    }
}

/// A copy of the tables in `dir`, changed by `change` (a file removed, cut or overwritten).
fn broken_copy(dir: &Path, change: impl FnOnce(&Path)) -> String {
    let copy = dir.join("syzygy");
    std::fs::create_dir_all(&copy).expect("copy folder");
    for e in std::fs::read_dir(data("syzygy")).expect("tables").flatten() {
        std::fs::copy(e.path(), copy.join(e.file_name())).expect("copying a table");
    }
    change(&copy);
    copy.display().to_string()
}

/// Missing, incomplete, truncated or corrupt tables, and `--tbpieces` above them: one line
/// before any game.
#[test]
fn bad_tables_stop_the_run_before_any_game() {
    let engine = format!("name=engine,cmd={}", engine_bin().display());
    let book = book();
    let run = |name: &str, tb: &str, extra: &[&str], needle: &str| {
        let mut rest = vec!["--book", book.as_str(), "--nodes", "500", "--games", "2", "--tb", tb];
        rest.extend_from_slice(extra);
        let args = match_args(&engine, &engine, "out", &rest);
        fails_before_any_game(name, &args, needle);
    };
    run("tb-missing", "/nonexistent/syzygy", &[], "--tb /nonexistent/syzygy");
    let scratch_dir = scratch("tb-broken");
    let empty = scratch_dir.join("empty");
    std::fs::create_dir_all(&empty).expect("empty folder");
    run("tb-empty", empty.to_str().expect("utf-8"), &[], "no Syzygy WDL tables");
    let tb = tables();
    run("tb-too-few", &tb, &["--tbpieces", "5"], "holds tables up to 4 pieces, --tbpieces 5");
    let gone = broken_copy(&scratch_dir.join("gone"), |d| {
        std::fs::remove_file(d.join("KRvKP.rtbw")).expect("removing a table");
    });
    run("tb-incomplete", &gone, &[], "no WDL table for KRvKP");
    let cut = broken_copy(&scratch_dir.join("cut"), |d| {
        let f = d.join("KQvKR.rtbw");
        let bytes = std::fs::read(&f).expect("table");
        // A Syzygy file is 16 bytes past a multiple of 64: a file cut short elsewhere is
        // refused when the folder is opened. (A cut of whole 64-byte blocks passes that check;
        // a probe that reaches the missing part then warns and the game goes on unjudged.)
        std::fs::write(&f, &bytes[..bytes.len() - 100]).expect("cutting a table");
    });
    run("tb-truncated", &cut, &[], "unexpected file size");
    let bad = broken_copy(&scratch_dir.join("bad"), |d| {
        let f = d.join("KRvKN.rtbw");
        let mut bytes = std::fs::read(&f).expect("table");
        bytes[..4].copy_from_slice(b"junk");
        std::fs::write(&f, &bytes).expect("spoiling a table");
    });
    run("tb-corrupt", &bad, &[], "KRvKN cannot be read");
}

/// `runner fastchess -tb PATH -tbpieces 4`: the translated command carries the options, the
/// games end by the tables, and fastchess's lines say so as fastchess does.
#[test]
fn fastchess_tb_options_run() {
    let dir = scratch("tb-fastchess");
    let engine = engine_bin().display().to_string();
    let cmd = format!("cmd={engine}");
    let out = dir.join("out");
    let (book, tb) = (book(), tables());
    let args = [
        "fastchess",
        "-engine",
        &cmd,
        "name=a",
        "-engine",
        &cmd,
        "name=b",
        "-each",
        "nodes=2000",
        "-openings",
        &format!("file={book}"),
        "format=epd",
        "order=sequential",
        "start=25",
        "-rounds",
        "8",
        "-games",
        "2",
        "-tb",
        &tb,
        "-tbpieces",
        "4",
        "-output",
        "format=fastchess",
        "--",
        "--out",
        out.to_str().expect("utf-8 path"),
        "--progress",
        "quiet",
    ];
    let o = run_runner(&dir, &args);
    let err = stderr(&o);
    assert!(o.status.success(), "runner fastchess failed:\n{err}");
    assert!(err.lines().next().unwrap_or("").contains(&format!("--tb {tb} --tbpieces 4")), "{err}");
    let games = read_games(&out);
    assert_eq!(games.len(), 16);
    let adjudicated = check_with_python(&games, 4, false);
    assert!(adjudicated >= 8, "the 4-piece openings end by the tables: {adjudicated}");
    let text = stdout(&o);
    let said = text.lines().filter(|l| l.contains("by adjudication: SyzygyTB}")).count();
    assert_eq!(said, adjudicated, "fastchess's Finished game lines:\n{text}");
}
