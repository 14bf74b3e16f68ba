//! The games of a PGN opening book: tag pairs and the mainline's moves, each with its line
//! number. The games are read by pgn-reader; a small line scanner of our own goes over the
//! same bytes first, because pgn-reader neither tells where anything stands nor refuses
//! anything: it skips what it cannot read (a typo such as `d9`, a tag without quotes, a stray
//! `}` or `)`, prose) without a word, and a book must never silently lose a move. So the
//! scanner refuses, naming the game and line, every token that is not a move number, a move in
//! SAN, a result, a NAG or an annotation mark, and malformed tags, unclosed comments and
//! variations; it gives each mainline move its line. Comments, `%` and `;` lines and variations
//! are skipped. Games end where pgn-reader ends them (a tag or a blank line after movetext); a
//! move after a game's result, which pgn-reader would add to that game, is refused. Both
//! readings of every game must agree move by move. Moves are checked for legality by the
//! caller, which knows the start position and the variant.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::ops::ControlFlow;

use anyhow::{Result, bail};
use pgn_reader::{RawTag, Reader, Visitor};
use shakmaty::san::SanPlus;

/// One game of the book as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawGame {
    /// 1-based game number in the file.
    pub number: usize,
    /// Line where the game starts.
    pub line: usize,
    /// Tag pairs in file order (values unescaped; non-UTF-8 bytes replaced).
    pub tags: Vec<(String, String)>,
    /// Mainline moves with their line numbers.
    pub moves: Vec<(SanPlus, usize)>,
}

impl RawGame {
    /// The value of a tag (the first one of that name).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// `game N (line L)`, for messages.
    pub fn at(&self) -> String {
        format!("game {} (line {})", self.number, self.line)
    }
}

/// Reads the games of a PGN book (games without tags or moves, e.g. a lone comment, are left
/// out). Errors name the game and line.
pub fn read_games(bytes: &[u8]) -> Result<Vec<RawGame>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let scan = scan(bytes)?;
    let mut reader =
        Reader::build(bytes).set_supported_tag_line_length(scan.longest_tag_line).finish();
    let mut read = Vec::new();
    for game in reader.read_games(&mut Mainline) {
        let game = game.map_err(|e| anyhow::anyhow!("game {}: {e}", read.len() + 1))?;
        if !game.tags.is_empty() || !game.moves.is_empty() {
            read.push(game);
        }
    }
    if read.len() != scan.games.len() {
        bail!(
            "the PGN reader finds {} games where the line scanner finds {}: refused rather than \
             guessed",
            read.len(),
            scan.games.len()
        );
    }
    let mut games = Vec::with_capacity(read.len());
    for ((number, game), lines) in (1..).zip(read).zip(scan.games) {
        let scanned = lines.moves.iter().map(|(san, _)| san);
        if !game.moves.iter().eq(scanned) {
            bail!(
                "game {number} (line {}): the PGN reader and the line scanner read different \
                 moves: refused rather than guessed",
                lines.line
            );
        }
        let moves = lines.moves;
        games.push(RawGame { number, line: lines.line, tags: game.tags, moves });
    }
    Ok(games)
}

/// One game as pgn-reader gives it.
struct ReadGame {
    tags: Vec<(String, String)>,
    moves: Vec<SanPlus>,
}

/// Collects tags and the mainline (pgn-reader skips variations by default).
struct Mainline;

impl Visitor for Mainline {
    type Tags = Vec<(String, String)>;
    type Movetext = ReadGame;
    type Output = ReadGame;

    fn begin_tags(&mut self) -> ControlFlow<ReadGame, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<ReadGame> {
        let name = String::from_utf8_lossy(name).trim_ascii().to_string();
        tags.push((name, value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<ReadGame, ReadGame> {
        ControlFlow::Continue(ReadGame { tags, moves: Vec::new() })
    }

    fn san(&mut self, game: &mut ReadGame, san: SanPlus) -> ControlFlow<ReadGame> {
        game.moves.push(san);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: ReadGame) -> ReadGame {
        game
    }
}

/// What the line scanner found of one game.
#[derive(Default)]
struct ScannedGame {
    line: usize,
    has_tags: bool,
    /// Mainline moves with their lines.
    moves: Vec<(SanPlus, usize)>,
}

struct Scan {
    games: Vec<ScannedGame>,
    /// Bytes of the longest line holding a tag (pgn-reader needs a tag line in its buffer).
    longest_tag_line: usize,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Bytes that end a movetext token.
fn ends_token(c: u8) -> bool {
    is_space(c) || matches!(c, b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b'$')
}

/// A cursor over the book's bytes that counts lines.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.i + ahead).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn at_line_start(&self) -> bool {
        self.i == 0 || self.b.get(self.i - 1) == Some(&b'\n')
    }

    /// Moves to the end of the line (the newline not taken).
    fn skip_to_newline(&mut self) {
        while self.peek().is_some_and(|c| c != b'\n') {
            self.bump();
        }
    }

    fn skip_tabs(&mut self) {
        while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
            self.bump();
        }
    }

    /// Checks `[Name "value"]`, the `[` already seen; returns the length of its line.
    fn tag(&mut self) -> Result<usize> {
        let (line, start) = (self.line, self.i);
        self.bump();
        self.skip_tabs();
        let mut name = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == b'_') {
            name.push(char::from(c));
            self.bump();
        }
        self.skip_tabs();
        if name.is_empty() || self.bump() != Some(b'"') {
            bail!("line {line}: malformed tag (expected [Name \"value\"])");
        }
        let open = || anyhow::anyhow!("line {line}: tag {name} is not closed on its line");
        loop {
            match self.bump() {
                Some(b'"') => break,
                Some(b'\\') => {
                    if matches!(self.bump(), Some(b'\n') | None) {
                        return Err(open());
                    }
                }
                Some(b'\n') | None => return Err(open()),
                Some(_) => {}
            }
        }
        self.skip_tabs();
        if self.bump() != Some(b']') {
            bail!("line {line}: tag {name} has no closing ]");
        }
        let line_start = self.b.get(..start).and_then(|b| b.iter().rposition(|&c| c == b'\n'));
        let rest = self.b.get(self.i..).unwrap_or_default();
        let line_end = self.i + rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        Ok(line_end - line_start.map_or(0, |n| n + 1))
    }

    /// Skips a `{...}` comment, the `{` already seen.
    fn comment(&mut self) -> Result<()> {
        let line = self.line;
        while let Some(c) = self.bump() {
            if c == b'}' {
                return Ok(());
            }
        }
        bail!("line {line}: comment {{ is never closed")
    }

    /// The bytes of a movetext token.
    fn token(&mut self) -> &'a [u8] {
        let start = self.i;
        while self.peek().is_some_and(|c| !ends_token(c)) {
            self.bump();
        }
        if self.i == start {
            // A lone delimiter that starts no construct (`}` or `]`): a token of its own.
            self.bump();
        }
        self.b.get(start..self.i).unwrap_or_default()
    }

    /// After a newline in movetext: a tag or a blank line ends the game (as in pgn-reader).
    fn game_ends_here(&self) -> bool {
        match self.peek() {
            Some(b'[' | b'\n') => true,
            Some(b'\r') => self.peek_at(1) == Some(b'\n'),
            _ => false,
        }
    }
}

/// What a movetext token is.
enum Token {
    /// Move numbers, annotation marks (`!?`), a separate `e.p.`: nothing to do.
    Skip,
    Result,
    Move(SanPlus),
}

fn classify(t: &[u8]) -> Option<Token> {
    if matches!(t, b"1-0" | b"0-1" | b"1/2-1/2" | b"*") {
        return Some(Token::Result);
    }
    // Move numbers: `12.`, `12...`, and `12.e4` (number glued to the move).
    let digits = t.iter().take_while(|c| c.is_ascii_digit()).count();
    let rest = t.get(digits..).unwrap_or_default();
    let dots = rest.iter().take_while(|&&c| c == b'.').count();
    if digits > 0 && dots == rest.len() {
        return Some(Token::Skip);
    }
    let t = if digits > 0 && dots > 0 { rest.get(dots..).unwrap_or_default() } else { t };
    if t.iter().all(|c| matches!(c, b'!' | b'?')) || t == b"e.p." {
        return Some(Token::Skip);
    }
    let marks = t.iter().rev().take_while(|c| matches!(c, b'!' | b'?')).count();
    let t = t.get(..t.len() - marks).unwrap_or_default();
    // Castling written with zeros.
    let fixed: Vec<u8>;
    let t = if t.starts_with(b"0-0") {
        fixed = t.iter().map(|&c| if c == b'0' { b'O' } else { c }).collect();
        fixed.as_slice()
    } else {
        t
    };
    SanPlus::from_ascii(t).ok().map(Token::Move)
}

/// The line scanner: checks every token and gives each mainline move its line.
fn scan(bytes: &[u8]) -> Result<Scan> {
    let mut cur = Cursor { b: bytes, i: 0, line: 1 };
    let mut out = Scan { games: Vec::new(), longest_tag_line: 0 };
    let mut game: Option<ScannedGame> = None;
    // Inside the movetext of `game`; the line of its result at depth 0, if any.
    let mut in_movetext = false;
    let mut result_line = None;
    let mut depth = 0usize;
    let mut variation_line = 0;
    loop {
        let number = out.games.len() + 1;
        let at = |line: usize| format!("game {number} (line {line})");
        let Some(c) = cur.peek() else { break };
        if c == b'\n' {
            cur.bump();
            if in_movetext && cur.game_ends_here() {
                if depth > 0 {
                    bail!(
                        "game {number}: the variation opened on line {variation_line} is never closed"
                    );
                }
                out.games.extend(game.take().filter(|g| g.has_tags || !g.moves.is_empty()));
                (in_movetext, result_line) = (false, None);
            }
            continue;
        }
        if is_space(c) {
            cur.bump();
            continue;
        }
        if c == b'%' && cur.at_line_start() {
            cur.skip_to_newline();
            continue;
        }
        let line = cur.line;
        let g = game.get_or_insert_with(|| ScannedGame { line, ..ScannedGame::default() });
        // Anything but a tag starts the movetext, where pgn-reader reads no more tags.
        in_movetext |= c != b'[';
        match c {
            b'[' if !in_movetext => {
                let len = cur.tag().map_err(|e| anyhow::anyhow!("game {number}: {e}"))?;
                out.longest_tag_line = out.longest_tag_line.max(len);
                g.has_tags = true;
            }
            b'[' => bail!("{}: a tag must stand at the start of its line", at(line)),
            b';' => cur.skip_to_newline(),
            b'{' => {
                cur.bump();
                cur.comment().map_err(|e| anyhow::anyhow!("game {number}: {e}"))?;
            }
            b'(' => {
                cur.bump();
                if depth == 0 {
                    variation_line = line;
                }
                depth += 1;
            }
            b')' => {
                if depth == 0 {
                    bail!("{}: `)` closes no variation", at(line));
                }
                cur.bump();
                depth -= 1;
            }
            b'$' => {
                cur.bump();
                let n = cur.token();
                if n.is_empty() || !n.iter().all(u8::is_ascii_digit) {
                    bail!("{}: `$` is not followed by a NAG number", at(line));
                }
            }
            _ => {
                let t = cur.token();
                match classify(t) {
                    Some(Token::Skip) => {}
                    Some(Token::Result) if depth == 0 => result_line = result_line.or(Some(line)),
                    Some(Token::Result | Token::Move(_)) if depth > 0 => {}
                    Some(Token::Move(m)) => match result_line {
                        Some(r) => bail!(
                            "{}: move {m} after the game's result (line {r}); a game ends at a \
                             blank line or a tag",
                            at(line)
                        ),
                        None => g.moves.push((m, line)),
                    },
                    _ => bail!("{}: unreadable move {:?}", at(line), String::from_utf8_lossy(t)),
                }
            }
        }
    }
    if depth > 0 {
        let number = out.games.len() + 1;
        bail!("game {number}: the variation opened on line {variation_line} is never closed");
    }
    out.games.extend(game.filter(|g| g.has_tags || !g.moves.is_empty()));
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn sans(g: &RawGame) -> Vec<String> {
        g.moves.iter().map(|(m, _)| m.to_string()).collect()
    }

    #[test]
    fn games_tags_moves_and_lines() {
        let pgn = b"[Event \"a \\\"b\\\"\"]\n[Site \"?\"]\n\n1. e4 {best} e5 (1... c5 2. Nf3 (2. c3)) 2.Nf3 $1 Nc6!? 3. Bb5 a6 *\n\n\
[Event \"b\"]\n% escape line\n1. d4 ; rest of line\nd5 2. c4 0-0 1-0\n";
        let games = read_games(pgn).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].tag("Event"), Some("a \"b\""));
        assert_eq!(sans(&games[0]), ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
        assert_eq!((games[0].number, games[0].line), (1, 1));
        assert_eq!((games[1].number, games[1].line), (2, 6));
        assert_eq!(sans(&games[1]), ["d4", "d5", "c4", "O-O"]);
        assert_eq!(games[1].moves[1].1, 9);
    }

    #[test]
    fn unreadable_tokens_are_errors_naming_game_and_line() {
        let err = read_games(b"[Event \"x\"]\n\n1. e4 e5 2. d4 d9 3. d5 *\n").unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("game 1") && msg.contains("line 3") && msg.contains("\"d9\""),
            "{msg}"
        );
        let err = read_games(b"This is not a PGN file.\nJust some text.\n").unwrap_err();
        assert!(format!("{err:#}").contains("unreadable move \"This\""), "{err:#}");
        for bad in [
            &b"1. e4 {open comment"[..],
            b"1. e4 (1. d4 *",
            b"1. e4 ) *",
            b"[Event x]\n1. e4 *",
            b"[Event \"x\n1. e4 *",
            b"1. e4 $x *",
            b"1. e4 } *",
        ] {
            assert!(read_games(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn games_without_results_and_tags_after_moves() {
        let games = read_games(b"1. e4 e5\n[Event \"b\"]\n1. d4\n").unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(sans(&games[0]), ["e4", "e5"]);
        assert_eq!(sans(&games[1]), ["d4"]);
        assert!(read_games(b"").unwrap().is_empty());
        assert!(read_games(b"\xEF\xBB\xBF\n  \n").unwrap().is_empty());
    }

    #[test]
    fn games_end_where_pgn_reader_ends_them() {
        // A blank line after movetext ends the game, as does a tag line.
        let games = read_games(b"1. e4 e5\n\n1. d4 d5\n[Event \"c\"]\n1. c4 *\n").unwrap();
        let all: Vec<Vec<String>> = games.iter().map(sans).collect();
        assert_eq!(all, [vec!["e4", "e5"], vec!["d4", "d5"], vec!["c4"]]);
        assert_eq!(games.iter().map(|g| g.line).collect::<Vec<_>>(), [1, 3, 4]);
        // Tags may be split by blank lines and `%` lines; a lone comment is no game.
        let games = read_games(b"[A \"1\"]\n\n% x\n[B \"2\"]\n\n1. e4 *\n\n{ the end }\n").unwrap();
        assert_eq!((games.len(), games[0].tags.len(), games[0].moves[0].1), (1, 2, 6));
        // A move after the result would join the game in pgn-reader: refused.
        let err = format!("{:#}", read_games(b"1. e4 *\n1. d4 *\n").unwrap_err());
        assert!(
            err.contains("game 1 (line 2)") && err.contains("after the game's result"),
            "{err}"
        );
        // A tag in the middle of a line would be skipped by pgn-reader: refused.
        let err = format!("{:#}", read_games(b"1. e4 e5 [Event \"x\"] *\n").unwrap_err());
        assert!(err.contains("line 1") && err.contains("tag"), "{err}");
        // A variation cut by a blank line is never closed.
        let err = format!("{:#}", read_games(b"1. e4 (1. d4\n\nd5) e5 *\n").unwrap_err());
        assert!(err.contains("line 1") && err.contains("never closed"), "{err}");
    }

    #[test]
    fn long_tags_escapes_and_glued_en_passant() {
        let long = "x".repeat(5000);
        let pgn = format!("[Annotator \"{long}\"]\n[Event \"a \\\\ b\"]\n\n1. e4 *\n");
        let games = read_games(pgn.as_bytes()).unwrap();
        assert_eq!(games[0].tag("Annotator"), Some(long.as_str()));
        assert_eq!(games[0].tag("Event"), Some("a \\ b"));
        // `e.p.` glued to its move is not read by pgn-reader: refused, never dropped.
        let err = format!("{:#}", read_games(b"1. e4 d5 2. e5 f5 3. exf6e.p. *").unwrap_err());
        assert!(err.contains("exf6e.p."), "{err}");
        let games = read_games(b"1. e4 d5 2. e5 f5 3. exf6 e.p. *").unwrap();
        assert_eq!(sans(&games[0]).last().map(String::as_str), Some("exf6"));
    }
}
