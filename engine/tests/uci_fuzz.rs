//! Fuzz-style test of the UCI line handler, in process: random and mutated
//! UCI lines (seeded, so every run feeds the same bytes) go through the same
//! reader and handler as standard input. No input may panic the handler or a
//! search, every `go` is answered by exactly one `bestmove`, and the engine
//! must still answer `isready` and search afterwards.
//!
//! Long run (the count is the number of generated lines):
//!
//! ```text
//! ENGINE_FUZZ_LINES=100000 cargo test --release -p engine --test uci_fuzz -- --nocapture
//! ```
//!
//! `ENGINE_FUZZ_SEED` picks another seed (default 12).

use std::io::BufReader;
use std::sync::{Arc, Mutex};

use cozy_chess::Board;
use engine::position::parse_move;
use engine::uci::{Input, MAX_LINE, Output, Uci, read_input};

/// SplitMix64: small, seeded, good enough for choosing inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Well-formed lines the mutations start from.
const SEEDS: &[&str] = &[
    "uci",
    "isready",
    "ucinewgame",
    "debug on",
    "ponderhit",
    "stop",
    "d",
    "position startpos",
    "position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1",
    "position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1g1 e8c8",
    "position fen r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1 moves e1h1",
    "position fen nrkbqrbn/pppppppp/8/8/8/8/PPPPPPPP/NRKBQRBN w KQkq - 0 1 moves c1b1",
    "position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80",
    "position fen 8/P7/8/8/8/8/7p/K6k w - - 0 1 moves a7a8q h2h1n",
    "position fen 8/8/8/8/8/8/1K6/7k w - -",
    "go depth 3",
    "go depth 256",
    "go movestogo 256 wtime 100 btime 100",
    "go mate 300",
    "go nodes 500",
    "go wtime 1000 btime 1000 winc 10 binc 10",
    "go wtime -20 btime 1000",
    "go movetime 5",
    "go infinite",
    "go ponder wtime 50 btime 50",
    "go searchmoves e2e4 d2d4 depth 2",
    "setoption name UCI_Chess960 value true",
    "setoption name UCI_Chess960 value false",
    "setoption name Hash value 2",
    "setoption name Clear Hash",
    "setoption name MPC value false",
    "setoption name ProbCut value single",
    "setoption name t_mid value 1.5",
    "setoption name Move Overhead value 10",
    "setoption name LmrDiv value 300",
    "register later",
];

const WORDS: &[&str] = &[
    "uci",
    "isready",
    "go",
    "position",
    "setoption",
    "stop",
    "quit",
    "ucinewgame",
    "d",
    "name",
    "value",
    "startpos",
    "fen",
    "moves",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "movestogo",
    "wtime",
    "btime",
    "winc",
    "binc",
    "infinite",
    "ponder",
    "searchmoves",
    "e2e4",
    "e1g1",
    "e1h1",
    "a7a8q",
    "0000",
    "KQkq",
    "HAha",
    "-",
    "w",
    "b",
    "8/8/8/8/8/8/8/8",
    "true",
    "false",
    "Hash",
    "MPC",
    "t_end",
    "MPCExtend",
    "Threads",
    "UCI_Chess960",
    "AspWindow",
    "\u{FFFD}",
    "\u{1F600}",
    "\t",
    "moves moves",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "127",
    "128",
    "255",
    "256",
    "1000",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775808",
    "-99999999999999999999999",
    "1e9",
    "0x10",
    "+5",
    "--5",
    "1.5",
    "nan",
    "",
];

fn number(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => rng.pick(NUMBERS).to_string(),
        1 => rng.next().to_string(),
        _ => (0..1 + rng.below(40)).map(|_| char::from(b'0' + rng.below(10) as u8)).collect(),
    }
}

fn token(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 | 1 => rng.pick(WORDS).as_bytes().to_vec(),
        2 | 3 => number(rng).into_bytes(),
        4 => (0..1 + rng.below(8)).map(|_| b'a' + rng.below(26) as u8).collect(),
        _ => (0..1 + rng.below(6)).map(|_| rng.next() as u8).filter(|&b| b != b'\n').collect(),
    }
}

fn mutate(rng: &mut Rng, line: &mut Vec<u8>) {
    let at = rng.below(line.len() + 1);
    match rng.below(6) {
        0 if at < line.len() => line[at] = (rng.next() as u8).max(1),
        1 => line.insert(at, rng.next() as u8),
        2 if at < line.len() => {
            line.remove(at);
        }
        3 => {
            let mut t = token(rng);
            t.push(b' ');
            line.splice(at..at, t);
        }
        4 => {
            // Replace a number with another one.
            let text = String::from_utf8_lossy(line).into_owned();
            let words: Vec<&str> = text.split(' ').collect();
            if let Some(i) = (0..words.len()).find(|&i| words[i].parse::<i64>().is_ok()) {
                let mut w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
                w[i] = number(rng);
                *line = w.join(" ").into_bytes();
            }
        }
        _ => {
            // Splice in the tail of another seed line.
            let other = rng.pick(SEEDS).as_bytes();
            let cut = rng.below(other.len());
            line.truncate(at);
            line.extend_from_slice(&other[cut..]);
        }
    }
    line.retain(|&b| b != b'\n');
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    match rng.below(20) {
        0..=4 => rng.pick(SEEDS).as_bytes().to_vec(),
        5..=12 => {
            let mut l = rng.pick(SEEDS).as_bytes().to_vec();
            for _ in 0..1 + rng.below(4) {
                mutate(rng, &mut l);
            }
            l
        }
        13..=16 => {
            let mut l = rng.pick(&["go", "position", "setoption", "uci", "d"]).as_bytes().to_vec();
            for _ in 0..rng.below(12) {
                l.push(b' ');
                l.extend(token(rng));
            }
            l
        }
        17 | 18 => (0..rng.below(64)).map(|_| rng.next() as u8).filter(|&b| b != b'\n').collect(),
        _ => {
            // A long line: many moves, or beyond the reader's cap.
            let n =
                if rng.below(4) == 0 { MAX_LINE + 1 + rng.below(1000) } else { rng.below(5000) };
            let mut l = b"position startpos moves".to_vec();
            while l.len() < n {
                l.extend_from_slice(
                    rng.pick(&[" g1f3", " f3g1", " b8c6", " c6b8", " e2e4"]).as_bytes(),
                );
            }
            l
        }
    }
}

/// Hash sizes above a few MB only cost memory and time here.
fn too_costly(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line).to_ascii_lowercase();
    let t: Vec<&str> = text.split_whitespace().collect();
    t.first() == Some(&"setoption")
        && t.contains(&"hash")
        && t.iter().any(|w| w.parse::<i64>().is_ok_and(|v| v > 64))
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn random_and_mutated_uci_lines_never_panic() {
    let lines = env_or("ENGINE_FUZZ_LINES", 3000) as usize;
    let mut rng = Rng(env_or("ENGINE_FUZZ_SEED", 12));
    let mut stream = Vec::new();
    let mut fed = 0usize;
    while fed < lines {
        let l = generate(&mut rng);
        if too_costly(&l) || String::from_utf8_lossy(&l).split_whitespace().next() == Some("quit") {
            continue;
        }
        stream.extend(l);
        stream.extend_from_slice(if rng.below(8) == 0 { b"\r\n" } else { b"\n" });
        fed += 1;
    }

    let answers = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = answers.clone();
    let out: Output = Arc::new(move |l: &str| sink.lock().unwrap().push(l.to_string()));
    let mut uci = Uci::with_output(out);
    uci.set_node_cap(Some(3000));
    let mut reader = BufReader::new(&stream[..]);
    let mut handled = 0usize;
    let mut last = String::new();
    // Every `go` must be answered by exactly one `bestmove`: a `go` ends the search before it
    // (so all earlier ones are answered once it is handled), and no answer comes without a `go`.
    let bestmoves = || answers.lock().unwrap().iter().filter(|a| a.starts_with("bestmove")).count();
    let mut gos = 0usize;
    let mut unanswered = Vec::new();
    let mut previous_go = String::new();
    loop {
        let input = read_input(&mut reader, MAX_LINE);
        if input == Input::End {
            break;
        }
        let is_go = matches!(&input, Input::Line(l) if l.split_whitespace().next() == Some("go"));
        if let Input::Line(l) = &input {
            last = l.clone();
        }
        let before = uci.faults();
        assert!(uci.handle_input(input), "quit after {handled} lines");
        assert_eq!(uci.faults(), before, "panic on line {handled}: {last:?}");
        if is_go {
            gos += 1;
            // Handling this go ended the one before it: was that one answered?
            let missed = (gos - 1).saturating_sub(bestmoves());
            if missed > unanswered.len() && unanswered.len() < 5 {
                unanswered.push(format!("the go before line {handled}: {previous_go:?}"));
            }
            previous_go = last.clone();
        }
        assert!(bestmoves() <= gos, "a bestmove without a go, at line {handled}: {last:?}");
        handled += 1;
    }
    assert_eq!(handled, lines);

    // Still alive and usable.
    for l in ["stop", "isready"] {
        uci.handle(l);
    }
    assert_eq!(answers.lock().unwrap().last().map(String::as_str), Some("readyok"));
    for l in
        ["setoption name UCI_Chess960 value false", "ucinewgame", "position startpos", "go depth 2"]
    {
        uci.handle(l);
    }
    uci.wait();
    gos += 1;
    let answered = bestmoves();
    assert_eq!(
        answered, gos,
        "{gos} go commands but {answered} bestmove answers; first unanswered go: {unanswered:?}"
    );
    let last = answers.lock().unwrap().last().cloned().unwrap_or_default();
    let mv = last.strip_prefix("bestmove ").unwrap_or("");
    assert!(parse_move(&Board::default(), mv, false).is_some(), "{last}");
    assert_eq!(uci.faults(), 0);
    let n = answers.lock().unwrap().len();
    println!(
        "fuzz: {handled} lines, {n} answer lines, 0 panics; every go answered: {gos} go, \
         {answered} bestmove"
    );
}
