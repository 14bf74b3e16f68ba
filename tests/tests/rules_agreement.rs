//! shakmaty (the runner's referee) and cozy-chess (the engine's rules) must
//! agree: legal move sets as UCI strings, in standard notation (e1g1) and in
//! Chess960 notation (king takes rook), check, checkmate and stalemate, on the
//! perft suite, special positions (castling, en passant, promotion) and seeded
//! random playouts from the standard and from Chess960 start positions.

use std::collections::BTreeSet;

use cozy_chess::util::display_uci_move;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    // En passant available, and en passant that would expose the king.
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",
    // Castling through and out of check.
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1",
    // Mate and stalemate.
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
];

/// Chess960 start positions by Scharnagl number, with castling moves soon available.
const CHESS960: &[&str] = &[
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
    "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
    "qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9",
];

fn cozy(fen: &str, chess960: bool) -> cozy_chess::Board {
    cozy_chess::Board::from_fen(fen, false)
        .or_else(|_| cozy_chess::Board::from_fen(fen, true))
        .unwrap_or_else(|e| panic!("cozy rejects {fen} ({chess960}): {e:?}"))
}

fn shak(fen: &str, mode: CastlingMode) -> Chess {
    Fen::from_ascii(fen.as_bytes())
        .unwrap_or_else(|e| panic!("bad fen {fen}: {e}"))
        .into_position(mode)
        .unwrap_or_else(|e| panic!("shakmaty rejects {fen}: {e}"))
}

fn cozy_moves(b: &cozy_chess::Board, chess960: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    b.generate_moves(|ms| {
        for m in ms {
            out.insert(if chess960 { m.to_string() } else { display_uci_move(b, m).to_string() });
        }
        false
    });
    out
}

fn shak_moves(p: &Chess, mode: CastlingMode) -> BTreeSet<String> {
    p.legal_moves().iter().map(|m| m.to_uci(mode).to_string()).collect()
}

/// Compares both libraries on one position; returns the sorted move list.
fn agree(c: &cozy_chess::Board, s: &Chess, mode: CastlingMode, what: &str) -> Vec<String> {
    let chess960 = mode == CastlingMode::Chess960;
    let cm = cozy_moves(c, chess960);
    let sm = shak_moves(s, mode);
    assert_eq!(cm, sm, "move sets differ ({mode:?}) at {what}");
    let in_check = !c.checkers().is_empty();
    assert_eq!(in_check, s.is_check(), "check differs at {what}");
    assert_eq!(cm.is_empty() && in_check, s.is_checkmate(), "mate differs at {what}");
    assert_eq!(cm.is_empty() && !in_check, s.is_stalemate(), "stalemate differs at {what}");
    cm.into_iter().collect()
}

#[test]
fn fixed_positions_agree_in_both_notations() {
    for fen in FENS {
        let c = cozy(fen, false);
        agree(&c, &shak(fen, CastlingMode::Standard), CastlingMode::Standard, fen);
        agree(&c, &shak(fen, CastlingMode::Chess960), CastlingMode::Chess960, fen);
    }
    for fen in CHESS960 {
        let c = cozy(fen, true);
        agree(&c, &shak(fen, CastlingMode::Chess960), CastlingMode::Chess960, fen);
    }
}

#[test]
fn castling_notation_converts_both_ways() {
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let c = cozy(fen, false);
    let short = cozy_chess::util::parse_uci_move(&c, "e1g1").unwrap();
    assert_eq!(short.to_string(), "e1h1");
    assert_eq!(display_uci_move(&c, short).to_string(), "e1g1");
    let long = cozy_chess::util::parse_uci_move(&c, "e1c1").unwrap();
    assert_eq!(long.to_string(), "e1a1");
    let s = shak(fen, CastlingMode::Standard);
    let ucis = shak_moves(&s, CastlingMode::Standard);
    assert!(ucis.contains("e1g1") && ucis.contains("e1c1"));
    let s960 = shak(fen, CastlingMode::Chess960);
    let ucis960 = shak_moves(&s960, CastlingMode::Chess960);
    assert!(ucis960.contains("e1h1") && ucis960.contains("e1a1"));
}

/// A small deterministic generator (xorshift64*), so playouts are reproducible.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

fn playouts(start: &str, mode: CastlingMode, games: usize, seed: u64) -> (usize, usize) {
    let chess960 = mode == CastlingMode::Chess960;
    let mut rng = Rng(seed);
    let (mut plies, mut castles) = (0, 0);
    for g in 0..games {
        let mut c = cozy(start, chess960);
        let mut s = shak(start, mode);
        for ply in 0..200 {
            let what = format!("{start} game {g} ply {ply} ({c})");
            let moves = agree(&c, &s, mode, &what);
            if moves.is_empty() || c.halfmove_clock() >= 100 {
                break;
            }
            let pick = &moves[rng.below(moves.len())];
            let cm = if chess960 {
                pick.parse::<cozy_chess::Move>().unwrap()
            } else {
                cozy_chess::util::parse_uci_move(&c, pick).unwrap()
            };
            if c.colors(c.side_to_move()).has(cm.to) {
                castles += 1;
            }
            let sm = pick
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&s)
                .unwrap_or_else(|e| panic!("shakmaty refuses {pick} at {what}: {e}"));
            c.play(cm);
            s.play_unchecked(sm);
            plies += 1;
            let placement = |f: String| f.split(' ').next().unwrap().to_string();
            assert_eq!(
                placement(c.to_string()),
                placement(Fen::from_position(&s, shakmaty::EnPassantMode::Legal).to_string()),
                "boards differ after {pick} at {what}"
            );
        }
    }
    (plies, castles)
}

#[test]
fn random_playouts_agree() {
    let (plies, castles) = playouts(FENS[0], CastlingMode::Standard, 40, 0x5eed_0001);
    assert!(plies > 2000, "{plies}");
    let (p2, c2) = playouts(FENS[1], CastlingMode::Standard, 20, 0x5eed_0002);
    assert!(p2 > 500);
    assert!(castles + c2 > 0, "no castling was exercised");
    let mut c960 = 0;
    for (i, fen) in CHESS960.iter().enumerate() {
        c960 += playouts(fen, CastlingMode::Chess960, 10, 0x960 + i as u64).1;
    }
    assert!(c960 > 0, "no Chess960 castling was exercised");
}
