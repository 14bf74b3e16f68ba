//! A game position: the current board plus the hashes of the positions that
//! led to it (for repetition detection), built from UCI `position` input.

use cozy_chess::{Board, Color, File, Move, Piece, Rank, util};

#[derive(Clone, Debug, Default)]
pub struct Position {
    pub board: Board,
    /// Hashes of earlier positions of the game, oldest first.
    pub history: Vec<u64>,
}

/// Parses a FEN in either X-FEN/standard or Shredder castling notation.
pub fn parse_fen(fen: &str) -> Result<Board, String> {
    let fen = fen.trim();
    Board::from_fen(fen, false)
        .or_else(|_| Board::from_fen(fen, true))
        .or_else(|_| {
            // Tolerate a FEN without move counters.
            let fields = fen.split_whitespace().count();
            if fields == 4 {
                Board::from_fen(&format!("{fen} 0 1"), false)
            } else {
                Err(cozy_chess::FenParseError::InvalidBoard)
            }
        })
        .map_err(|e| format!("invalid FEN {fen:?}: {e:?}"))
}

/// Parses a Chess960 FEN. The castling field may be Shredder-FEN (the rook's
/// file: `HAha`) or X-FEN (`K`/`Q` for the outermost rook on that side of the
/// king, a file letter for an inner one), or a mix; a FEN without move
/// counters is accepted.
pub fn parse_fen_960(fen: &str) -> Result<Board, String> {
    let fen = fen.trim();
    let err = |e: &dyn std::fmt::Debug| format!("invalid FEN {fen:?}: {e:?}");
    let mut fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.len() == 4 {
        fields.extend(["0", "1"]);
    }
    if fields.len() != 6 {
        return Err(err(&"expected 6 fields (or 4 without the move counters)"));
    }
    let castling = fields[2];
    let mut plain = fields.clone();
    plain[2] = "-";
    let board = Board::from_fen(&plain.join(" "), false).map_err(|e| err(&e))?;
    if castling == "-" {
        return Ok(board);
    }
    let mut shredder = String::new();
    for c in castling.chars() {
        let color = match c {
            'A'..='Z' => Color::White,
            'a'..='z' => Color::Black,
            _ => return Err(err(&format!("castling right {c:?}"))),
        };
        let king = board.king(color);
        let back = Rank::First.relative_to(color);
        let rooks = board.colored_pieces(color, Piece::Rook) & back.bitboard();
        let files = rooks.into_iter().map(|sq| sq.file());
        let file = match c.to_ascii_lowercase() {
            'k' => files.filter(|&f| f > king.file()).max(),
            'q' => files.filter(|&f| f < king.file()).min(),
            f => File::try_from(f).ok(),
        };
        let Some(file) = file.filter(|_| king.rank() == back) else {
            return Err(err(&format!("no castling rook for {c:?}")));
        };
        let letter = char::from(file);
        shredder.push(if color == Color::White { letter.to_ascii_uppercase() } else { letter });
    }
    fields[2] = &shredder;
    Board::from_fen(&fields.join(" "), true).map_err(|e| err(&e))
}

/// Parses a UCI move string legal on `board`. In standard mode castling may be
/// written e1g1 (converted) or as king-takes-rook; in Chess960 mode only the latter.
pub fn parse_move(board: &Board, s: &str, chess960: bool) -> Option<Move> {
    let well_formed =
        s.len() == 4 || (s.len() == 5 && matches!(s.as_bytes()[4], b'n' | b'b' | b'r' | b'q'));
    if !well_formed {
        return None;
    }
    let mv =
        if chess960 { s.parse::<Move>().ok()? } else { util::parse_uci_move(board, s).ok()? };
    board.is_legal(mv).then_some(mv)
}

/// Formats a move for UCI output.
pub fn format_move(board: &Board, mv: Move, chess960: bool) -> String {
    if chess960 { mv.to_string() } else { util::display_uci_move(board, mv).to_string() }
}

impl Position {
    pub fn from_fen(fen: &str) -> Result<Self, String> {
        Ok(Self { board: parse_fen(fen)?, history: Vec::new() })
    }

    /// [`Position::from_fen`], or with `chess960` [`parse_fen_960`].
    pub fn from_fen_mode(fen: &str, chess960: bool) -> Result<Self, String> {
        if chess960 {
            Ok(Self { board: parse_fen_960(fen)?, history: Vec::new() })
        } else {
            Self::from_fen(fen)
        }
    }

    pub fn play(&mut self, mv: Move) {
        self.history.push(self.board.hash());
        self.board.play_unchecked(mv);
    }

    /// Plays UCI move strings; stops at the first illegal one and returns it.
    pub fn play_uci_moves<'a>(
        &mut self,
        moves: impl IntoIterator<Item = &'a str>,
        chess960: bool,
    ) -> Result<(), String> {
        for s in moves {
            match parse_move(&self.board, s, chess960) {
                Some(mv) => self.play(mv),
                None => return Err(s.to_string()),
            }
        }
        Ok(())
    }
}
