//! Opening lines that a book starts from (`runner book --from FILE|DIR`): each is a start
//! position and the moves played from it, with the opening's ECO code and name when the source
//! has them.
//!
//! Sources, by file extension:
//! - `.tsv`: a header row naming the columns, one line per row. The moves are in a column named
//!   `pgn` or `moves` (SAN movetext: `1. e4 e5 2. Nf3`); `eco` and `name` are read when present.
//!   This is the layout of lichess's chess-openings set.
//! - `.pgn`: each game's mainline (from its `FEN` tag, if any), with its `ECO` and `Opening`
//!   (or `Variation`) tags.
//! - `.epd` (or anything else): one position per line; `eco` and `c0` operations are read.
//!
//! A directory is read file by file in name order (`.tsv`, `.pgn` and `.epd` files only). Every
//! move must be legal; a bad line is refused with its file and line number.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use crate::plan::openings::{STARTPOS_FEN, epd_line_to_fen, position_from_fen};
use crate::plan::pgn_book::read_games;
use crate::plan::variant::Variant;

/// One opening line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    /// `FILE:LINE`, for messages.
    pub at: String,
    pub eco: Option<String>,
    pub name: Option<String>,
    /// Where the moves start (full FEN).
    pub root: String,
    /// The line's moves in UCI notation.
    pub moves: Vec<String>,
}

impl SourceLine {
    /// The start position of the random walks: the empty line from the standard start.
    pub fn startpos() -> SourceLine {
        SourceLine {
            at: "start position".into(),
            eco: None,
            name: None,
            root: STARTPOS_FEN.into(),
            moves: Vec::new(),
        }
    }
}

/// Reads the lines of every source, in order.
pub fn read_sources(paths: &[PathBuf]) -> Result<Vec<SourceLine>> {
    let mut out = Vec::new();
    for p in paths {
        for file in source_files(p)? {
            out.extend(read_file(&file)?);
        }
    }
    if out.is_empty() {
        bail!("no opening lines in {}", describe(paths));
    }
    Ok(out)
}

fn describe(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn source_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read directory {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(extension(p).as_str(), "tsv" | "pgn" | "epd"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{} holds no .tsv, .pgn or .epd file", path.display());
    }
    Ok(files)
}

fn extension(p: &Path) -> String {
    p.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase()
}

fn read_file(path: &Path) -> Result<Vec<SourceLine>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path.display().to_string();
    match extension(path).as_str() {
        "tsv" => read_tsv(&String::from_utf8_lossy(&bytes), &name),
        "pgn" => read_pgn(&bytes, &name),
        _ => read_epd(&String::from_utf8_lossy(&bytes), &name),
    }
}

/// Reads tab-separated lines with a header row (see the module doc).
pub fn read_tsv(text: &str, file: &str) -> Result<Vec<SourceLine>> {
    let mut rows = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = rows.next() else { return Ok(Vec::new()) };
    let cols: Vec<String> = header.split('\t').map(|c| c.trim().to_ascii_lowercase()).collect();
    let find = |names: &[&str]| cols.iter().position(|c| names.contains(&c.as_str()));
    let moves_col = find(&["pgn", "moves"]).ok_or_else(|| {
        anyhow!("{file}:1: the header row names no `pgn` or `moves` column (got {header:?})")
    })?;
    let (eco_col, name_col) = (find(&["eco"]), find(&["name"]));
    let mut out = Vec::new();
    for (i, row) in rows {
        let at = format!("{file}:{}", i + 1);
        let fields: Vec<&str> = row.split('\t').collect();
        let cell = |c: Option<usize>| {
            c.and_then(|c| fields.get(c)).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
        };
        let text = cell(Some(moves_col))
            .ok_or_else(|| anyhow!("{at}: no moves in column {}", moves_col + 1))?;
        let moves = san_line(&text).with_context(|| at.clone())?;
        out.push(SourceLine {
            at,
            eco: cell(eco_col),
            name: cell(name_col),
            root: STARTPOS_FEN.into(),
            moves,
        });
    }
    Ok(out)
}

/// SAN movetext from the start position (move numbers and a result are skipped) to UCI moves.
fn san_line(text: &str) -> Result<Vec<String>> {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    for token in text.split_whitespace() {
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if token.is_empty() || matches!(token, "*" | "1-0" | "0-1" | "1/2-1/2") {
            continue;
        }
        let san = SanPlus::from_ascii(token.as_bytes())
            .map_err(|_| anyhow!("{token:?} is not a move in SAN"))?;
        let m = san
            .san
            .to_move(&pos)
            .map_err(|_| anyhow!("illegal move {token} after {} plies", moves.len()))?;
        moves.push(UciMove::from_move(m, CastlingMode::Standard).to_string());
        pos.play_unchecked(m);
    }
    Ok(moves)
}

fn read_pgn(bytes: &[u8], file: &str) -> Result<Vec<SourceLine>> {
    let mut out = Vec::new();
    for game in read_games(bytes).with_context(|| file.to_string())? {
        let at = format!("{file}:{}", game.line);
        let root_fen = game.tag("FEN").unwrap_or(STARTPOS_FEN);
        let mut pos = position_from_fen(root_fen).with_context(|| at.clone())?;
        let mut moves = Vec::new();
        for (san, line) in &game.moves {
            let m =
                san.san.to_move(&pos).map_err(|_| anyhow!("{file}:{line}: illegal move {san}"))?;
            moves.push(UciMove::from_move(m, CastlingMode::Standard).to_string());
            pos.play_unchecked(m);
        }
        let root = position_from_fen(root_fen)?;
        let name = game.tag("Opening").map(|o| match game.tag("Variation") {
            Some(v) if !v.is_empty() => format!("{o}: {v}"),
            _ => o.to_string(),
        });
        out.push(SourceLine {
            at,
            eco: game.tag("ECO").map(str::to_string),
            name,
            root: Fen::from_position(&root, EnPassantMode::Legal).to_string(),
            moves,
        });
    }
    Ok(out)
}

fn read_epd(text: &str, file: &str) -> Result<Vec<SourceLine>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let root = epd_line_to_fen(line, Variant::Standard).with_context(|| at.clone())?;
        out.push(SourceLine {
            at,
            eco: epd_operand(line, "eco"),
            name: epd_operand(line, "c0"),
            root,
            moves: Vec::new(),
        });
    }
    Ok(out)
}

/// The operand of an EPD operation (quotes removed), if the line has it.
pub fn epd_operand(line: &str, opcode: &str) -> Option<String> {
    // The operations follow the four position fields, whatever whitespace separates them.
    let mut rest = line.trim_start();
    for _ in 0..4 {
        let end = rest.find(char::is_whitespace)?;
        rest = rest[end..].trim_start();
    }
    while !rest.trim().is_empty() {
        let trimmed = rest.trim_start();
        let (code, after) = trimmed.split_once(char::is_whitespace).unwrap_or((trimmed, ""));
        let after = after.trim_start();
        let (operand, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')?;
            let tail = q[end + 1..].trim_start();
            (q[..end].to_string(), tail.strip_prefix(';').unwrap_or(tail))
        } else {
            let (v, tail) = after.split_once(';').unwrap_or((after, ""));
            (v.trim().to_string(), tail)
        };
        if code == opcode {
            return Some(operand);
        }
        rest = next;
    }
    None
}

/// An EPD string operand: quotes and semicolons, which would end it, become apostrophes and
/// commas.
pub fn epd_string(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "'").replace(';', ","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lichess_tsv_rows() {
        let text = "eco\tname\tpgn\nA00\tAmar Opening: Paris Gambit\t1. Nh3 d5 2. g3 e5 3. f4\n\
                    C00\tFrench Defense\t1. e4 e6\n";
        let lines = read_tsv(text, "a.tsv").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].eco.as_deref(), Some("A00"));
        assert_eq!(lines[0].name.as_deref(), Some("Amar Opening: Paris Gambit"));
        assert_eq!(lines[0].moves, ["g1h3", "d7d5", "g2g3", "e7e5", "f2f4"]);
        assert_eq!(lines[1].at, "a.tsv:3");
    }

    #[test]
    fn bad_tsv_rows_name_their_line() {
        let err = read_tsv("eco\tname\tpgn\nA00\tx\t1. e4 e5 2. Ke3\n", "f.tsv").unwrap_err();
        assert_eq!(format!("{err:#}"), "f.tsv:2: illegal move Ke3 after 2 plies");
        let err = read_tsv("eco\tname\n", "g.tsv").unwrap_err();
        assert!(format!("{err:#}").starts_with("g.tsv:1: the header row names no"), "{err:#}");
        let err = read_tsv("pgn\n1. e4 zz\n", "h.tsv").unwrap_err();
        assert_eq!(format!("{err:#}"), "h.tsv:2: \"zz\" is not a move in SAN");
    }

    #[test]
    fn epd_operands_round_trip() {
        let line = format!(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - eco \"B00\"; c0 {}; ce -23; hmvc 0; fmvn 1;",
            epd_string("King's Pawn; \"odd\"")
        );
        assert_eq!(epd_operand(&line, "eco").as_deref(), Some("B00"));
        assert_eq!(epd_operand(&line, "c0").as_deref(), Some("King's Pawn, 'odd'"));
        assert_eq!(epd_operand(&line, "ce").as_deref(), Some("-23"));
        assert_eq!(epd_operand(&line, "fmvn").as_deref(), Some("1"));
        assert_eq!(epd_operand(&line, "id"), None);
        assert_eq!(
            epd_operand("8/8/8/8/8/8/8/K1k5\tw\t-  - c0 \"x\";", "c0").as_deref(),
            Some("x")
        );
        let back = read_epd(&line, "b.epd").unwrap();
        assert_eq!(back[0].eco.as_deref(), Some("B00"));
        assert!(back[0].root.starts_with("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"));
    }

    #[test]
    fn pgn_games_keep_their_tags() {
        let pgn = b"[ECO \"C20\"]\n[Opening \"King's Pawn Game\"]\n\n1. e4 e5 *\n";
        let lines = read_pgn(pgn, "c.pgn").unwrap();
        assert_eq!(lines[0].moves, ["e2e4", "e7e5"]);
        assert_eq!(lines[0].name.as_deref(), Some("King's Pawn Game"));
    }
}
