//! Opening books: EPD and PGN files read into start positions, and the order in which a run uses
//! them.
//!
//! An [`Opening`] is a root position (a full FEN, move counters included) plus the book moves
//! played from it (PGN books; EPD openings have none). Every position is checked with shakmaty
//! while loading, so a game never starts from an illegal or unparsable position: a bad line is an
//! error naming the file and line. Positions are read for the run's [`Variant`] (Chess960 castling
//! rights only with `--variant fischerandom`), and openings already over are skipped.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::plan::pgn_book::{self, RawGame};
use crate::plan::run_plan::{BookInfo, file_sha256};
use crate::plan::variant::Variant;

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
    /// Index in the book, counting from 0 in file order (skipped openings not counted).
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

/// A book as read: its playable openings, and a line for each one skipped because its game would
/// be over before either engine moved (see [`finished`]).
#[derive(Clone, Debug, Default)]
pub struct Book {
    pub openings: Vec<Opening>,
    pub skipped: Vec<String>,
}

impl Book {
    fn add(
        &mut self,
        fen: String,
        moves: Vec<String>,
        end: &Chess,
        history: &[Zobrist64],
        at: String,
    ) {
        match finished(end, history) {
            Some(why) => self.skipped.push(format!("{at} skipped: {why}")),
            None => self.openings.push(Opening { fen, moves, id: self.openings.len() }),
        }
    }
}

/// Reads an EPD or PGN book. The format is chosen by the extension (`.epd`, `.pgn`); any other
/// extension is sniffed from the content. `max_plies` cuts PGN openings to their first N plies.
/// Openings whose game would be over at once (mate, stalemate, insufficient material, the
/// fifty-move rule, a threefold repetition in the book moves) are skipped with a warning line
/// each, naming the book and the line (EPD) or game and line (PGN); a book left with no opening
/// is an error.
pub fn load_book(path: &Path, max_plies: Option<usize>, variant: Variant) -> Result<Vec<Opening>> {
    let bytes = fs::read(path).with_context(|| format!("cannot read book {}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let is_pgn = match ext.as_deref() {
        Some("pgn") => true,
        Some("epd") | Some("fen") => false,
        _ => looks_like_pgn(&bytes),
    };
    let book = parse_book(&bytes, is_pgn, max_plies, variant)
        .with_context(|| format!("book {}", path.display()))?;
    const SHOWN: usize = 10;
    for line in book.skipped.iter().take(SHOWN) {
        errln!("warning: book {}: {line}", path.display());
    }
    if book.skipped.len() > SHOWN {
        errln!(
            "warning: book {}: ... and {} more skipped",
            path.display(),
            book.skipped.len() - SHOWN
        );
    }
    if book.openings.is_empty() {
        match book.skipped.len() {
            0 => bail!("book {} holds no openings", path.display()),
            n => bail!(
                "book {} holds no playable opening ({n} finished positions skipped)",
                path.display()
            ),
        }
    }
    if !book.skipped.is_empty() {
        errln!(
            "warning: book {}: {} of {} openings skipped (the game would be over before a move)",
            path.display(),
            book.skipped.len(),
            book.skipped.len() + book.openings.len()
        );
    }
    Ok(book.openings)
}

/// Parses book bytes as PGN or EPD (EPD must be UTF-8: an error names the line otherwise).
pub fn parse_book(
    bytes: &[u8],
    is_pgn: bool,
    max_plies: Option<usize>,
    variant: Variant,
) -> Result<Book> {
    if is_pgn {
        return parse_pgn_book(bytes, max_plies, variant);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        anyhow!("line {line} is not UTF-8 text (byte {})", e.valid_up_to())
    })?;
    parse_epd_book(text, variant)
}

/// Why a game from `pos` (reached through the positions hashed in `history`, `pos` last) would
/// be over before either engine moves; `None` when it can be played.
pub fn finished(pos: &Chess, history: &[Zobrist64]) -> Option<&'static str> {
    if pos.legal_moves().is_empty() {
        return Some(if pos.is_check() {
            "the side to move is checkmated"
        } else {
            "the side to move is stalemated"
        });
    }
    if pos.is_insufficient_material() {
        return Some("neither side can mate (insufficient material)");
    }
    if pos.halfmoves() >= 100 {
        return Some("the fifty-move rule applies (halfmove clock 100 or more)");
    }
    if let Some(last) = history.last()
        && history.iter().filter(|h| *h == last).count() >= 3
    {
        return Some("the book moves repeat the position three times");
    }
    None
}

fn looks_like_pgn(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes.get(..4096).unwrap_or(bytes));
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('%') && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('[') || l.starts_with("1."))
}

/// Parses EPD text: one position per line, `board side castling ep` followed by either the two
/// FEN move counters or EPD operations (`hmvc` and `fmvn` set the counters; others are ignored).
/// Blank lines and lines starting with `#` or `%` are skipped.
pub fn parse_epd_book(text: &str, variant: Variant) -> Result<Book> {
    let mut book = Book::default();
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let at = format!("line {}", lineno + 1);
        let fen = epd_line_to_fen(line, variant).with_context(|| at.clone())?;
        let pos = position_for(&fen, variant)?;
        book.add(fen, Vec::new(), &pos, &[pos.zobrist_hash(EnPassantMode::Legal)], at);
    }
    Ok(book)
}

/// Turns one EPD (or FEN) line into a validated, normalised FEN with move counters.
pub fn epd_line_to_fen(line: &str, variant: Variant) -> Result<String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [board, side, castling, en_passant, rest @ ..] = fields.as_slice() else {
        bail!("expected at least 4 fields (board, side, castling, en passant) in {line:?}");
    };
    let (mut halfmoves, mut fullmoves) = (0u32, 1u32);
    // EPD operations start with an opcode (a letter); anything else is FEN's two move counters,
    // read as strictly as the rest of the book.
    let counter = rest.first().filter(|t| !t.starts_with(|c: char| c.is_ascii_alphabetic()));
    if let Some(half) = counter {
        halfmoves = halfmove_clock(half)?;
        if let Some(f) = rest.get(1) {
            fullmoves = fullmove_number(f)?;
        }
    } else {
        let ops = rest.join(" ");
        for op in ops.split(';') {
            let mut parts = op.split_whitespace();
            match (parts.next(), parts.next()) {
                (Some("hmvc"), Some(v)) => halfmoves = halfmove_clock(v)?,
                (Some("fmvn"), Some(v)) => fullmoves = fullmove_number(v)?,
                _ => {}
            }
        }
    }
    let fen_text = format!("{board} {side} {castling} {en_passant} {halfmoves} {fullmoves}");
    let pos = position_for(&fen_text, variant)?;
    Ok(Fen::from_position(&pos, EnPassantMode::Legal).to_string())
}

/// FEN's halfmove clock: a non-negative integer (EPD's `hmvc`).
fn halfmove_clock(text: &str) -> Result<u32> {
    text.parse()
        .map_err(|_| anyhow!("halfmove clock {text:?} is not a non-negative integer below 2^32"))
}

/// FEN's fullmove number: it starts at 1 (EPD's `fmvn`).
fn fullmove_number(text: &str) -> Result<u32> {
    match text.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => bail!("fullmove number {text:?} is not an integer from 1 to 2^32-1 (it starts at 1)"),
    }
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

/// Parses and validates a FEN for `variant`. Standard chess refuses castling rights that only
/// make sense in Chess960, with a line pointing to `--variant fischerandom`; Chess960 reads
/// Shredder-FEN (`HAha`) and X-FEN castling rights.
pub fn position_for(fen: &str, variant: Variant) -> Result<Chess> {
    let parsed =
        Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| anyhow!("invalid FEN {fen:?}: {e}"))?;
    match parsed.clone().into_position::<Chess>(variant.castling_mode()) {
        Ok(pos) => Ok(pos),
        Err(e)
            if variant.is_standard()
                && parsed.clone().into_position::<Chess>(CastlingMode::Chess960).is_ok() =>
        {
            bail!("{fen:?} has Chess960 castling rights ({e}): play it with --variant fischerandom")
        }
        Err(e) => bail!("illegal position {fen:?}: {e}"),
    }
}

/// Plays UCI `moves` from `fen`: the end position and the hashes of every position on the way.
pub fn replay(fen: &str, moves: &[String], variant: Variant) -> Result<(Chess, Vec<Zobrist64>)> {
    let mut pos = position_for(fen, variant)?;
    let mut history = vec![pos.zobrist_hash(EnPassantMode::Legal)];
    for m in moves {
        let mv = m.parse::<UciMove>().ok().and_then(|u| u.to_move(&pos).ok()).ok_or_else(|| {
            anyhow!("move {m} is not legal in {}", Fen::from_position(&pos, EnPassantMode::Legal))
        })?;
        pos.play_unchecked(mv);
        history.push(pos.zobrist_hash(EnPassantMode::Legal));
    }
    Ok((pos, history))
}

/// Parses a PGN book: each game's mainline (from its FEN tag, if any) is an opening, cut to
/// `max_plies`. Every move of the mainline must be readable and legal (see
/// [`crate::plan::pgn_book`]); a game whose `Variant` tag is not the run's variant is refused.
pub fn parse_pgn_book(bytes: &[u8], max_plies: Option<usize>, variant: Variant) -> Result<Book> {
    let mut book = Book::default();
    for game in pgn_book::read_games(bytes)? {
        let at = game.at();
        let ((fen, moves), end, history) =
            pgn_opening(&game, max_plies, variant).with_context(|| at.clone())?;
        book.add(fen, moves, &end, &history, at);
    }
    Ok(book)
}

type PgnOpening = ((String, Vec<String>), Chess, Vec<Zobrist64>);

fn pgn_opening(game: &RawGame, max_plies: Option<usize>, variant: Variant) -> Result<PgnOpening> {
    if let Some(tag) = game.tag("Variant") {
        // Standard games are Chess960 games too (from position 518).
        match Variant::from_pgn_tag(tag) {
            Some(Variant::Fischerandom) if variant.is_standard() => {
                bail!("its Variant tag says {tag:?}: play it with --variant fischerandom")
            }
            Some(_) => {}
            None => bail!("variant {tag:?} is not supported"),
        }
    }
    let root = position_for(game.tag("FEN").unwrap_or(STARTPOS_FEN), variant)?;
    let mode = variant.castling_mode();
    let keep = max_plies.unwrap_or(usize::MAX);
    let (mut pos, mut end, mut moves) = (root.clone(), root.clone(), Vec::new());
    let mut history = vec![pos.zobrist_hash(EnPassantMode::Legal)];
    // Every move is checked, also past `max_plies`: a book is valid or not, whatever the cut.
    for (ply, (san, line)) in game.moves.iter().enumerate() {
        let m = san
            .san
            .to_move(&pos)
            .map_err(|_| anyhow!("illegal move {san} (line {line}) after {ply} plies"))?;
        pos.play_unchecked(m);
        if ply < keep {
            moves.push(UciMove::from_move(m, mode).to_string());
            history.push(pos.zobrist_hash(EnPassantMode::Legal));
            end = pos.clone();
        }
    }
    Ok(((Fen::from_position(&root, EnPassantMode::Legal).to_string(), moves), end, history))
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

/// The default opening book's name, as run.json records it (the file of the repository that
/// the runner carries built in, so a run started from any folder has it).
pub const DEFAULT_BOOK: &str = "openings/default.epd";

/// The default book's bytes, built into the runner.
pub const DEFAULT_BOOK_BYTES: &[u8] = include_bytes!("../../../openings/default.epd");

/// `--book startpos`: the standard start position alone, asked for on purpose.
pub const STARTPOS_BOOK: &str = "startpos";

/// The openings of a run and their description for the plan: `--book FILE`, `--book startpos`
/// (the start position alone), else the default book built into the runner ([`DEFAULT_BOOK`],
/// read from the runner itself: the folder the run starts from does not matter). A book file of
/// one opening is played as given (it was named on purpose), with a note that every game pair
/// starts from it.
pub fn book_for_plan(
    book: Option<&Path>,
    plies: Option<usize>,
    variant: Variant,
) -> Result<(Vec<Opening>, BookInfo)> {
    if book.is_some_and(|b| b == Path::new(STARTPOS_BOOK)) {
        if variant.is_chess960() {
            bail!("--variant fischerandom needs a book of Chess960 positions, not --book startpos");
        }
        let info = BookInfo { path: None, sha256: None, openings: 1, plies: None };
        return Ok((startpos_book(), info));
    }
    let Some(p) = book else {
        if variant.is_chess960() {
            bail!("--variant fischerandom needs --book (`runner book --chess960` makes one)");
        }
        let openings = parse_book(DEFAULT_BOOK_BYTES, false, plies, variant)
            .with_context(|| format!("the built-in book {DEFAULT_BOOK}"))?
            .openings;
        let info = BookInfo {
            path: Some(DEFAULT_BOOK.to_string()),
            sha256: Some(crate::hex::sha256_hex(DEFAULT_BOOK_BYTES)),
            openings: openings.len(),
            plies,
        };
        return Ok((openings, info));
    };
    if !p.is_file() {
        bail!(
            "book {} not found (`--book startpos` plays the start position alone; without \
             --book, the built-in {DEFAULT_BOOK})",
            p.display()
        );
    }
    let openings = load_book(p, plies, variant)?;
    if openings.len() == 1 {
        errln!(
            "note: book {} holds one opening: every game pair starts from it (at a node or \
             depth limit a deterministic engine then plays the same pair again and again)",
            p.display()
        );
    }
    let info = BookInfo {
        path: Some(p.display().to_string()),
        sha256: Some(file_sha256(p)?),
        openings: openings.len(),
        plies,
    };
    Ok((openings, info))
}

/// True when `book` is the default book built into the runner (its name and its bytes), so a
/// command rebuilt from the plan needs no `--book`.
pub fn is_builtin_book(book: &BookInfo) -> bool {
    book.path.as_deref() == Some(DEFAULT_BOOK)
        && book.sha256.as_deref() == Some(crate::hex::sha256_hex(DEFAULT_BOOK_BYTES).as_str())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Without `--book` the built-in book is played from any folder (this test runs from the
    /// crate's folder, where no `openings/default.epd` is); `--book startpos` asks for the start
    /// position alone.
    #[test]
    fn the_default_book_is_built_in_and_startpos_is_asked_for() {
        assert!(!Path::new(DEFAULT_BOOK).exists(), "run from runner/, not the repository root");
        let (openings, info) = book_for_plan(None, None, Variant::Standard).unwrap();
        assert!(openings.len() > 1000, "{}", openings.len());
        assert_eq!(info.openings, openings.len());
        assert!(is_builtin_book(&info));
        let (openings, info) =
            book_for_plan(Some(Path::new(STARTPOS_BOOK)), None, Variant::Standard).unwrap();
        assert_eq!(openings, startpos_book());
        assert_eq!((info.path, info.openings), (None, 1));
        let e = book_for_plan(Some(Path::new("no-such.epd")), None, Variant::Standard);
        assert!(e.unwrap_err().to_string().contains("--book startpos"));
        let e = book_for_plan(None, None, Variant::Fischerandom).unwrap_err().to_string();
        assert!(e.contains("needs --book"), "{e}");
    }

    #[test]
    fn epd_without_counters_gets_defaults() {
        let fen = epd_line_to_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -",
            Variant::Standard,
        )
        .unwrap();
        // e3 is not a legal en passant capture here, and it was not given anyway.
        assert_eq!(fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
    }

    #[test]
    fn epd_counters_kept_from_fen_fields_and_opcodes() {
        let fen = epd_line_to_fen("8/8/4k3/8/8/4K3/4P3/8 w - - 12 57", Variant::Standard).unwrap();
        assert!(fen.ends_with(" 12 57"), "{fen}");
        let fen = epd_line_to_fen(
            "8/8/4k3/8/8/4K3/4P3/8 w - - hmvc 7; fmvn 40; id \"x\";",
            Variant::Standard,
        )
        .unwrap();
        assert!(fen.ends_with(" 7 40"), "{fen}");
        let fen = epd_line_to_fen(
            "8/8/4k3/8/8/4K3/4P3/8 w - - c0 \"comment\"; id \"y\";",
            Variant::Standard,
        )
        .unwrap();
        assert!(fen.ends_with(" 0 1"), "{fen}");
    }

    #[test]
    fn en_passant_square_kept_when_legal_dropped_when_not() {
        // Black pawn on d4 can take e3 en passant.
        let fen = epd_line_to_fen(
            "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
            Variant::Standard,
        )
        .unwrap();
        assert!(fen.contains(" b KQkq e3 "), "{fen}");
        let fen = epd_line_to_fen(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
            Variant::Standard,
        )
        .unwrap();
        assert!(fen.contains(" b KQkq - "), "{fen}");
    }

    #[test]
    fn castling_rights_survive() {
        let fen = epd_line_to_fen("r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1", Variant::Standard).unwrap();
        assert!(fen.contains(" w Kq - "), "{fen}");
    }

    #[test]
    fn bad_epd_lines_are_errors_with_line_numbers() {
        let err = parse_epd_book(
            "# comment\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nnot a fen\n",
            Variant::Standard,
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("line 4"), "{err:#}");
        // Move counters are read strictly, like the rest of the book (FEN: the halfmove clock is
        // a non-negative integer, the fullmove number starts at 1).
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        for (counters, needle) in [
            ("99999999999999999999 1", "halfmove clock \"99999999999999999999\""),
            ("-5 1", "halfmove clock \"-5\""),
            ("0 0", "fullmove number \"0\""),
            ("0 -5", "fullmove number \"-5\""),
            ("0 99999999999999999999", "fullmove number \"99999999999999999999\""),
            ("hmvc -1;", "halfmove clock \"-1\""),
            ("fmvn 0;", "fullmove number \"0\""),
        ] {
            let text = format!("{start} 0 1\n{start} {counters}\n");
            let err = format!("{:#}", parse_epd_book(&text, Variant::Standard).unwrap_err());
            assert!(err.contains("line 2") && err.contains(needle), "{counters}: {err}");
        }
        // Two white kings is illegal.
        assert!(epd_line_to_fen("K7/8/8/8/8/8/8/K6k w - -", Variant::Standard).is_err());
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
        let book = parse_pgn_book(pgn, Some(4), Variant::Standard).unwrap().openings;
        assert_eq!(book.len(), 2);
        assert_eq!(book[0].fen, STARTPOS_FEN);
        assert_eq!(book[0].moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
        assert_eq!(book[1].fen, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 4 20");
        assert_eq!(book[1].moves, ["e1g1", "e8c8"]);
        assert_eq!(book[1].id, 1);
        let whole = parse_pgn_book(pgn, None, Variant::Standard).unwrap().openings;
        assert_eq!(whole[0].moves.len(), 6);
    }

    #[test]
    fn pgn_book_with_illegal_move_is_an_error() {
        let err = parse_pgn_book(b"1. e4 e5 2. Ke3 *\n", None, Variant::Standard).unwrap_err();
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
    #[test]
    fn finished_openings_are_skipped_naming_the_line() {
        let text = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3\n\
                    7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n\
                    8/8/4k3/8/8/4K3/8/8 w - - 0 1\n\
                    8/8/4k3/8/8/4K3/4P3/8 w - - 100 80\n\
                    8/8/4k3/8/8/4K3/4P3/8 w - - 99 80\n";
        let book = parse_epd_book(text, Variant::Standard).unwrap();
        assert_eq!(book.openings.len(), 1);
        assert!(book.openings[0].fen.ends_with(" 99 80"));
        let why: Vec<&str> = book.skipped.iter().map(String::as_str).collect();
        assert!(why[0].starts_with("line 1 skipped") && why[0].contains("checkmated"), "{why:?}");
        assert!(why[1].starts_with("line 2 skipped") && why[1].contains("stalemated"), "{why:?}");
        assert!(why[2].starts_with("line 3 skipped") && why[2].contains("insufficient"), "{why:?}");
        assert!(why[3].starts_with("line 4 skipped") && why[3].contains("fifty-move"), "{why:?}");
        // PGN: mate in the book moves, and a repetition.
        let pgn = b"1. f3 e5 2. g4 Qh4# 0-1\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 *\n\n1. e4 *\n";
        let book = parse_pgn_book(pgn, None, Variant::Standard).unwrap();
        assert_eq!(book.openings.len(), 1);
        assert_eq!(book.openings[0].moves, ["e2e4"]);
        assert!(book.skipped[0].starts_with("game 1 (line 1) skipped"), "{:?}", book.skipped);
        assert!(book.skipped[1].contains("three times"), "{:?}", book.skipped);
        // Cut at 3 plies, before the mate and before the repetition, all three are playable.
        assert_eq!(parse_pgn_book(pgn, Some(3), Variant::Standard).unwrap().openings.len(), 3);
    }

    #[test]
    fn bad_pgn_tokens_and_moves_are_errors_naming_the_game() {
        let pgn = b"[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. e4 e5 2. d4 d9 3. d5 *\n";
        let err = format!("{:#}", parse_pgn_book(pgn, None, Variant::Standard).unwrap_err());
        assert!(err.contains("game 2 (line 7)") && err.contains("\"d9\""), "{err}");
        let err =
            format!("{:#}", parse_pgn_book(b"hello world\n", None, Variant::Standard).unwrap_err());
        assert!(err.contains("game 1 (line 1)"), "{err}");
        // An illegal move past the --book-plies cut still refuses the book.
        let err = parse_pgn_book(b"1. e4 e5 2. Ke3 *\n", Some(2), Variant::Standard).unwrap_err();
        assert!(format!("{err:#}").contains("illegal move Ke3 (line 1) after 2 plies"), "{err:#}");
        let err =
            parse_book(b"8/8/4k3/8/8/4K3/4P3/8 w - -\n\xff\n", false, None, Variant::Standard)
                .unwrap_err();
        assert!(format!("{err:#}").contains("line 2 is not UTF-8"), "{err:#}");
    }

    #[test]
    fn chess960_castling_rights_in_both_notations() {
        let shredder = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1";
        let xfen = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1";
        let a = epd_line_to_fen(shredder, Variant::Fischerandom).unwrap();
        assert_eq!(a, epd_line_to_fen(xfen, Variant::Fischerandom).unwrap());
        let inner = "2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1";
        assert!(epd_line_to_fen(inner, Variant::Fischerandom).unwrap().contains(" w Q - "));
        // Standard chess refuses them and says what to do.
        let err = format!("{:#}", epd_line_to_fen(shredder, Variant::Standard).unwrap_err());
        assert!(err.contains("--variant fischerandom"), "{err}");
        // A PGN book in Chess960: castling is king takes rook.
        let pgn = b"[Variant \"Chess960\"]\n[FEN \"2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1\"]\n\n1. O-O-O# 1-0\n\n\
[FEN \"rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1\"]\n1. O-O O-O-O 2. a3 *\n";
        let book = parse_pgn_book(pgn, None, Variant::Fischerandom).unwrap();
        assert_eq!(book.skipped.len(), 1, "the first game ends in mate");
        assert_eq!(book.openings[0].moves, ["b1h1", "b8a8", "a2a3"]);
        let err = format!("{:#}", parse_pgn_book(pgn, None, Variant::Standard).unwrap_err());
        assert!(err.contains("game 1") && err.contains("--variant fischerandom"), "{err}");
        let (end, _) =
            replay(&book.openings[0].fen, &book.openings[0].moves, Variant::Fischerandom).unwrap();
        assert!(end.board().king_of(shakmaty::Color::White) == Some(shakmaty::Square::G1));
    }
}
