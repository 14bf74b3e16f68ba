//! Opening books: EPD and PGN files read into start positions, and the order in which a run uses
//! them.
//!
//! An [`Opening`] is a root position (a full FEN, move counters included) plus the book moves
//! played from it (PGN books; EPD openings have none). Every position is checked with shakmaty
//! while loading, so a game never starts from an illegal or unparsable position: a bad line is an
//! error naming the file and line.

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::plan::run_plan::{BookInfo, file_sha256};

/// The standard start position as a FEN.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// One opening: a root position and the book moves played from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opening {
    /// Full FEN of the root position, move counters included (normalised by shakmaty: an en
    /// passant square is kept only when a capture there is legal).
    pub fen: String,
    /// Book moves in UCI notation, played from `fen` (empty for EPD books).
    pub moves: Vec<String>,
    /// Index in the book, counting from 0 in file order.
    pub id: usize,
}

/// How a run walks through the book.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum BookOrder {
    /// File order from the first opening, wrapping around.
    Sequential,
    /// A seeded shuffle; every opening is used once before any is used again.
    #[default]
    Random,
}

/// A book made of the standard start position alone.
pub fn startpos_book() -> Vec<Opening> {
    vec![Opening { fen: STARTPOS_FEN.to_string(), moves: Vec::new(), id: 0 }]
}

/// Reads an EPD or PGN book. The format is chosen by the extension (`.epd`, `.pgn`); any other
/// extension is sniffed from the content. `max_plies` cuts PGN openings to their first N plies.
pub fn load_book(path: &Path, max_plies: Option<usize>) -> Result<Vec<Opening>> {
    let bytes = fs::read(path).with_context(|| format!("cannot read book {}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let is_pgn = match ext.as_deref() {
        Some("pgn") => true,
        Some("epd") | Some("fen") => false,
        _ => looks_like_pgn(&bytes),
    };
    let book = if is_pgn {
        parse_pgn_book(&bytes, max_plies)
    } else {
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| anyhow!("book is not UTF-8 text (byte {})", e.valid_up_to()))?;
        parse_epd_book(text)
    }
    .with_context(|| format!("book {}", path.display()))?;
    if book.is_empty() {
        bail!("book {} holds no openings", path.display());
    }
    Ok(book)
}

fn looks_like_pgn(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('%') && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('[') || l.starts_with("1."))
}

/// Parses EPD text: one position per line, `board side castling ep` followed by either the two
/// FEN move counters or EPD operations (`hmvc` and `fmvn` set the counters; others are ignored).
/// Blank lines and lines starting with `#` or `%` are skipped.
pub fn parse_epd_book(text: &str) -> Result<Vec<Opening>> {
    let mut book = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let fen = epd_line_to_fen(line).with_context(|| format!("line {}", lineno + 1))?;
        book.push(Opening { fen, moves: Vec::new(), id: book.len() });
    }
    Ok(book)
}

/// Turns one EPD (or FEN) line into a validated, normalised FEN with move counters.
pub fn epd_line_to_fen(line: &str) -> Result<String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 4 {
        bail!("expected at least 4 fields (board, side, castling, en passant) in {line:?}");
    }
    let (mut halfmoves, mut fullmoves) = (0u32, 1u32);
    let rest = &fields[4..];
    let counters = (
        rest.first().and_then(|s| s.parse::<u32>().ok()),
        rest.get(1).and_then(|s| s.parse::<u32>().ok()),
    );
    match counters {
        (Some(h), Some(f)) => (halfmoves, fullmoves) = (h, f),
        (Some(h), None) if rest.len() == 1 => halfmoves = h,
        _ => {
            let ops = rest.join(" ");
            for op in ops.split(';') {
                let mut parts = op.split_whitespace();
                match (parts.next(), parts.next()) {
                    (Some("hmvc"), Some(v)) => {
                        halfmoves = v.parse().map_err(|_| anyhow!("bad hmvc value {v:?}"))?
                    }
                    (Some("fmvn"), Some(v)) => {
                        fullmoves = v.parse().map_err(|_| anyhow!("bad fmvn value {v:?}"))?
                    }
                    _ => {}
                }
            }
        }
    }
    let fen_text = format!(
        "{} {} {} {} {} {}",
        fields[0],
        fields[1],
        fields[2],
        fields[3],
        halfmoves,
        fullmoves.max(1)
    );
    let pos = position_from_fen(&fen_text)?;
    Ok(Fen::from_position(&pos, EnPassantMode::Legal).to_string())
}

/// Parses and validates a FEN (standard chess; Chess960 castling rights are accepted too).
pub fn position_from_fen(fen: &str) -> Result<Chess> {
    let parsed =
        Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| anyhow!("invalid FEN {fen:?}: {e}"))?;
    match parsed.clone().into_position::<Chess>(CastlingMode::Standard) {
        Ok(pos) => Ok(pos),
        Err(_) => parsed
            .into_position::<Chess>(CastlingMode::Chess960)
            .map_err(|e| anyhow!("illegal position {fen:?}: {e}")),
    }
}

/// Parses a PGN book: each game's mainline (from its FEN tag, if any) is an opening. Comments,
/// NAGs and variations are skipped; a game that ends before `max_plies` is kept whole.
pub fn parse_pgn_book(bytes: &[u8], max_plies: Option<usize>) -> Result<Vec<Opening>> {
    let mut reader = Reader::new(bytes);
    let mut visitor = BookVisitor { max_plies, games: 0 };
    let mut book = Vec::new();
    while let Some(outcome) = reader.read_game(&mut visitor).context("reading PGN")? {
        let (root, moves) = outcome.map_err(|e| anyhow!("game {}: {e}", visitor.games))?;
        book.push(Opening { fen: root, moves, id: book.len() });
    }
    Ok(book)
}

struct BookVisitor {
    max_plies: Option<usize>,
    games: usize,
}

struct BookGame {
    root: Chess,
    pos: Chess,
    moves: Vec<String>,
    error: Option<String>,
}

type BookOutput = Result<(String, Vec<String>), String>;

impl Visitor for BookVisitor {
    type Tags = Result<Option<Chess>, String>;
    type Movetext = BookGame;
    type Output = BookOutput;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        self.games += 1;
        ControlFlow::Continue(Ok(None))
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            *tags = position_from_fen(&text).map(Some).map_err(|e| e.to_string());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        match tags {
            Ok(root) => {
                let root = root.unwrap_or_default();
                ControlFlow::Continue(BookGame {
                    pos: root.clone(),
                    root,
                    moves: Vec::new(),
                    error: None,
                })
            }
            Err(e) => ControlFlow::Break(Err(e)),
        }
    }

    fn san(&mut self, game: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if game.error.is_some() || self.max_plies.is_some_and(|max| game.moves.len() >= max) {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&game.pos) {
            Ok(m) => {
                game.moves.push(UciMove::from_move(m, CastlingMode::Standard).to_string());
                game.pos.play_unchecked(m);
            }
            Err(e) => {
                game.error =
                    Some(format!("illegal move {san_plus} after {} plies: {e}", game.moves.len()))
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Self::Movetext) -> Self::Output {
        if let Some(e) = game.error {
            return Err(e);
        }
        Ok((Fen::from_position(&game.root, EnPassantMode::Legal).to_string(), game.moves))
    }
}

/// The opening index used by game pair `i` for `n_pairs` pairs. Sequential order walks the book
/// from the start and wraps; random order is a seeded shuffle, reshuffled (with a derived seed)
/// each time the book is used up, so no opening repeats before all have been played.
pub fn opening_sequence(
    n_openings: usize,
    order: BookOrder,
    seed: u64,
    n_pairs: usize,
) -> Vec<usize> {
    if n_openings == 0 {
        return Vec::new();
    }
    match order {
        BookOrder::Sequential => (0..n_pairs).map(|i| i % n_openings).collect(),
        BookOrder::Random => {
            let mut out = Vec::with_capacity(n_pairs);
            let mut cycle = 0u64;
            while out.len() < n_pairs {
                let mut perm: Vec<usize> = (0..n_openings).collect();
                let mut rng = ChaCha8Rng::seed_from_u64(
                    seed.wrapping_add(cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                );
                perm.shuffle(&mut rng);
                out.extend(perm.into_iter().take(n_pairs - out.len()));
                cycle += 1;
            }
            out
        }
    }
}

/// The default opening book.
pub const DEFAULT_BOOK: &str = "openings/default.epd";

/// The openings of a run and their description for the plan: `book`, else [`DEFAULT_BOOK`] when
/// present, else the start position (with a warning).
pub fn book_for_plan(
    book: Option<&Path>,
    plies: Option<usize>,
) -> Result<(Vec<Opening>, BookInfo)> {
    let path = match book {
        Some(p) => Some(p.to_path_buf()),
        None if Path::new(DEFAULT_BOOK).is_file() => Some(PathBuf::from(DEFAULT_BOOK)),
        None => {
            eprintln!(
                "warning: no --book and no {DEFAULT_BOOK}: every game starts from the start position"
            );
            None
        }
    };
    match path {
        Some(p) => {
            if !p.is_file() {
                bail!("book {} not found", p.display());
            }
            let openings = load_book(&p, plies)?;
            let info = BookInfo {
                path: Some(p.display().to_string()),
                sha256: Some(file_sha256(&p)?),
                openings: openings.len(),
                plies,
            };
            Ok((openings, info))
        }
        None => {
            let openings = startpos_book();
            Ok((openings, BookInfo { path: None, sha256: None, openings: 1, plies: None }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_without_counters_gets_defaults() {
        let fen =
            epd_line_to_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -").unwrap();
        // e3 is not a legal en passant capture here, and it was not given anyway.
        assert_eq!(fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    }

    #[test]
    fn epd_counters_kept_from_fen_fields_and_opcodes() {
        let fen = epd_line_to_fen("8/8/4k3/8/8/4K3/4P3/8 w - - 12 57").unwrap();
        assert!(fen.ends_with(" 12 57"), "{fen}");
        let fen =
            epd_line_to_fen("8/8/4k3/8/8/4K3/4P3/8 w - - hmvc 7; fmvn 40; id \"x\";").unwrap();
        assert!(fen.ends_with(" 7 40"), "{fen}");
        let fen = epd_line_to_fen("8/8/4k3/8/8/4K3/4P3/8 w - - c0 \"comment\"; id \"y\";").unwrap();
        assert!(fen.ends_with(" 0 1"), "{fen}");
    }

    #[test]
    fn en_passant_square_kept_when_legal_dropped_when_not() {
        // Black pawn on d4 can take e3 en passant.
        let fen = epd_line_to_fen("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3")
            .unwrap();
        assert!(fen.contains(" b KQkq e3 "), "{fen}");
        let fen =
            epd_line_to_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
        assert!(fen.contains(" b KQkq - "), "{fen}");
    }

    #[test]
    fn castling_rights_survive() {
        let fen = epd_line_to_fen("r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1").unwrap();
        assert!(fen.contains(" w Kq - "), "{fen}");
    }

    #[test]
    fn bad_epd_lines_are_errors_with_line_numbers() {
        let err = parse_epd_book(
            "# comment\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n",
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("line 4"), "{err:#}");
        // Two white kings is illegal.
        assert!(epd_line_to_fen("K7/8/8/8/8/8/8/K6k w - -").is_err());
    }

    #[test]
    fn pgn_book_mainline_without_variations_and_comments() {
        let pgn = br#"[Event "a"]
[Site "?"]

1. e4 {best by test} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 3. Bb5 a6 *

[Event "b"]
[SetUp "1"]
[FEN "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 4 20"]

20. O-O O-O-O 1/2-1/2
"#;
        let book = parse_pgn_book(pgn, Some(4)).unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book[0].fen, STARTPOS_FEN);
        assert_eq!(book[0].moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
        assert_eq!(book[1].fen, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 4 20");
        assert_eq!(book[1].moves, ["e1g1", "e8c8"]);
        assert_eq!(book[1].id, 1);
        let whole = parse_pgn_book(pgn, None).unwrap();
        assert_eq!(whole[0].moves.len(), 6);
    }

    #[test]
    fn pgn_book_with_illegal_move_is_an_error() {
        let err = parse_pgn_book(b"1. e4 e5 2. Ke3 *\n", None).unwrap_err();
        assert!(format!("{err:#}").contains("game 1"), "{err:#}");
    }

    #[test]
    fn sequences_are_deterministic_and_cover_the_book() {
        let a = opening_sequence(10, BookOrder::Random, 42, 25);
        let b = opening_sequence(10, BookOrder::Random, 42, 25);
        assert_eq!(a, b);
        let mut first: Vec<usize> = a[..10].to_vec();
        first.sort();
        assert_eq!(first, (0..10).collect::<Vec<_>>());
        let mut second: Vec<usize> = a[10..20].to_vec();
        second.sort();
        assert_eq!(second, (0..10).collect::<Vec<_>>());
        assert_ne!(a[..10], a[10..20], "each cycle is reshuffled");
        assert_ne!(opening_sequence(10, BookOrder::Random, 43, 10), a[..10]);
        assert_eq!(opening_sequence(3, BookOrder::Sequential, 0, 5), [0, 1, 2, 0, 1]);
        assert!(opening_sequence(0, BookOrder::Random, 1, 5).is_empty());
    }
}
