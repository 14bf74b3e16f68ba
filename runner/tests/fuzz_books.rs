//! Fuzzing the readers of external input that decide a run's openings and engines: EPD and PGN
//! books (both variants) and engine files (engines.toml, gauntlet.toml). Random and mutated
//! inputs, seeded, must never panic; a book that is accepted must hold only legal, playable
//! openings.
//!
//! Quick by default (a few thousand inputs per reader). Long run:
//! `FUZZ_CASES=100000 cargo test --release -p runner --test fuzz_books -- --nocapture`
//! (`FUZZ_SEED=N` changes the seed).

use std::panic::{AssertUnwindSafe, catch_unwind};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use runner::plan::engines::EngineCatalog;
use runner::plan::openings::{Book, parse_book, position_for, replay};
use runner::plan::variant::Variant;

fn cases() -> usize {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(20261123)
}

const EPD_SEEDS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n",
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 hmvc 0; fmvn 3; id \"x\";\n",
    "8/8/4k3/8/8/4K3/4P3/8 w - - 12 57\n# comment\n\n% escape\n",
    "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - hmvc 0; fmvn 1; id \"chess960 #0\";\n",
    "2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1\nr3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1\n",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n8/8/4k3/8/8/4K3/8/8 w - - 100 80\n",
];

const PGN_SEEDS: &[&str] = &[
    "[Event \"a\"]\n[Site \"?\"]\n\n1. e4 {best} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 3. Bb5 a6 *\n",
    "[SetUp \"1\"]\n[FEN \"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 4 20\"]\n\n20. O-O O-O-O 1/2-1/2\n",
    "[Variant \"Chess960\"]\n[FEN \"bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1\"]\n\n1. g3 g6 2. Ng2 Ng7 3. O-O O-O 1-0\n",
    "1.d4 d5 2.c4 e6 3.Nc3 Nf6 4.Bg5 Be7 5.e3 O-O 6.Nf3 h6 7.Bh4 b6 0-1\n\n1. e4 c5 ; sicilian\n2. Nf3 d6 *\n",
    "[Event \"x\"]\n% escape\n1. f3 e5 2. g4 Qh4# 0-1\n[Event \"y\"]\n1. e4 e5 2. Ke2!? Ke7?! 3. Ke1 Ke8 4. Ke2 Ke7 5. Ke1 Ke8 *\n",
];

const TOML_SEEDS: &[&str] = &[
    include_str!("../../configs/engines.toml"),
    include_str!("../../configs/gauntlet.toml"),
    "[[engine]]\nname = \"sf\"\ncmd = \"/usr/games/stockfish\"\nargs = [\"-x\"]\ndir = \"/tmp\"\n[engine.options]\nHash = 16\nPonder = false\nSkill = 1.5\nName = \"x\"\n",
];

/// Tokens that tend to reach deep paths of the readers.
const DICTIONARY: &[&[u8]] = &[
    b" O-O ",
    b" O-O-O ",
    b"0-0",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"$",
    b"$12",
    b"1-0",
    b"0-1",
    b"1/2-1/2",
    b"*",
    b"\n",
    b"\r\n",
    b";",
    b"%",
    b"\0",
    b"\xff",
    b"\xc3",
    b"!?",
    b"e.p.",
    b"--",
    b"Z0",
    b"99999999999999999999",
    b"-1",
    b" - ",
    b"/",
    b"8",
    b"KQkq",
    b"HAha",
    b"Kk",
    b" w ",
    b" b ",
    b" hmvc ",
    b" fmvn ",
    b"[FEN \"",
    b"[Variant \"Chess960\"]",
    b"[SetUp \"1\"]",
    b"12.",
    b"12...",
    b"e4",
    b"exd5",
    b"e8=Q",
    b"Nbd7",
    b"Qh4#",
    b"+",
    b"[[engine]]",
    b"name = ",
    b"cmd = ",
    b"[engine.options]",
    b"args = [",
    b"= 1",
    b"= true",
    b"= \"",
    b"'''",
    b"= 1979-05-27",
    b"= {a = 1}",
    b"= [[1]]",
    b"#",
];

fn mutate(rng: &mut ChaCha8Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..rng.random_range(1..=6) {
        let len = v.len();
        let at = if len == 0 { 0 } else { rng.random_range(0..=len) };
        match rng.random_range(0..8) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                v[i] = rng.random();
            }
            1 => {
                let n = rng.random_range(1..8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random_range(0x20..0x7f)).collect();
                v.splice(at..at, bytes);
            }
            2 if len > 0 => {
                let end = (at + rng.random_range(1..16)).min(len);
                v.drain(at.min(end)..end);
            }
            3 if len > 0 => {
                let s = rng.random_range(0..len);
                let e = (s + rng.random_range(1..32)).min(len);
                let chunk = v[s..e].to_vec();
                v.splice(at..at, chunk);
            }
            4 | 5 => {
                let tok = DICTIONARY[rng.random_range(0..DICTIONARY.len())];
                v.splice(at..at, tok.iter().copied());
            }
            6 => v.truncate(at),
            _ => {
                let i = rng.random_range(0..=len);
                let ch = [b' ', b'\n', b'/', b'-', b'1', b'.'][rng.random_range(0..6)];
                v.insert(i, ch);
            }
        }
    }
    v
}

/// Random bytes, or a mutation of one of `seeds` (sometimes two spliced together).
fn input(rng: &mut ChaCha8Rng, seeds: &[&str]) -> Vec<u8> {
    match rng.random_range(0..10) {
        0 => (0..rng.random_range(0..200)).map(|_| rng.random()).collect(),
        1 => {
            let a = seeds[rng.random_range(0..seeds.len())].as_bytes();
            let b = seeds[rng.random_range(0..seeds.len())].as_bytes();
            let (i, j) = (rng.random_range(0..=a.len()), rng.random_range(0..=b.len()));
            let spliced = [&a[..i], &b[j..]].concat();
            mutate(rng, &spliced)
        }
        _ => {
            let seed = seeds[rng.random_range(0..seeds.len())];
            mutate(rng, seed.as_bytes())
        }
    }
}

/// Runs `f` on `data`, turning a panic into a test failure that shows the input.
fn no_panic(what: &str, data: &[u8], f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        panic!("{what} panicked on input {:?}", String::from_utf8_lossy(data));
    }
}

/// An accepted book holds only legal openings that are not over.
fn check_book(book: &Book, variant: Variant, data: &[u8]) {
    for (i, o) in book.openings.iter().enumerate() {
        assert_eq!(o.id, i);
        let root = position_for(&o.fen, variant);
        assert!(
            root.is_ok(),
            "accepted an unreadable FEN {:?} from {:?}",
            o.fen,
            String::from_utf8_lossy(data)
        );
        let end = replay(&o.fen, &o.moves, variant);
        assert!(
            end.is_ok(),
            "accepted illegal book moves {:?} from {:?}",
            o.moves,
            String::from_utf8_lossy(data)
        );
    }
}

#[test]
fn epd_and_pgn_books_never_panic_and_accept_only_playable_openings() {
    let mut rng = ChaCha8Rng::seed_from_u64(seed());
    let (mut accepted, mut refused) = (0usize, 0usize);
    for case in 0..cases() {
        let pgn = case % 2 == 0;
        let data = input(&mut rng, if pgn { PGN_SEEDS } else { EPD_SEEDS });
        for variant in [Variant::Standard, Variant::Fischerandom] {
            let plies = [None, Some(0), Some(3)][case % 3];
            no_panic("book reader", &data, || match parse_book(&data, pgn, plies, variant) {
                Ok(book) => {
                    accepted += 1;
                    check_book(&book, variant, &data);
                }
                Err(e) => {
                    refused += 1;
                    assert!(!format!("{e:#}").is_empty());
                }
            });
        }
    }
    eprintln!("books: {} inputs, {accepted} parses accepted, {refused} refused, 0 panics", cases());
    assert!(accepted > 0 && refused > 0, "the fuzzer reaches both outcomes");
}

#[test]
fn engine_files_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(seed() ^ 0x746f_6d6c);
    let (mut accepted, mut refused) = (0usize, 0usize);
    for _ in 0..cases() {
        let data = input(&mut rng, TOML_SEEDS);
        let text = String::from_utf8_lossy(&data);
        no_panic("engine file reader", &data, || {
            let mut catalog = EngineCatalog::default();
            match catalog.layer_str(&text, "fuzz.toml") {
                Ok(()) => accepted += 1,
                Err(_) => refused += 1,
            }
        });
    }
    eprintln!("engine files: {} inputs, {accepted} accepted, {refused} refused, 0 panics", cases());
    assert!(accepted > 0 && refused > 0, "the fuzzer reaches both outcomes");
}
