//! Fuzzing the runner's readers of engine output: random and mutated lines through the `info`
//! scan, the `bestmove`, `id name` and `option name` readers, and random byte streams through the
//! capped line reader. Seeded; `RUNNER_FUZZ_CASES` sets the number of inputs (default 20,000,
//! a few seconds), `RUNNER_FUZZ_SEED` the seed. Long run:
//! `RUNNER_FUZZ_CASES=1000000 cargo test --release -p runner --lib fuzz -- --nocapture`.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::uci_lines::{LineRead, MAX_LINE, bestmove, id_name, option_name, read_line_capped};
use crate::play::uci_info::parse_info;

const SEEDS: &[&str] = &[
    "info depth 12 seldepth 17 multipv 1 score cp -31 upperbound nodes 41234 nps 900000 time 45 pv e2e4 e7e5",
    "info depth 20 score mate -3 time 7 pv a1a2",
    "info string hello score cp 5",
    "bestmove e2e4 ponder e7e5",
    "bestmove a7a8q",
    "bestmove (none)",
    "bestmove",
    "id name Stockfish 17",
    "id author the authors",
    "option name Hash type spin default 16 min 1 max 33554432",
    "option name Skill Level type spin default 20 min 0 max 20",
    "option name UCI_Chess960 type check default false",
    "option name Style type combo default Normal var Solid var Normal var Risky",
    "option name Clear Hash type button",
    "option name SyzygyPath type string default <empty>",
    "uciok",
    "readyok",
];

const TOKENS: &[&str] = &[
    "info",
    "depth",
    "seldepth",
    "score",
    "cp",
    "mate",
    "time",
    "nodes",
    "pv",
    "string",
    "bestmove",
    "ponder",
    "option",
    "name",
    "type",
    "spin",
    "default",
    "min",
    "max",
    "id",
    "uciok",
    "-",
    "99999999999999999999999",
    "-9223372036854775809",
    "4294967296",
    "255",
    "256",
    "-1",
    "0",
    "\u{0}",
    "\r",
    "\t",
    "é",
    "ÿ",
    " ",
    "  ",
];

fn cases() -> u64 {
    std::env::var("RUNNER_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

fn rng() -> ChaCha8Rng {
    let seed = std::env::var("RUNNER_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    ChaCha8Rng::seed_from_u64(seed)
}

/// A random line: a mutated seed line or a string of tokens and random characters.
fn random_line(rng: &mut ChaCha8Rng) -> String {
    let mut words: Vec<String> = if rng.random_bool(0.6) {
        let s = SEEDS[rng.random_range(0..SEEDS.len())];
        s.split(' ').map(str::to_string).collect()
    } else {
        Vec::new()
    };
    for _ in 0..rng.random_range(0..6) {
        let at = rng.random_range(0..=words.len());
        match rng.random_range(0..4) {
            0 if !words.is_empty() => {
                words.remove(at.min(words.len() - 1));
            }
            1 => words.insert(at, TOKENS[rng.random_range(0..TOKENS.len())].to_string()),
            2 => words.insert(at, rng.random::<i64>().to_string()),
            _ => {
                let n = rng.random_range(0..12);
                let w: String = (0..n).map(|_| random_char(rng)).collect();
                words.insert(at, w);
            }
        }
    }
    words.join(" ")
}

fn random_char(rng: &mut ChaCha8Rng) -> char {
    match rng.random_range(0..4) {
        0 => char::from(rng.random_range(0u8..128)),
        1 => char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('?'),
        _ => char::from(rng.random_range(b'a'..=b'z')),
    }
}

#[test]
fn engine_lines_never_panic_and_keep_what_they_can_read() {
    let mut rng = rng();
    let n = cases();
    for _ in 0..n {
        let line = random_line(&mut rng);
        let info = parse_info(&line);
        let _ = (bestmove(&line), id_name(&line), option_name(&line));
        // Properties on lines whose meaning is known.
        let depth_tokens = line.split_ascii_whitespace().filter(|t| *t == "depth").count();
        if let Some(rest) = line.strip_prefix("info depth ")
            && depth_tokens == 1
            && let Some(d) = rest.split(' ').next().and_then(|t| t.parse::<u32>().ok())
        {
            assert_eq!(info.depth, Some(d), "{line:?}");
        }
        if let Some(rest) = line.strip_prefix("bestmove ")
            && let Some(m) = rest.split_ascii_whitespace().next()
        {
            assert_eq!(bestmove(&line), Some(m), "{line:?}");
        }
    }
    eprintln!("fuzz: {n} engine lines, no panic");
}

#[test]
fn option_names_are_read_whole() {
    let mut rng = rng();
    for _ in 0..cases() / 10 {
        let words: Vec<String> = (0..rng.random_range(1..4))
            .map(|_| {
                (0..rng.random_range(1..8)).map(|_| rng.random_range(b'A'..=b'z') as char).collect()
            })
            .filter(|w: &String| w != "type")
            .collect();
        if words.is_empty() {
            continue;
        }
        let name = words.join(" ");
        let line = format!("option name {name} type spin default 1 min 0 max 2");
        assert_eq!(option_name(&line).as_deref(), Some(name.as_str()));
    }
}

/// Random byte streams in random chunks: every line up to the cap comes back whole, a longer
/// one ends the stream as overlong.
#[tokio::test]
async fn capped_reader_on_random_streams() {
    let mut rng = rng();
    let n = (cases() / 100).max(50);
    for _ in 0..n {
        let max = rng.random_range(1..64);
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for _ in 0..rng.random_range(0..20) {
            let len = rng.random_range(0..80);
            lines.push(
                (0..len).map(|_| rng.random_range(0u8..=255)).filter(|b| *b != b'\n').collect(),
            );
        }
        let mut stream: Vec<u8> = Vec::new();
        for l in &lines {
            stream.extend_from_slice(l);
            stream.push(b'\n');
        }
        let cap = rng.random_range(1..32);
        let mut reader = tokio::io::BufReader::with_capacity(cap, &stream[..]);
        let mut buf = Vec::new();
        for l in &lines {
            let got = read_line_capped(&mut reader, &mut buf, max).await.unwrap();
            if l.len() > max {
                assert_eq!(got, LineRead::Overlong);
                break;
            }
            assert_eq!(got, LineRead::Line);
            assert_eq!(&buf[..buf.len() - 1], &l[..]);
        }
    }
    let _ = MAX_LINE;
}
