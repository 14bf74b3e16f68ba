//! Static exchange evaluation: the material balance of the capture sequence on
//! one square, each side capturing with its least valuable attacker and free to
//! stop. Pins are ignored.

use cozy_chess::{
    BitBoard, Board, Color, Move, Piece, Square, get_bishop_moves, get_king_moves,
    get_knight_moves, get_pawn_attacks, get_rook_moves,
};

/// Exchange values (pawn, knight, bishop, rook, queen, king).
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20_000];

/// Whether `mv` is castling in cozy-chess notation (king takes own rook).
pub fn is_castle(board: &Board, mv: Move) -> bool {
    board.colors(board.side_to_move()).has(mv.to)
}

/// Whether `mv` is an en-passant capture.
pub fn is_en_passant(board: &Board, mv: Move) -> bool {
    board.piece_on(mv.from) == Some(Piece::Pawn)
        && mv.from.file() != mv.to.file()
        && board.piece_on(mv.to).is_none()
}

/// Piece captured by `mv`, if any.
pub fn captured(board: &Board, mv: Move) -> Option<Piece> {
    if board.colors(!board.side_to_move()).has(mv.to) {
        board.piece_on(mv.to)
    } else if is_en_passant(board, mv) {
        Some(Piece::Pawn)
    } else {
        None
    }
}

fn attackers_to(board: &Board, sq: Square, occ: BitBoard) -> BitBoard {
    let rooks = board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    let bishops = board.pieces(Piece::Bishop) | board.pieces(Piece::Queen);
    (get_pawn_attacks(sq, Color::Black) & board.colored_pieces(Color::White, Piece::Pawn))
        | (get_pawn_attacks(sq, Color::White) & board.colored_pieces(Color::Black, Piece::Pawn))
        | (get_knight_moves(sq) & board.pieces(Piece::Knight))
        | (get_king_moves(sq) & board.pieces(Piece::King))
        | (get_rook_moves(sq, occ) & rooks)
        | (get_bishop_moves(sq, occ) & bishops)
}

/// Material gain of `mv` for the side to move after the best exchange sequence.
pub fn see(board: &Board, mv: Move) -> i32 {
    if is_castle(board, mv) {
        return 0;
    }
    let Some(mover) = board.piece_on(mv.from) else {
        return 0;
    };
    let mut occ = board.occupied() ^ mv.from.bitboard();
    let mut gain = [0i32; 32];
    gain[0] = captured(board, mv).map_or(0, |p| SEE_VALUE[p as usize]);
    let mut on_square = mover;
    if let Some(p) = mv.promotion {
        gain[0] += SEE_VALUE[p as usize] - SEE_VALUE[0];
        on_square = p;
    }
    if is_en_passant(board, mv) {
        let cap_sq = Square::new(mv.to.file(), mv.from.rank());
        occ ^= cap_sq.bitboard();
    }
    let mut attackers = attackers_to(board, mv.to, occ) & occ;
    let mut side = !board.side_to_move();
    let mut d = 0;
    loop {
        let ours = attackers & board.colors(side);
        if ours.is_empty() {
            break;
        }
        let Some((piece, from)) = Piece::ALL
            .iter()
            .find_map(|&p| (ours & board.pieces(p)).next_square().map(|sq| (p, sq)))
        else {
            break;
        };
        // A king may only recapture when the square is no longer defended.
        if piece == Piece::King && !(attackers & board.colors(!side) & occ).is_empty() {
            break;
        }
        d += 1;
        if d >= gain.len() {
            break;
        }
        gain[d] = SEE_VALUE[on_square as usize] - gain[d - 1];
        if (-gain[d - 1]).max(gain[d]) < 0 {
            break;
        }
        occ ^= from.bitboard();
        attackers = attackers_to(board, mv.to, occ) & occ;
        on_square = piece;
        side = !side;
    }
    while d > 0 {
        gain[d - 1] = -((-gain[d - 1]).max(gain[d]));
        d -= 1;
    }
    gain[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn see_of(fen: &str, mv: &str) -> i32 {
        let b = Board::from_fen(fen, false).unwrap();
        see(&b, mv.parse().unwrap())
    }

    #[test]
    fn undefended_pawn_wins_a_pawn() {
        assert_eq!(see_of("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5"), 100);
    }

    #[test]
    fn queen_takes_defended_pawn_loses() {
        assert!(see_of("4k3/8/3p4/4p3/8/8/8/4KQ2 w - - 0 1", "f1f7") <= 0);
        assert_eq!(see_of("4k3/8/3p4/4p3/8/8/4Q3/4K3 w - - 0 1", "e2e5"), 100 - 950);
    }

    #[test]
    fn xray_recapture_is_seen() {
        // Rook takes a defended knight, backed by a second rook: N for R? No:
        // Rxd5 Rxd5 Rxd5 -> white wins N + R - R = 320.
        let v = see_of("3r2k1/8/8/3n4/8/8/3R4/3RK3 w - - 0 1", "d2d5");
        assert_eq!(v, 320);
    }
}
