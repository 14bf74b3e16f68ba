//! Static evaluation in centipawns (100 = one pawn), from the side to move's
//! point of view, tapered between middlegame (mg) and endgame (eg) weights by
//! the remaining non-pawn material.
//!
//! Terms: material, piece-square tables (built from simple geometric rules:
//! centralisation, advancement, king shelter), pawn structure (passed,
//! isolated, doubled), mobility, king safety (attackers on the king zone and
//! the pawn shield), rooks on open files and the bishop pair. The weights
//! are our own, chosen from general chess knowledge, not tuned.

use std::sync::LazyLock;

use cozy_chess::{
    BitBoard, Board, Color, Piece, Rank, Square, get_bishop_moves, get_king_moves,
    get_knight_moves, get_pawn_attacks, get_rook_moves,
};

use crate::score::EVAL_LIMIT;

/// (mg, eg) pair.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct S(pub i32, pub i32);

impl std::ops::AddAssign for S {
    fn add_assign(&mut self, o: S) {
        self.0 += o.0;
        self.1 += o.1;
    }
}
impl std::ops::SubAssign for S {
    fn sub_assign(&mut self, o: S) {
        self.0 -= o.0;
        self.1 -= o.1;
    }
}

/// Material values (pawn, knight, bishop, rook, queen, king).
pub const MATERIAL: [S; 6] =
    [S(85, 105), S(320, 300), S(335, 315), S(470, 525), S(960, 960), S(0, 0)];

/// Phase weight of each piece; 24 = full middlegame.
const PHASE: [i32; 6] = [0, 1, 1, 2, 4, 0];
const PHASE_MAX: i32 = 24;

const PASSED: [S; 8] =
    [S(0, 0), S(0, 8), S(4, 14), S(10, 24), S(22, 42), S(40, 75), S(65, 120), S(0, 0)];
const ISOLATED: S = S(-10, -14);
const DOUBLED: S = S(-8, -20);
const BISHOP_PAIR: S = S(30, 50);
const ROOK_OPEN: S = S(22, 8);
const ROOK_SEMI_OPEN: S = S(10, 5);
const TEMPO: i32 = 10;
/// Mobility per reachable square beyond a typical count, per piece.
const MOBILITY: [(S, i32); 4] = [
    (S(4, 4), 4),  // knight
    (S(5, 5), 6),  // bishop
    (S(2, 4), 7),  // rook
    (S(1, 2), 13), // queen
];
/// Weight of an attacker on the enemy king zone (N, B, R, Q).
const KING_ATTACK_WEIGHT: [i32; 4] = [2, 2, 3, 5];
const SHIELD_NEAR: i32 = 12;
const SHIELD_FAR: i32 = 6;

fn centrality(sq: Square) -> i32 {
    // 0 at the corners .. 6 in the centre (Manhattan distance to the centre).
    let f = sq.file() as i32;
    let r = sq.rank() as i32;
    let df = if f < 4 { 3 - f } else { f - 4 };
    let dr = if r < 4 { 3 - r } else { r - 4 };
    6 - df - dr
}

/// Piece-square bonus for a white piece on `sq` (black uses the mirrored square).
fn pst_value(piece: Piece, sq: Square) -> S {
    let c = centrality(sq);
    let f = sq.file() as i32;
    let r = sq.rank() as i32;
    match piece {
        Piece::Pawn => {
            let centre_file = matches!(f, 3 | 4);
            let near_centre = matches!(f, 2 | 5);
            let mg_adv = [0, 0, 2, 6, 14, 26, 45, 0][r as usize];
            let mut mg = mg_adv;
            if centre_file && (3..=4).contains(&r) {
                mg += 14;
            } else if near_centre && (3..=4).contains(&r) {
                mg += 6;
            }
            if centre_file && r == 1 {
                mg -= 6;
            }
            let eg = [0, 0, 4, 8, 14, 24, 40, 0][r as usize];
            S(mg, eg)
        }
        Piece::Knight => {
            let mut mg = 7 * c - 22;
            if r == 0 {
                mg -= 8;
            }
            S(mg, 6 * c - 18)
        }
        Piece::Bishop => {
            let diag = if f == r || f + r == 7 { 6 } else { 0 };
            let mut mg = 3 * c - 8 + diag;
            if r == 0 {
                mg -= 6;
            }
            S(mg, 3 * c - 9)
        }
        Piece::Rook => {
            let mg = if r == 6 {
                18
            } else if matches!(f, 3 | 4) {
                4
            } else {
                0
            };
            S(mg, if r == 6 { 10 } else { 0 })
        }
        Piece::Queen => S(c - 4, 3 * c - 9),
        Piece::King => {
            let file_bonus = [18, 24, 8, -8, -12, 6, 26, 16][f as usize];
            let mg = file_bonus - 16 * r;
            S(mg, 9 * c - 27)
        }
    }
}

struct Tables {
    /// [piece][square] for white.
    pst: [[S; 64]; 6],
    /// [color][square]: squares in front on the same and adjacent files.
    passed_mask: [[BitBoard; 64]; 2],
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut pst = [[S::default(); 64]; 6];
    let mut passed_mask = [[BitBoard::EMPTY; 64]; 2];
    for (pi, &piece) in Piece::ALL.iter().enumerate() {
        for sq in Square::ALL {
            pst[pi][sq as usize] = pst_value(piece, sq);
        }
    }
    for sq in Square::ALL {
        let files = sq.file().bitboard() | sq.file().adjacent();
        for color in [Color::White, Color::Black] {
            let mut front = BitBoard::EMPTY;
            for r in Rank::ALL {
                let ahead = match color {
                    Color::White => r as usize > sq.rank() as usize,
                    Color::Black => (r as usize) < sq.rank() as usize,
                };
                if ahead {
                    front |= r.bitboard();
                }
            }
            passed_mask[color as usize][sq as usize] = files & front;
        }
    }
    Tables { pst, passed_mask }
});

fn relative(sq: Square, color: Color) -> Square {
    match color {
        Color::White => sq,
        Color::Black => sq.flip_rank(),
    }
}

fn pawn_attacks_of(pawns: BitBoard, color: Color) -> BitBoard {
    let mut bb = BitBoard::EMPTY;
    for sq in pawns {
        bb |= get_pawn_attacks(sq, color);
    }
    bb
}

fn chebyshev(a: Square, b: Square) -> i32 {
    let df = (a.file() as i32 - b.file() as i32).abs();
    let dr = (a.rank() as i32 - b.rank() as i32).abs();
    df.max(dr)
}

/// Game phase: 24 with all pieces on the board, 0 with only kings and pawns.
pub fn phase(board: &Board) -> i32 {
    let mut p = 0;
    for piece in [Piece::Knight, Piece::Bishop, Piece::Rook, Piece::Queen] {
        p += board.pieces(piece).len() as i32 * PHASE[piece as usize];
    }
    p.min(PHASE_MAX)
}

/// Evaluation terms for one side (white's point of view for `color` = white).
// One function on purpose: an evaluation's terms read as one list (the field's habit).
fn side_terms(board: &Board, color: Color, t: &Tables) -> S {
    let mut s = S::default();
    let them = !color;
    let own = board.colors(color);
    let occ = board.occupied();
    let own_pawns = board.colored_pieces(color, Piece::Pawn);
    let their_pawns = board.colored_pieces(them, Piece::Pawn);
    let their_pawn_attacks = pawn_attacks_of(their_pawns, them);
    let their_king = board.king(them);
    let our_king = board.king(color);
    let king_zone = get_king_moves(their_king) | their_king.bitboard();

    // Material and piece-square tables.
    for piece in Piece::ALL {
        for sq in board.colored_pieces(color, piece) {
            s += MATERIAL[piece as usize];
            s += t.pst[piece as usize][relative(sq, color) as usize];
        }
    }

    // Pawn structure.
    for sq in own_pawns {
        let file = sq.file();
        let on_file = own_pawns & file.bitboard();
        if (own_pawns & file.adjacent()).is_empty() {
            s += ISOLATED;
        }
        // Count each extra pawn on a file once: penalise the rearmost ones.
        let front_same_file = t.passed_mask[color as usize][sq as usize] & file.bitboard();
        if !(on_file & front_same_file).is_empty() {
            s += DOUBLED;
        }
        if (t.passed_mask[color as usize][sq as usize] & their_pawns).is_empty()
            && (front_same_file & own_pawns).is_empty()
        {
            let rr = relative(sq, color).rank() as usize;
            s += PASSED[rr];
            if rr >= 3 {
                let stop = Square::new(
                    file,
                    match color {
                        Color::White => Rank::index(rr + 1),
                        Color::Black => Rank::index(6 - rr),
                    },
                );
                let scale = rr as i32 - 2;
                s.1 += scale * (4 * chebyshev(their_king, stop) - 2 * chebyshev(our_king, stop));
                if !occ.has(stop) {
                    s.1 += 4 * scale;
                }
            }
        }
    }

    // Mobility, king attacks, rooks on open files.
    let mobility_area = !own & !their_pawn_attacks;
    let mut attackers = 0;
    let mut attack_units = 0;
    for (i, piece) in
        [Piece::Knight, Piece::Bishop, Piece::Rook, Piece::Queen].into_iter().enumerate()
    {
        for sq in board.colored_pieces(color, piece) {
            let attacks = match piece {
                Piece::Knight => get_knight_moves(sq),
                Piece::Bishop => get_bishop_moves(sq, occ),
                Piece::Rook => get_rook_moves(sq, occ),
                _ => get_bishop_moves(sq, occ) | get_rook_moves(sq, occ),
            };
            let (w, typical) = MOBILITY[i];
            let n = (attacks & mobility_area).len() as i32 - typical;
            s.0 += w.0 * n;
            s.1 += w.1 * n;
            let hits = (attacks & king_zone).len() as i32;
            if hits > 0 {
                attackers += 1;
                attack_units += KING_ATTACK_WEIGHT[i] + hits;
            }
            if piece == Piece::Rook {
                let f = sq.file().bitboard();
                if (f & own_pawns).is_empty() {
                    s += if (f & their_pawns).is_empty() { ROOK_OPEN } else { ROOK_SEMI_OPEN };
                }
            }
        }
    }
    // King safety (as a bonus to the attacker), only with a queen or enough attackers.
    let has_queen = !board.colored_pieces(color, Piece::Queen).is_empty();
    if attackers >= 2 && (has_queen || attackers >= 3) {
        s.0 += (attack_units * attack_units / 3).min(450);
    }
    // Pawn shield in front of our own king (middlegame only).
    let kr = relative(our_king, color).rank() as usize;
    if kr <= 1 {
        let files = our_king.file().bitboard() | our_king.file().adjacent();
        let (near, far) = match color {
            Color::White => (Rank::index(kr + 1), Rank::index(kr + 2)),
            Color::Black => (Rank::index(7 - kr - 1), Rank::index(7 - kr - 2)),
        };
        let n_near = (own_pawns & files & near.bitboard()).len() as i32;
        let n_far = (own_pawns & files & far.bitboard()).len() as i32;
        s.0 += SHIELD_NEAR * n_near + SHIELD_FAR * n_far - 20;
    }
    if board.colored_pieces(color, Piece::Bishop).len() >= 2 {
        s += BISHOP_PAIR;
    }
    s
}

fn insufficient(board: &Board) -> bool {
    let heavy = board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
    heavy.is_empty() && (board.pieces(Piece::Knight) | board.pieces(Piece::Bishop)).len() <= 1
}

/// Evaluation for the side to move, clamped to `(-EVAL_LIMIT, EVAL_LIMIT)`.
pub fn evaluate(board: &Board) -> i32 {
    if insufficient(board) {
        return 0;
    }
    let t = &*TABLES;
    let mut s = side_terms(board, Color::White, t);
    s -= side_terms(board, Color::Black, t);
    let ph = phase(board);
    let mut eg = s.1;
    // Without pawns, a side needs more than a minor piece's edge to win.
    let strong = if eg > 0 { Color::White } else { Color::Black };
    if board.colored_pieces(strong, Piece::Pawn).is_empty() && s.1.abs() < 400 {
        eg /= 4;
    }
    let mut v = (s.0 * ph + eg * (PHASE_MAX - ph)) / PHASE_MAX;
    if board.side_to_move() == Color::Black {
        v = -v;
    }
    (v + TEMPO).clamp(-EVAL_LIMIT + 1, EVAL_LIMIT - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(fen: &str) -> i32 {
        evaluate(&Board::from_fen(fen, false).unwrap())
    }

    #[test]
    fn start_position_is_near_balanced() {
        let v = ev("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(v.abs() <= 30, "{v}");
    }

    #[test]
    fn evaluation_is_colour_symmetric() {
        let fens = [
            (
                "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
                "rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/2N2N2/PPPP1PPP/R1BQKB1R b KQkq - 4 4",
            ),
            ("8/5k2/8/3P4/8/8/5K2/8 w - - 0 1", "8/5k2/8/8/3p4/8/5K2/8 b - - 0 1"),
        ];
        for (a, b) in fens {
            assert_eq!(ev(a), ev(b), "{a} vs {b}");
        }
    }

    #[test]
    fn extra_material_is_good() {
        // White is a queen up.
        assert!(ev("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") > 700);
        // Same, black to move: bad for black.
        assert!(ev("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1") < -700);
    }

    #[test]
    fn advanced_passer_beats_blocked_pawn() {
        let passed = ev("4k3/8/3P4/8/8/8/8/4K3 w - - 0 1");
        let back = ev("4k3/8/8/8/8/8/3P4/4K3 w - - 0 1");
        assert!(passed > back + 40, "{passed} {back}");
    }

    #[test]
    fn lone_minor_is_a_draw() {
        assert_eq!(ev("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1"), 0);
    }
}
