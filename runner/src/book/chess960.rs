//! The 960 start positions of Chess960, computed (not downloaded) in the standard numbering
//! (Scharnagl's: 0..=959, number 518 is the standard start position), written as an EPD book for
//! `runner book --chess960`.
//!
//! Number `n` places the pieces on the empty back rank in this order: the light-squared bishop
//! on file b, d, f or h (`n % 4`), the dark-squared bishop on a, c, e or g (`n / 4 % 4`), the
//! queen on the `(n / 16 % 6)`-th empty square, the two knights by the code `n / 96` (0..=9, the
//! pairs of the five empty squares in order: 01 02 03 04 12 13 14 23 24 34), and finally rook,
//! king, rook on the three squares left.

use anyhow::{Result, anyhow};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

/// How many start positions there are.
pub const COUNT: u16 = 960;

/// The back rank of position `n` (White's pieces, files a to h, as uppercase letters).
pub fn back_rank(n: u16) -> Option<[u8; 8]> {
    if n >= COUNT {
        return None;
    }
    let mut rank = [0u8; 8];
    let n = usize::from(n);
    rank[(n % 4) * 2 + 1] = b'B';
    rank[(n / 4 % 4) * 2] = b'B';
    place_nth_empty(&mut rank, n / 16 % 6, b'Q');
    const KNIGHTS: [(usize, usize); 10] =
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];
    let (a, b) = KNIGHTS[n / 96];
    // The higher one first, so that the lower index still points at the same square.
    place_nth_empty(&mut rank, b, b'N');
    place_nth_empty(&mut rank, a, b'N');
    for piece in [b'R', b'K', b'R'] {
        place_nth_empty(&mut rank, 0, piece);
    }
    Some(rank)
}

fn place_nth_empty(rank: &mut [u8; 8], nth: usize, piece: u8) {
    if let Some(i) = (0..8).filter(|&i| rank[i] == 0).nth(nth) {
        rank[i] = piece;
    }
}

/// The EPD line of position `n`: Shredder-FEN castling rights (the rooks' files, e.g. `HAha`),
/// the move counters as `hmvc`/`fmvn` operations and the number as `id`.
pub fn epd_line(n: u16) -> Result<String> {
    let rank = back_rank(n).ok_or_else(|| anyhow!("Chess960 positions are numbered 0 to 959"))?;
    let white = String::from_utf8_lossy(&rank).into_owned();
    let black = white.to_ascii_lowercase();
    let rooks: Vec<char> =
        (0..8u8).filter(|&i| rank[usize::from(i)] == b'R').map(|i| char::from(b'a' + i)).collect();
    // King side (the rook on the higher file) first, as Shredder-FEN writes it.
    let castling: String = rooks
        .iter()
        .rev()
        .map(|c| c.to_ascii_uppercase())
        .chain(rooks.iter().rev().copied())
        .collect();
    Ok(format!(
        "{black}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - hmvc 0; fmvn 1; id \"chess960 #{n}\";"
    ))
}

/// The numbers of a book: all 960 in order, or `count` of them drawn with `seed` (in increasing
/// order).
pub fn numbers(count: Option<usize>, seed: u64) -> Vec<u16> {
    let mut all: Vec<u16> = (0..COUNT).collect();
    match count {
        Some(c) if c < all.len() => {
            all.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
            all.truncate(c);
            all.sort_unstable();
            all
        }
        _ => all,
    }
}

/// The EPD text of a Chess960 book (one line per position).
pub fn book_text(count: Option<usize>, seed: u64) -> Result<String> {
    let mut text = String::new();
    for n in numbers(count, seed) {
        text.push_str(&epd_line(n)?);
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::openings::epd_line_to_fen;
    use crate::plan::variant::Variant;

    #[test]
    fn known_numbers_match_the_standard_table() {
        // Reference: python-chess `chess.Board.from_chess960_pos(n)`.
        for (n, rank) in [
            (0, "BBQNNRKR"),
            (1, "BQNBNRKR"),
            (2, "BQNNRBKR"),
            (100, "QBBNRNKR"),
            (518, "RNBQKBNR"),
            (959, "RKRNNQBB"),
        ] {
            assert_eq!(
                back_rank(n).map(|r| String::from_utf8_lossy(&r).into_owned()).as_deref(),
                Some(rank),
                "{n}"
            );
        }
        assert!(back_rank(960).is_none());
        assert_eq!(
            epd_line(518).unwrap(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - hmvc 0; fmvn 1; id \"chess960 #518\";"
        );
    }

    #[test]
    fn all_960_are_distinct_legal_chess960_positions() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..COUNT {
            let rank = back_rank(n).unwrap();
            assert!(seen.insert(rank), "{n} repeats");
            let king = rank.iter().position(|&p| p == b'K').unwrap();
            let rooks: Vec<usize> = (0..8).filter(|&i| rank[i] == b'R').collect();
            assert!(rooks[0] < king && king < rooks[1], "{n}: king between the rooks");
            let bishops: Vec<usize> = (0..8).filter(|&i| rank[i] == b'B').collect();
            assert_ne!(bishops[0] % 2, bishops[1] % 2, "{n}: bishops on both colours");
            let fen = epd_line_to_fen(&epd_line(n).unwrap(), Variant::Fischerandom).unwrap();
            assert!(fen.ends_with(" w KQkq - 0 1"), "{n}: {fen}");
        }
        assert_eq!(seen.len(), 960);
    }

    #[test]
    fn samples_are_seeded_and_sorted() {
        let a = numbers(Some(10), 7);
        assert_eq!(a, numbers(Some(10), 7));
        assert_ne!(a, numbers(Some(10), 8));
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(numbers(None, 7).len(), 960);
        assert_eq!(numbers(Some(5000), 7).len(), 960);
    }
}
