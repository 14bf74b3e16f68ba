//! `--pgnout`, `--epdout`, `--event`, `--site` and `--output cutechess|fastchess`: the extra
//! files are read back with python-chess, the output lines with the regular expressions a script
//! would use.

use std::path::Path;

use e2e::python::python_chess;
use e2e::*;

/// Reads a PGN with python-chess: every game without errors, Event/Site as given, the moves
/// (replayed legally) equal to games.jsonl's, comments as the variant says; the EPD file's
/// positions equal each game's final board. Prints the number of games.
const CHECK: &str = r#"
import sys, json, re, chess, chess.pgn
pgn_path, jsonl_path, epd_path, mode = sys.argv[1:5]
records = [json.loads(l) for l in open(jsonl_path) if l.strip()]
by_round = {"%d.%d" % (r["pair"] + 1, r["game"] + 1): r for r in records}
epds = [l.strip() for l in open(epd_path) if l.strip()]
finals = set()
comment_re = re.compile(
    r'^([+-]?\d+\.\d\d|[+-]M\d+)?/\d+ \d+\.\d{3}s'
    r'(, tl=\d+\.\d{3}s)?(, latency=-?\d+\.\d{3}s)?(, n=\d+)?(, sd=\d+)?(, nps=\d+)?'
    r'(, hashfull=\d+)?(, pv="[a-h1-8qrbn ]*")?(, [a-z -]+)?$')
f = open(pgn_path)
n = 0
while True:
    g = chess.pgn.read_game(f)
    if g is None:
        break
    n += 1
    assert not g.errors, g.errors
    h = g.headers
    assert h["Event"] == "Spring cup" and h["Site"] == "Test site", h
    rec = by_round[h["Round"]]
    assert h["White"] == rec["white"] and h["Result"] == rec["result"], (h, rec)
    board = g.board()
    moves = []
    for node in g.mainline():
        assert board.is_legal(node.move), (node.move, board.fen())
        moves.append(node.move.uci())
        board.push(node.move)
        c = node.comment
        if mode == "min":
            assert c == "", c
        elif c != "book":
            assert comment_re.match(c), repr(c)
            if mode == "all":
                for key in ("tl=", "latency=", "n=", "sd=", "nps=", "hashfull=", 'pv="'):
                    assert key in c, (key, c)
    assert moves == rec["moves"], (moves, rec["moves"])
    if mode == "min":
        assert "PlyCount" not in h and "Termination" not in h, h
    else:
        assert h["PlyCount"] == str(len(moves)), h
    finals.add(board.epd(hmvc=board.halfmove_clock, fmvn=board.fullmove_number))
assert n == len(records), (n, len(records))
for e in epds:
    b, ops = chess.Board.from_epd(e)
    assert "hmvc" in ops and "fmvn" in ops, ops
    assert b.epd(hmvc=ops["hmvc"], fmvn=ops["fmvn"]) in finals, (e, finals)
assert len(epds) == n, (len(epds), n)
print(n)
"#;

/// A short match of the bundled engine (two settings) with `extra` flags into `dir/name`.
fn play(dir: &Path, name: &str, extra: &[&str]) -> std::process::Output {
    let engine = engine_bin();
    let a = format!("name=A,cmd={},option.LMR=false", engine.display());
    let b = format!("name=B,cmd={}", engine.display());
    // Four games unless the caller gives its own --games.
    let games = if extra.contains(&"--games") { &[][..] } else { &["--games", "4"][..] };
    let mut limits = vec!["--nodes", "2000"];
    limits.extend(games);
    let mut args = match_args(&a, &b, name, &limits);
    args.extend([
        "--seed",
        "7",
        "--concurrency",
        "2",
        "--maxmoves",
        "25",
        "--event",
        "Spring cup",
        "--site",
        "Test site",
    ]);
    args.extend_from_slice(extra);
    run_runner(dir, &args)
}

#[test]
fn every_pgnout_variant_reads_cleanly_in_python_chess() {
    let dir = scratch("pgnout-variants");
    let variants = [
        (
            "all",
            "notation=san,nodes=true,seldepth=true,nps=true,hashfull=true,pv=true,timeleft=true,latency=true",
        ),
        ("lan", "notation=lan"),
        ("uci", "notation=uci,pv=true"),
        ("min", "min=true"),
    ];
    for (mode, keys) in variants {
        let out = format!("run-{mode}");
        let spec = format!("file=extra/{mode}.pgn,append=false,{keys}");
        let epd = format!("extra/{mode}.epd");
        ok(play(&dir, &out, &["--pgnout", &spec, "--epdout", &epd]), mode);
        let pgn = dir.join(format!("extra/{mode}.pgn"));
        let jsonl = dir.join(&out).join("games.jsonl");
        let epd = dir.join(&epd);
        let n = python_chess(
            "python-chess rejected the files",
            CHECK,
            &[pgn.to_str().unwrap(), jsonl.to_str().unwrap(), epd.to_str().unwrap(), mode],
            None,
        );
        assert_eq!(n, "4", "{mode}");
        // The run folder's games.pgn has the tags too, and its own comments.
        let own = read_text(&dir.join(&out).join("games.pgn"));
        assert!(own.contains("[Event \"Spring cup\"]\n[Site \"Test site\"]"), "{own}");
    }
    // The engine's info lines reached games.jsonl.
    let records = read_games(&dir.join("run-all"));
    let info = &records[0]["move_info"];
    assert!(
        info["nodes"].as_array().is_some_and(|v| v.iter().any(|x| x.as_u64() > Some(0))),
        "{info}"
    );
    assert!(info["pvs"].as_array().is_some_and(|v| v.iter().any(|x| x.is_string())), "{info}");
}

#[test]
fn append_false_on_resume_keeps_the_games_and_append_true_adds() {
    let dir = scratch("pgnout-resume");
    let spec = "file=out.pgn,append=false";
    ok(play(&dir, "run", &["--pgnout", spec, "--epdout", "out.epd"]), "first run");
    let count = |f: &str| read_text(&dir.join(f)).matches("[Event ").count();
    assert_eq!(count("out.pgn"), 4);
    // A resume of the finished run: append=false rewrites the file from games.jsonl.
    ok(play(&dir, "run", &["--pgnout", spec, "--resume"]), "resume");
    assert_eq!(count("out.pgn"), 4, "a resume must not lose the games");
    // append=true (the default) adds a second run's games.
    ok(play(&dir, "run2", &["--pgnout", "file=out.pgn"]), "second run");
    assert_eq!(count("out.pgn"), 8);
    // A symbolic link is refused in one line, before any game.
    std::os::unix::fs::symlink("out.pgn", dir.join("link.pgn")).unwrap();
    let o = play(&dir, "run3", &["--pgnout", "file=link.pgn"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("symbolic link") && !dir.join("run3/games.jsonl").exists());
}

/// What a script does with cutechess-cli's and fastchess's output: regular expressions over
/// stdout. Prints what it found.
const PARSE: &str = r#"
import sys, re
text = sys.stdin.read()
style = sys.argv[1]
if style == "cutechess":
    scores = re.findall(r"^Score of (\S+) vs (\S+): (\d+) - (\d+) - (\d+)  \[([\d.]+)\] (\d+)$", text, re.M)
    elo = re.findall(r"^Elo difference: (-?[\d.]+|-?inf) \+/- ([\d.]+|nan), LOS: ([\d.]+|nan) %, DrawRatio: ([\d.]+) %$", text, re.M)
    sprt = re.findall(r"^SPRT: llr (-?[\d.]+) \((-?[\d.]+)%\), lbound (-?[\d.]+), ubound ([\d.]+)", text, re.M)
    last = scores[-1]
    assert int(last[2]) + int(last[3]) + int(last[4]) == int(last[6]), last
    print(len(scores), len(elo), len(sprt), last[6], sprt[-1][2], sprt[-1][3])
else:
    res = re.findall(r"^Results of (\S+) vs (\S+) \((.*)\):$", text, re.M)
    elo = re.findall(r"^Elo: (-?[\d.]+|nan) \+/- ([\d.]+|nan), nElo: (-?[\d.]+|nan) \+/- ([\d.]+|nan)$", text, re.M)
    games = re.findall(r"^Games: (\d+), Wins: (\d+), Losses: (\d+), Draws: (\d+), Points: ([\d.]+) \(([\d.]+) %\)$", text, re.M)
    ptnml = re.findall(r"^Ptnml\(0-2\): \[(\d+), (\d+), (\d+), (\d+), (\d+)\]", text, re.M)
    llr = re.findall(r"^LLR: (-?[\d.]+) \((-?[\d.]+)%\) \((-?[\d.]+), ([\d.]+)\) \[([\d.]+), ([\d.]+)\]$", text, re.M)
    assert sum(map(int, ptnml[-1])) * 2 == int(games[-1][0]), (ptnml, games)
    print(len(res), len(elo), len(games), len(llr), games[-1][0], llr[-1][4], llr[-1][5])
"#;

fn parse(style: &str, stdout: &str) -> String {
    python_chess("the output lines did not parse", PARSE, &[style], Some(stdout))
}

#[test]
fn cutechess_and_fastchess_output_lines_parse_with_their_regexes() {
    let dir = scratch("output-lines");
    let sprt = ["--sprt", "elo0=0,elo1=10", "--games", "8"];
    let mut args = vec!["--output", "cutechess", "--ratinginterval", "4"];
    args.extend(sprt);
    let o = ok(play(&dir, "cute", &args), "cutechess output");
    let out = stdout(&o);
    // 8 games: a score line each, Elo and SPRT at 4 and 8 (not again at the end).
    assert_eq!(parse("cutechess", &out), "8 2 2 8 -2.94 2.94", "{out}");
    assert!(out.lines().last() == Some("Finished match"), "{out}");
    assert!(!out.contains("results:"), "the runner's own lines go to stderr: {out}");
    assert!(!out.contains("page:"), "the page's line goes to stderr too: {out}");
    let mut args = vec!["--output", "fastchess", "--scoreinterval", "0"];
    args.extend(sprt);
    let o = ok(play(&dir, "fast", &args), "fastchess output");
    let out = stdout(&o);
    assert!(!out.contains("Score of"), "{out}");
    // Blocks every 10 games (none in 8) and at the end.
    assert_eq!(parse("fastchess", &out), "1 1 1 1 8 0.00 10.00", "{out}");
    assert!(out.contains("Results of A vs B (2000 nodes, NULL, NULL, default.epd):"), "{out}");
}
