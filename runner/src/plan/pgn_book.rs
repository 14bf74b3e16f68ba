//! A strict reader for the games of a PGN opening book: tag pairs and the mainline's moves, each
//! with its line number. Comments, NAGs, annotation marks, `%` and `;` lines and variations are
//! skipped; every other token must be a move number, a move in SAN or a result, otherwise the
//! book is refused naming the game and line (a typo such as `d9`, or text that is not PGN at
//! all, never silently becomes part of an opening). Moves are checked for legality by the caller,
//! which knows the start position and the variant.

use anyhow::{Result, bail};
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

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Bytes that end a movetext token.
fn ends_token(c: u8) -> bool {
    is_space(c) || matches!(c, b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b'$')
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
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
        self.i == 0 || self.b[self.i - 1] == b'\n'
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == b'\n' {
                break;
            }
        }
    }

    /// Skips spaces, `%` escape lines and `;` comments.
    fn skip_blank(&mut self) {
        while let Some(c) = self.peek() {
            if is_space(c) {
                self.bump();
            } else if c == b';' || (c == b'%' && self.at_line_start()) {
                self.skip_line();
            } else {
                break;
            }
        }
    }

    /// `[Name "value"]`, the `[` already seen.
    fn tag(&mut self) -> Result<(String, String)> {
        let line = self.line;
        self.bump();
        while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
            self.bump();
        }
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.bump();
        }
        let name = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
        while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
            self.bump();
        }
        if name.is_empty() || self.bump() != Some(b'"') {
            bail!("line {line}: malformed tag (expected [Name \"value\"])");
        }
        let mut value = Vec::new();
        loop {
            match self.bump() {
                Some(b'\\') => match self.bump() {
                    Some(c) if c != b'\n' => value.push(c),
                    _ => bail!("line {line}: tag {name} is not closed on its line"),
                },
                Some(b'"') => break,
                Some(b'\n') | None => bail!("line {line}: tag {name} is not closed on its line"),
                Some(c) => value.push(c),
            }
        }
        while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
            self.bump();
        }
        if self.bump() != Some(b']') {
            bail!("line {line}: tag {name} has no closing ]");
        }
        Ok((name, String::from_utf8_lossy(&value).into_owned()))
    }

    /// A `{...}` comment, the `{` already seen.
    fn comment(&mut self) -> Result<()> {
        let line = self.line;
        self.bump();
        while let Some(c) = self.bump() {
            if c == b'}' {
                return Ok(());
            }
        }
        bail!("line {line}: comment {{ is never closed")
    }

    /// The bytes of a movetext token.
    fn token(&mut self) -> &[u8] {
        let start = self.i;
        while self.peek().is_some_and(|c| !ends_token(c)) {
            self.bump();
        }
        if self.i == start {
            // A lone delimiter that starts no construct (`}` or `]`): a token of its own.
            self.bump();
        }
        &self.b[start..self.i]
    }
}

/// What a movetext token is.
enum Token {
    /// Move numbers, annotation marks (`!?`), `e.p.`: nothing to do.
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
    let dots = t[digits..].iter().take_while(|&&c| c == b'.').count();
    if digits > 0 && dots == t.len() - digits {
        return Some(Token::Skip);
    }
    let t = if digits > 0 && dots > 0 { &t[digits + dots..] } else { t };
    if t.iter().all(|c| matches!(c, b'!' | b'?')) || t == b"e.p." {
        return Some(Token::Skip);
    }
    let t = t.strip_suffix(b"e.p.").unwrap_or(t);
    let end = t.len() - t.iter().rev().take_while(|c| matches!(c, b'!' | b'?')).count();
    let t = &t[..end];
    // Castling written with zeros.
    let fixed: Vec<u8>;
    let t = if t.starts_with(b"0-0") {
        fixed = t.iter().map(|&c| if c == b'0' { b'O' } else { c }).collect();
        &fixed[..]
    } else {
        t
    };
    SanPlus::from_ascii(t).ok().map(Token::Move)
}

/// Splits PGN bytes into games. Errors name the game and line.
pub fn read_games(bytes: &[u8]) -> Result<Vec<RawGame>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut lx = Lexer { b: bytes, i: 0, line: 1 };
    let mut games = Vec::new();
    let mut game: Option<RawGame> = None;
    // Inside the movetext of `game` (tags after it start a new game).
    let mut in_movetext = false;
    let mut depth = 0usize;
    let mut variation_line = 0;
    loop {
        lx.skip_blank();
        let Some(c) = lx.peek() else { break };
        let number = games.len() + 1;
        let g = game.get_or_insert_with(|| RawGame { number, line: lx.line, ..RawGame::default() });
        let at = |line: usize| format!("game {number} (line {line})");
        let line = lx.line;
        match c {
            b'[' if depth == 0 => {
                if in_movetext {
                    games.push(game.take().unwrap_or_default());
                    in_movetext = false;
                    continue;
                }
                let tag = lx.tag().map_err(|e| anyhow::anyhow!("game {number}: {e}"))?;
                g.tags.push(tag);
            }
            b'{' => lx.comment().map_err(|e| anyhow::anyhow!("game {number}: {e}"))?,
            b'(' => {
                lx.bump();
                if depth == 0 {
                    variation_line = lx.line;
                }
                depth += 1;
                in_movetext = true;
            }
            b')' => {
                if depth == 0 {
                    bail!("{}: `)` closes no variation", at(line));
                }
                lx.bump();
                depth -= 1;
            }
            b'$' => {
                lx.bump();
                let n = lx.token();
                if n.is_empty() || !n.iter().all(u8::is_ascii_digit) {
                    bail!("{}: `$` is not followed by a NAG number", at(line));
                }
            }
            _ => {
                let t = lx.token().to_vec();
                in_movetext = true;
                match classify(&t) {
                    Some(Token::Skip) => {}
                    Some(Token::Result) if depth == 0 => {
                        games.push(game.take().unwrap_or_default());
                        in_movetext = false;
                    }
                    Some(Token::Result) => {}
                    Some(Token::Move(m)) if depth == 0 => g.moves.push((m, line)),
                    Some(Token::Move(_)) => {}
                    None => {
                        bail!("{}: unreadable move {:?}", at(line), String::from_utf8_lossy(&t))
                    }
                }
            }
        }
    }
    if depth > 0 {
        let number = games.len() + 1;
        bail!("game {number}: the variation opened on line {variation_line} is never closed");
    }
    if let Some(g) = game {
        games.push(g);
    }
    Ok(games)
}

#[cfg(test)]
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
}
