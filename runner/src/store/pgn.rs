//! Writing finished games as PGN.
//!
//! Moves arrive in UCI notation and are replayed with shakmaty to produce SAN, so a move that is
//! not legal in its position can never reach a PGN file: it is an error instead.

use std::fmt::Write as _;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingSide, Chess, Color, EnPassantMode, Move, Position};

use crate::plan::openings::{STARTPOS_FEN, position_for};
use crate::plan::variant::Variant;
use crate::play::uci_info::Eval;

/// One move and its optional comment (written as `{comment}` after the move).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnMove {
    pub uci: String,
    pub comment: Option<String>,
}

/// A game ready to be written. The Seven Tag Roster comes from the named fields; `tags` are
/// written after them in order (SetUp/FEN and PlyCount are added by the writer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    pub event: String,
    pub site: String,
    /// `YYYY.MM.DD`
    pub date: String,
    pub round: String,
    pub white: String,
    pub black: String,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`
    pub result: String,
    /// Root position of the game (the opening's FEN, before any book move).
    pub start_fen: String,
    /// Chess960 games get `[Variant "Chess960"]` and always a FEN tag.
    pub variant: Variant,
    pub tags: Vec<(String, String)>,
    pub moves: Vec<PgnMove>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PgnError {
    #[error("invalid start position: {0}")]
    BadFen(String),
    #[error("move {ply} ({uci}) is not legal in its position")]
    IllegalMove { ply: usize, uci: String },
}

/// An engine's evaluation of a position, from its own point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

impl Eval {
    /// The evaluation as a PGN comment's score.
    pub fn to_pgn_score(self) -> Score {
        match self {
            Eval::Cp(c) => Score::Cp(c),
            Eval::Mate(m) => Score::Mate(m),
        }
    }
}

/// The move comment cutechess-cli users know: `+0.31/12 0.153s`, `-M5/20 0.100s`; without a score
/// only the time is written.
pub fn comment_for_move(score: Option<Score>, depth: Option<u32>, time_ms: u64) -> String {
    let time = format!("{}.{:03}s", time_ms / 1000, time_ms % 1000);
    let Some(score) = score else { return time };
    let value = match score {
        Score::Cp(cp) => {
            let sign = if cp < 0 { '-' } else { '+' };
            let abs = cp.unsigned_abs();
            format!("{sign}{}.{:02}", abs / 100, abs % 100)
        }
        Score::Mate(n) => format!("{}M{}", if n < 0 { '-' } else { '+' }, n.unsigned_abs()),
    };
    match depth {
        Some(d) => format!("{value}/{d} {time}"),
        None => format!("{value} {time}"),
    }
}

/// How moves are written: SAN (`Nf3`), long algebraic (`Ng1f3`, `e4xd5`, `e7e8=Q`, as
/// fastchess's `notation=lan`) or UCI (`g1f3`, as the engines sent them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Notation {
    #[default]
    San,
    Lan,
    Uci,
}

impl Notation {
    pub fn parse(s: &str) -> Option<Notation> {
        match s {
            "san" => Some(Notation::San),
            "lan" => Some(Notation::Lan),
            "uci" => Some(Notation::Uci),
            _ => None,
        }
    }
}

/// How a game is written: the move notation, and whether it is minimal (fastchess's `min=true`:
/// the Seven Tag Roster with Variant/SetUp/FEN, no other tag, no comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgnStyle {
    pub notation: Notation,
    pub min: bool,
}

/// Long algebraic notation of the legal move `m` in `pos` (played on `pos`): piece letter (none
/// for pawns), from square, `x` for captures, to square, `=Q` for promotions, `+`/`#`; castling
/// as `O-O`/`O-O-O`.
fn lan_and_play(pos: &mut Chess, m: Move) -> String {
    let mut s = match m.castling_side() {
        Some(CastlingSide::KingSide) => "O-O".to_string(),
        Some(CastlingSide::QueenSide) => "O-O-O".to_string(),
        None => {
            let mut s = String::new();
            if m.role() != shakmaty::Role::Pawn {
                s.push(m.role().upper_char());
            }
            if let Some(from) = m.from() {
                s.push_str(&from.to_string());
            }
            if m.is_capture() {
                s.push('x');
            }
            s.push_str(&m.to().to_string());
            if let Some(p) = m.promotion() {
                s.push('=');
                s.push(p.upper_char());
            }
            s
        }
    };
    pos.play_unchecked(m);
    if pos.is_check() {
        s.push(if pos.legal_moves().is_empty() { '#' } else { '+' });
    }
    s
}

/// Escapes a tag value (backslash and double quote).
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Renders one game as PGN text ending in a blank line (SAN, with tags and comments).
pub fn to_pgn(game: &PgnGame) -> Result<String, PgnError> {
    to_pgn_styled(game, PgnStyle::default())
}

/// [`to_pgn`] in a given notation, or minimal.
pub fn to_pgn_styled(game: &PgnGame, style: PgnStyle) -> Result<String, PgnError> {
    let root =
        position_for(&game.start_fen, game.variant).map_err(|e| PgnError::BadFen(e.to_string()))?;
    let root_fen = Fen::from_position(&root, EnPassantMode::Legal).to_string();

    let mut out = String::new();
    for (name, value) in [
        ("Event", &game.event),
        ("Site", &game.site),
        ("Date", &game.date),
        ("Round", &game.round),
        ("White", &game.white),
        ("Black", &game.black),
        ("Result", &game.result),
    ] {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
    }
    if let Some(variant) = game.variant.pgn_tag() {
        let _ = writeln!(out, "[Variant \"{variant}\"]");
    }
    if root_fen != STARTPOS_FEN || game.variant.is_chess960() {
        let _ = writeln!(out, "[SetUp \"1\"]");
        let _ = writeln!(out, "[FEN \"{root_fen}\"]");
    }
    if !style.min {
        for (name, value) in &game.tags {
            let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
        }
        let _ = writeln!(out, "[PlyCount \"{}\"]", game.moves.len());
    }
    out.push('\n');

    let mut tokens = Vec::with_capacity(game.moves.len() * 3 + 1);
    let mut pos: Chess = root;
    let mut need_number = true;
    for (ply, mv) in game.moves.iter().enumerate() {
        let illegal = || PgnError::IllegalMove { ply: ply + 1, uci: mv.uci.clone() };
        let uci: UciMove = mv.uci.parse().map_err(|_| illegal())?;
        let m = uci.to_move(&pos).map_err(|_| illegal())?;
        let number = pos.fullmoves().get();
        match pos.turn() {
            Color::White => tokens.push(format!("{number}.")),
            Color::Black if need_number => tokens.push(format!("{number}...")),
            Color::Black => {}
        }
        tokens.push(match style.notation {
            Notation::San => SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string(),
            Notation::Lan => lan_and_play(&mut pos, m),
            Notation::Uci => {
                pos.play_unchecked(m);
                mv.uci.clone()
            }
        });
        need_number = false;
        if let Some(comment) = mv.comment.as_ref().filter(|_| !style.min) {
            tokens.push(format!("{{{}}}", comment.replace('}', ")")));
            need_number = true;
        }
    }
    tokens.push(game.result.clone());

    let mut line_len = 0;
    for token in tokens {
        if line_len > 0 && line_len + 1 + token.len() > 79 {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        line_len += token.len();
        out.push_str(&token);
    }
    out.push_str("\n\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(start_fen: &str, moves: &[(&str, Option<&str>)]) -> PgnGame {
        PgnGame {
            event: "Test \"quoted\"".into(),
            site: "here".into(),
            date: "2026.11.22".into(),
            round: "1.2".into(),
            white: "A".into(),
            black: "B".into(),
            result: "1/2-1/2".into(),
            start_fen: start_fen.into(),
            variant: Variant::Standard,
            tags: vec![("Termination".into(), "adjudication".into())],
            moves: moves
                .iter()
                .map(|(u, c)| PgnMove { uci: u.to_string(), comment: c.map(str::to_string) })
                .collect(),
        }
    }

    #[test]
    fn comments_format_like_cutechess() {
        assert_eq!(comment_for_move(Some(Score::Cp(31)), Some(12), 153), "+0.31/12 0.153s");
        assert_eq!(comment_for_move(Some(Score::Cp(-5)), Some(3), 2000), "-0.05/3 2.000s");
        assert_eq!(comment_for_move(Some(Score::Mate(-4)), Some(20), 100), "-M4/20 0.100s");
        assert_eq!(comment_for_move(None, None, 7), "0.007s");
    }

    #[test]
    fn standard_game_has_no_fen_and_numbers_after_comments() {
        let pgn = to_pgn(&game(
            STARTPOS_FEN,
            &[
                ("e2e4", Some("book")),
                ("e7e5", Some("book")),
                ("g1f3", None),
                ("b8c6", Some("+0.10/5 0.010s")),
            ],
        ))
        .unwrap();
        assert!(!pgn.contains("[FEN"), "{pgn}");
        assert!(pgn.contains("[Event \"Test \\\"quoted\\\"\"]"), "{pgn}");
        assert!(pgn.contains("[PlyCount \"4\"]"), "{pgn}");
        assert!(
            pgn.contains("1. e4 {book} 1... e5 {book} 2. Nf3 Nc6 {+0.10/5 0.010s} 1/2-1/2"),
            "{pgn}"
        );
    }

    #[test]
    fn black_to_move_start_keeps_counters_and_castles_in_san() {
        let fen = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 17";
        let pgn = to_pgn(&game(fen, &[("e8c8", None), ("e1g1", None)])).unwrap();
        assert!(
            pgn.contains("[SetUp \"1\"]\n[FEN \"r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 17\"]"),
            "{pgn}"
        );
        assert!(pgn.contains("17... O-O-O 18. O-O 1/2-1/2"), "{pgn}");
    }

    #[test]
    fn long_algebraic_and_uci_notation_and_minimal_games() {
        let moves = [
            ("e2e4", Some("book")),
            ("d7d5", None),
            ("e4d5", None),
            ("d8d5", None),
            ("b1c3", None),
            ("d5e5", None),
            ("g1e2", None),
            ("e5e2", Some("+9.00/1 0.001s")),
        ];
        let g = game(STARTPOS_FEN, &moves);
        let lan = PgnStyle { notation: Notation::Lan, min: false };
        let pgn = to_pgn_styled(&g, lan).unwrap();
        assert!(
            pgn.contains(
                "1. e2e4 {book} 1... d7d5 2. e4xd5 Qd8xd5 3. Nb1c3 Qd5e5+ 4. Ng1e2 Qe5xe2+"
            ),
            "{pgn}"
        );
        let uci = PgnStyle { notation: Notation::Uci, min: true };
        let pgn = to_pgn_styled(&g, uci).unwrap();
        assert!(
            pgn.contains("1. e2e4 d7d5 2. e4d5 d8d5 3. b1c3 d5e5 4. g1e2 e5e2 1/2-1/2"),
            "{pgn}"
        );
        assert!(!pgn.contains('{') && !pgn.contains("PlyCount") && !pgn.contains("Termination"));
        assert!(pgn.contains("[Result \"1/2-1/2\"]\n\n1. e2e4"), "{pgn}");
        // Castling and promotion in long algebraic notation.
        let g = game(
            "4k3/1P6/8/8/8/8/8/4K2R w K - 0 1",
            &[("e1g1", None), ("e8d7", None), ("b7b8q", None)],
        );
        let pgn = to_pgn_styled(&g, lan).unwrap();
        assert!(pgn.contains("1. O-O Ke8d7 2. b7b8=Q"), "{pgn}");
    }

    #[test]
    fn illegal_moves_never_reach_the_pgn() {
        let err = to_pgn(&game(STARTPOS_FEN, &[("e2e4", None), ("e2e4", None)])).unwrap_err();
        assert_eq!(err, PgnError::IllegalMove { ply: 2, uci: "e2e4".into() });
        assert!(to_pgn(&game(STARTPOS_FEN, &[("zz", None)])).is_err());
    }

    #[test]
    fn long_games_wrap_lines() {
        let moves: Vec<(&str, Option<&str>)> = ["g1f3", "g8f6", "f3g1", "f6g8"]
            .iter()
            .cycle()
            .take(40)
            .map(|m| (*m, Some("+0.00/10 0.100s")))
            .collect();
        let pgn = to_pgn(&game(STARTPOS_FEN, &moves)).unwrap();
        assert!(pgn.lines().all(|l| l.len() <= 80 || l.starts_with('[')), "{pgn}");
    }
    #[test]
    fn chess960_games_are_tagged_and_castle_king_takes_rook() {
        let fen = "2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1";
        let mut g = game(fen, &[("b1a1", None)]);
        assert!(to_pgn(&g).is_err(), "standard chess has no such castling rights");
        g.variant = Variant::Fischerandom;
        let pgn = to_pgn(&g).unwrap();
        assert!(pgn.contains("[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"2rkr3/2p1p3/8/8/8/8/8/RK6 w Q - 0 1\"]"), "{pgn}");
        assert!(pgn.contains("1. O-O-O# 1/2-1/2"), "{pgn}");
        let mut g = game(STARTPOS_FEN, &[("e2e4", None)]);
        g.variant = Variant::Fischerandom;
        assert!(to_pgn(&g).unwrap().contains(&format!("[FEN \"{STARTPOS_FEN}\"]")));
    }
}
