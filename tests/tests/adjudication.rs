//! `--draw` and `--resign` end games at the ply cutechess-cli would, played by
//! scripted engines (`badengine script FILE`: a move and a score for every ply).
//!
//! How the counters work (as cutechess-cli's adjudicator counts; see play/adjudication.rs):
//! - `--draw movenumber=N,movecount=C,score=S`: one counter over both sides' plies, +1 for a ply
//!   whose mover scored within S cp of zero, 0 for any other ply; a capture or pawn move sets it
//!   to 0 and then counts its own ply (1). Drawn at the first ply where the counter is >= 2C and
//!   (plies from the opening's position) / 2 >= N.
//! - `--resign movecount=C,score=S[,twosided=true]`: per side, own moves in a row at or below -S
//!   (and at or above +S); a side loses at its own move that makes its count C, when (twosided)
//!   the other side's last C moves were all at or above +S.

use std::path::Path;

use e2e::{badengine_bin, match_args, run_games, scratch};
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position, Role};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A legal game of `scores.len()` plies from the start position, none a capture; ply k (0-based)
/// is a pawn move when `pawn[k]`, else a piece move. No position repeats and no move mates or
/// stalemates, so only adjudication (or `--maxmoves`) ends it.
fn scripted(scores: &[Option<i32>], pawn: &[usize]) -> String {
    let mut pos = Chess::default();
    let mut seen: Vec<Zobrist64> = vec![pos.zobrist_hash(EnPassantMode::Legal)];
    let mut text = String::new();
    for (k, score) in scores.iter().enumerate() {
        let want_pawn = pawn.contains(&k);
        let mv = pos
            .legal_moves()
            .into_iter()
            .filter(|m| !m.is_capture() && (m.role() == Role::Pawn) == want_pawn)
            .find(|m| {
                let mut p = pos.clone();
                p.play_unchecked(*m);
                let fresh = !seen.contains(&p.zobrist_hash(EnPassantMode::Legal));
                fresh && !p.is_game_over() && !p.is_check()
            })
            .unwrap_or_else(|| panic!("no scripted move at ply {k}"));
        pos.play_unchecked(mv);
        seen.push(pos.zobrist_hash(EnPassantMode::Legal));
        let score = score.map_or("none".to_string(), |s| s.to_string());
        let uci = UciMove::from_move(mv, CastlingMode::Standard);
        text.push_str(&format!("{uci} {score}\n"));
    }
    text
}

/// Plays one game pair of two scripted engines (both answer from the same script, so both
/// games are the same game) with `rules`, and returns each game's (plies, termination, result).
fn play(name: &str, script: &str, rules: &[&str]) -> Vec<(u64, String, String)> {
    let dir = scratch(name);
    let file = dir.join("script.txt");
    std::fs::write(&file, script).unwrap();
    std::fs::write(dir.join("book.epd"), format!("{START}\n")).unwrap();
    let spec = |n: &str| {
        format!("name={n},cmd={},arg=script,arg={}", badengine_bin().display(), file.display())
    };
    let (a, b) = (spec("a"), spec("b"));
    let mut extra =
        vec!["--nodes", "1", "--games", "2", "--book", "book.epd", "--concurrency", "1"];
    extra.extend_from_slice(rules);
    extra.extend(["--maxmoves", "20"]);
    let games = run_games(&dir, &match_args(&a, &b, "out", &extra), &Path::new(&dir).join("out"));
    assert_eq!(games.len(), 2, "{name}: two games");
    games
        .iter()
        .map(|g| {
            let s = |k: &str| g[k].as_str().unwrap_or_default().to_string();
            (g["plies"].as_u64().unwrap(), s("termination"), s("result"))
        })
        .collect()
}

fn both(ending: (u64, &str, &str)) -> Vec<(u64, String, String)> {
    let one = (ending.0, ending.1.to_string(), ending.2.to_string());
    vec![one.clone(), one]
}

const DRAWN: &str = "adjudication-draw";
const RESIGNED: &str = "adjudication-resign";

/// movecount=3: the sixth quiet ply draws (the fifth did not); a ply outside the window at ply
/// 6 starts over (drawn at 12); a pawn move at ply 6 starts over counting itself (drawn at 11,
/// where the runner before this change drew at ply 6).
#[test]
fn draw_counts_plies_and_restarts_on_pawn_moves_as_cutechess() {
    let rule = ["--draw", "movenumber=1,movecount=3,score=10"];
    let quiet = vec![Some(0); 40];
    assert_eq!(play("draw-quiet", &scripted(&quiet, &[]), &rule), both((6, DRAWN, "1/2-1/2")));
    let mut loud = quiet.clone();
    loud[5] = Some(11);
    assert_eq!(play("draw-loud", &scripted(&loud, &[]), &rule), both((12, DRAWN, "1/2-1/2")));
    let pawn = scripted(&quiet, &[5]);
    assert_eq!(play("draw-pawn", &pawn, &rule), both((11, DRAWN, "1/2-1/2")));
    // movenumber=5 waits for ply 10 though the counter (movecount=1) is high from ply 2.
    let late = ["--draw", "movenumber=5,movecount=1,score=10"];
    assert_eq!(play("draw-late", &scripted(&quiet, &[]), &late), both((10, DRAWN, "1/2-1/2")));
}

/// White scores -600 on each of its moves, Black +600: one-sided, White resigns at its third
/// move (ply 5); twosided it waits until Black's last three moves agree (ply 7), and one Black
/// move at +599 (ply 4) puts it off to ply 11.
#[test]
fn resign_and_twosided_resign_end_where_cutechess_does() {
    let scores: Vec<Option<i32>> =
        (0..40).map(|k| Some(if k % 2 == 0 { -600 } else { 600 })).collect();
    let script = scripted(&scores, &[]);
    let one = ["--resign", "movecount=3,score=600"];
    assert_eq!(play("resign", &script, &one), both((5, RESIGNED, "0-1")));
    let two = ["--resign", "movecount=3,score=600,twosided=true"];
    assert_eq!(play("resign-two", &script, &two), both((7, RESIGNED, "0-1")));
    let mut doubt = scores.clone();
    doubt[3] = Some(599);
    let later = play("resign-doubt", &scripted(&doubt, &[]), &two);
    assert_eq!(later, both((11, RESIGNED, "0-1")));
}
