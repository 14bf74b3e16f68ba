//! A game position: the current board plus the hashes of the positions that
//! led to it (for repetition detection), built from UCI `position` input.

use cozy_chess::{Board, Move, util};

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

/// Parses a UCI move string legal on `board`. In standard mode castling may be
/// written e1g1 (converted) or as king-takes-rook; in Chess960 mode only the latter.
pub fn parse_move(board: &Board, s: &str, chess960: bool) -> Option<Move> {
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
