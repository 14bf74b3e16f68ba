//! The UCI protocol loop. Standard input is read on its own thread, so that
//! `stop`, `isready` and `quit` are answered while a search runs on the search
//! thread. Every command is parsed here by hand: numbers of any size or sign,
//! missing values, unknown tokens, non-UTF-8 bytes and over-long lines are
//! answered with an `info string ...` and the engine goes on.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::io::{BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::options::{Effect, EngineOptions};
use crate::position::{Position, format_move};
use crate::score::MAX_PLY;
use crate::search::Searcher;
use crate::timeman::Limits;

const NAME: &str = concat!("mpc-engine ", env!("CARGO_PKG_VERSION"));
const AUTHOR: &str = "the mpc-harness authors";
const SEARCH_STACK: usize = 64 * 1024 * 1024;

/// Longest input line read (bytes, without the newline); longer lines are
/// skipped with an `info string`.
pub const MAX_LINE: usize = 1 << 20;
/// Deepest `go depth` searched; larger values are clamped to it.
pub const MAX_GO_DEPTH: i64 = MAX_PLY as i64 - 1;
/// Longest piece of an input line echoed back in an `info string`.
const ECHO_CHARS: usize = 80;

/// Where the engine's answers go: one call per line, without the newline.
pub type Output = Arc<dyn Fn(&str) + Send + Sync>;

pub struct Uci {
    opts: EngineOptions,
    pos: Position,
    searcher: Arc<Mutex<Searcher>>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
    out: Output,
    /// Per-iteration `info depth ...` lines of the search (printed to stdout).
    search_info: bool,
    /// Every search stops after this many nodes (tests and fuzzing).
    node_cap: Option<u64>,
    /// Panics caught in the line handler or the search thread.
    faults: Arc<AtomicU64>,
}

impl Default for Uci {
    fn default() -> Self {
        Self::new()
    }
}

/// One read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A line (without its newline); invalid UTF-8 replaced by U+FFFD.
    Line(String),
    /// A line longer than the cap, skipped; its length in bytes.
    TooLong(usize),
    /// End of input (or a read error).
    End,
}

/// Reads one line of at most `max` bytes; a longer line is consumed and
/// dropped without holding more than `max` bytes of it in memory.
pub fn read_input(r: &mut impl BufRead, max: usize) -> Input {
    let mut buf = Vec::new();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let (consumed, found) = match r.fill_buf() {
            Ok([]) => {
                if !any {
                    return Input::End;
                }
                break;
            }
            Ok(chunk) => {
                any = true;
                let nl = chunk.iter().position(|&b| b == b'\n');
                let part = nl.and_then(|p| chunk.get(..p)).unwrap_or(chunk);
                total = total.saturating_add(part.len());
                if total <= max {
                    buf.extend_from_slice(part);
                } else {
                    buf = Vec::new();
                }
                (nl.map_or(chunk.len(), |p| p + 1), nl.is_some())
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => {
                if !any {
                    return Input::End;
                }
                break;
            }
        };
        r.consume(consumed);
        if found {
            break;
        }
    }
    if total > max {
        Input::TooLong(total)
    } else {
        Input::Line(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// A piece of input fit to be echoed in an `info string`: control characters
/// replaced, cut after a few dozen characters.
fn echo(s: &str) -> String {
    let mut e: String =
        s.chars().take(ECHO_CHARS).map(|c| if c.is_control() { '?' } else { c }).collect();
    if s.chars().nth(ECHO_CHARS).is_some() {
        e.push_str("...");
    }
    e
}

/// An integer token (`[+-]digits`), saturated to the `i64` range; `None` if
/// the token is not an integer.
pub fn int_token(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<i64>() {
        Ok(v) if neg => -v,
        Ok(v) => v,
        Err(_) if neg => i64::MIN,
        Err(_) => i64::MAX,
    })
}

/// Keywords of `go` that take a value.
const GO_VALUE_KEYS: &[&str] =
    &["wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes", "mate"];
/// Keywords of `go` without a value.
const GO_FLAG_KEYS: &[&str] = &["infinite", "ponder", "searchmoves"];

/// Parses the arguments of `go` for the side to move (`white`). Unknown
/// tokens are skipped and out-of-range values clamped, each with a note for
/// an `info string`. A missing or non-integer value drops that limit (with a
/// note) and the others still apply: every `go` starts a search, so every
/// `go` is answered by a `bestmove`. When a dropped limit leaves no limit at
/// all (and no `infinite`), the search is depth 1 rather than unbounded, so
/// that a GUI waiting for `bestmove` is not left waiting for a `stop`.
pub fn parse_go(args: &[&str], white: bool) -> (Limits, Vec<String>) {
    let mut l = Limits::default();
    let mut notes = Vec::new();
    let mut mate_depth = None;
    let mut dropped = false;
    let mut explicit_infinite = false;
    let mut i = 0;
    while let Some(&key) = args.get(i) {
        i += 1;
        match key {
            "infinite" | "ponder" => {
                l.infinite = true;
                explicit_infinite = true;
                continue;
            }
            "searchmoves" => {
                while args
                    .get(i)
                    .is_some_and(|a| !GO_VALUE_KEYS.contains(a) && !GO_FLAG_KEYS.contains(a))
                {
                    i += 1;
                }
                notes.push("go: searchmoves is not supported; searching all moves".to_string());
                continue;
            }
            k if GO_VALUE_KEYS.contains(&k) => {}
            other => {
                notes.push(format!("go: unknown token {} ignored", echo(other)));
                continue;
            }
        }
        let raw = args.get(i).filter(|r| !GO_VALUE_KEYS.contains(r) && !GO_FLAG_KEYS.contains(r));
        let Some(raw) = raw else {
            notes.push(format!("go {key}: missing value; {key} ignored"));
            dropped = true;
            continue;
        };
        i += 1;
        let Some(v) = int_token(raw) else {
            notes.push(format!("go {key}: {} is not an integer; {key} ignored", echo(raw)));
            dropped = true;
            continue;
        };
        let ms = v.max(0) as u64;
        if v < 0 && key != "depth" && key != "mate" {
            notes.push(format!("go {key} {v}: negative, taken as 0"));
        }
        match key {
            "wtime" if white => l.time = Some(ms),
            "btime" if !white => l.time = Some(ms),
            "winc" if white => l.inc = ms,
            "binc" if !white => l.inc = ms,
            "wtime" | "btime" | "winc" | "binc" => {}
            "movestogo" => l.movestogo = Some(ms).filter(|&m| m > 0),
            "movetime" => l.movetime = Some(ms),
            "nodes" => l.nodes = Some(ms.max(1)),
            "depth" => {
                let d = v.clamp(1, MAX_GO_DEPTH);
                if d != v {
                    notes.push(format!("go depth {v}: out of range 1..={MAX_GO_DEPTH}, using {d}"));
                }
                l.depth = Some(d as i32);
            }
            _ => {
                // mate N: search deep enough for a mate in N moves.
                let max_moves = (MAX_GO_DEPTH - 1) / 2;
                let n = v.clamp(1, max_moves);
                if n != v {
                    notes.push(format!("go mate {v}: out of range 1..={max_moves}, using {n}"));
                }
                mate_depth = Some((2 * n + 1) as i32);
            }
        }
    }
    if l.depth.is_none() {
        l.depth = mate_depth;
    }
    if l.time.is_none() && l.movetime.is_none() && l.depth.is_none() && l.nodes.is_none() {
        if dropped && !explicit_infinite {
            notes.push("go: no valid limit left; searching depth 1".to_string());
            l.depth = Some(1);
        } else {
            l.infinite = true;
        }
    }
    (l, notes)
}

/// What `position` asks for: a FEN (`None` = start position) and moves.
#[derive(Debug, PartialEq, Eq)]
pub struct PositionArgs {
    pub fen: Option<String>,
    pub moves: Vec<String>,
    /// Tokens that were skipped, for an `info string`.
    pub ignored: Option<String>,
}

/// Parses the arguments of `position`.
pub fn parse_position(args: &[&str]) -> Result<PositionArgs, String> {
    let moves_at = args.iter().position(|t| *t == "moves").unwrap_or(args.len());
    let moves = args.get(moves_at + 1..).unwrap_or(&[]).iter().map(|s| s.to_string()).collect();
    match args.first() {
        Some(&"startpos") => {
            let extra = args.get(1..moves_at).unwrap_or_default();
            let ignored = (!extra.is_empty()).then(|| echo(&extra.join(" ")));
            Ok(PositionArgs { fen: None, moves, ignored })
        }
        Some(&"fen") if moves_at > 1 => {
            let fen = args.get(1..moves_at).unwrap_or_default().join(" ");
            Ok(PositionArgs { fen: Some(fen), moves, ignored: None })
        }
        Some(&"fen") => Err("position fen: no FEN given".into()),
        _ => Err("position: expected \"startpos\" or \"fen <FEN>\"".into()),
    }
}

/// Parses the arguments of `setoption`: `name <name...> [value <value...>]`.
pub fn parse_setoption(args: &[&str]) -> Result<(String, Option<String>), String> {
    if args.first() != Some(&"name") {
        return Err("setoption: expected \"name <NAME> [value <VALUE>]\"".into());
    }
    let value_at = args.iter().position(|t| *t == "value");
    let name = args.get(1..value_at.unwrap_or(args.len())).unwrap_or_default().join(" ");
    if name.is_empty() {
        return Err("setoption: the option name is missing".into());
    }
    Ok((name, value_at.map(|v| args.get(v + 1..).unwrap_or_default().join(" "))))
}

impl Uci {
    /// An engine answering on standard output.
    pub fn new() -> Self {
        // A closed stdout (the GUI went away) must not panic the engine.
        let out: Output = Arc::new(|l: &str| {
            let _ = writeln!(std::io::stdout().lock(), "{l}");
        });
        let mut u = Self::with_output(out);
        u.search_info = true;
        u
    }

    /// An engine answering through `out`. The search's per-iteration `info`
    /// lines are not produced (they go to stdout only, see [`Uci::new`]).
    pub fn with_output(out: Output) -> Self {
        let opts = EngineOptions::default();
        let stop = Arc::new(AtomicBool::new(false));
        let searcher = Arc::new(Mutex::new(Searcher::new(&opts, stop.clone())));
        Self {
            opts,
            pos: Position::default(),
            searcher,
            stop,
            worker: None,
            out,
            search_info: false,
            node_cap: None,
            faults: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Caps every search at `nodes` nodes (tests and fuzzing).
    pub fn set_node_cap(&mut self, nodes: Option<u64>) {
        self.node_cap = nodes;
    }

    /// Panics caught so far in the line handler or a search thread.
    pub fn faults(&self) -> u64 {
        self.faults.load(Ordering::SeqCst)
    }

    fn say(&self, line: &str) {
        (self.out)(line);
    }

    /// Runs the loop until `quit` or end of input.
    pub fn run(mut self) {
        // Bounded: input arriving faster than it is handled waits in the pipe.
        let (tx, rx) = mpsc::sync_channel::<Input>(64);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            loop {
                let input = read_input(&mut lock, MAX_LINE);
                let end = input == Input::End;
                if tx.send(input).is_err() || end {
                    return;
                }
            }
        });
        while let Ok(input) = rx.recv() {
            if !self.handle_input(input) {
                break;
            }
        }
        self.finish_search(true);
    }

    /// Handles one read; a panic in the handler is reported and survived.
    /// False means quit.
    pub fn handle_input(&mut self, input: Input) -> bool {
        match input {
            Input::End => false,
            Input::TooLong(n) => {
                self.say(&format!(
                    "info string input line of {n} bytes is longer than {MAX_LINE}; ignored"
                ));
                true
            }
            Input::Line(line) => match catch_unwind(AssertUnwindSafe(|| self.handle(&line))) {
                Ok(go_on) => go_on,
                Err(_) => {
                    self.faults.fetch_add(1, Ordering::SeqCst);
                    self.say(&format!("info string internal error on: {}; ignored", echo(&line)));
                    true
                }
            },
        }
    }

    fn searching(&self) -> bool {
        self.worker.as_ref().is_some_and(|w| !w.is_finished())
    }

    /// Waits for a running search (stopping it first if `stop`).
    fn finish_search(&mut self, stop: bool) {
        if let Some(w) = self.worker.take() {
            if stop {
                self.stop.store(true, Ordering::SeqCst);
            }
            let _ = w.join();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Searcher> {
        self.searcher.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Handles one input line; false means quit.
    pub fn handle(&mut self, line: &str) -> bool {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return true;
        };
        match cmd {
            "quit" => return false,
            "stop" => self.finish_search(true),
            "isready" => self.say("readyok"),
            "uci" => {
                self.say(&format!("id name {NAME}"));
                self.say(&format!("id author {AUTHOR}"));
                for o in EngineOptions::uci_declarations() {
                    self.say(&o);
                }
                self.say("uciok");
            }
            "ucinewgame" => {
                self.finish_search(true);
                self.lock().clear();
                self.pos = Position::default();
            }
            "setoption" => match parse_setoption(args) {
                Ok((name, value)) => {
                    self.finish_search(true);
                    match self.opts.set(&name, value.as_deref()) {
                        Ok(Effect::ResizeHash) => self.lock().tt.resize(self.opts.hash_mb),
                        Ok(Effect::ClearHash) => self.lock().tt.clear(),
                        Ok(Effect::None) => {}
                        Err(e) => self.say(&format!(
                            "info string option {}: {}; ignored",
                            echo(&name),
                            echo(&e)
                        )),
                    }
                }
                Err(e) => self.say(&format!("info string {e}; ignored")),
            },
            "position" => {
                self.finish_search(true);
                match parse_position(args) {
                    Ok(p) => {
                        if let Some(extra) = &p.ignored {
                            self.say(&format!("info string position: ignored tokens {extra}"));
                        }
                        self.set_position(p.fen.as_deref(), &p.moves)
                    }
                    Err(e) => self.say(&format!("info string {e}; position unchanged")),
                }
            }
            "go" => {
                let white = self.pos.board.side_to_move() == cozy_chess::Color::White;
                let (limits, notes) = parse_go(args, white);
                for n in notes {
                    self.say(&format!("info string {n}"));
                }
                self.finish_search(true);
                self.start_search(limits);
            }
            "d" => self.say(&format!("info string fen {}", self.pos.board)),
            "ponderhit" | "debug" | "register" => {}
            _ => self.say(&format!("info string unknown command: {}", echo(line.trim()))),
        }
        true
    }

    fn set_position(&mut self, fen: Option<&str>, moves: &[String]) {
        let base = match fen {
            None => Ok(Position::default()),
            Some(f) => Position::from_fen_mode(f, self.opts.chess960),
        };
        match base {
            Ok(mut pos) => {
                if let Err(bad) =
                    pos.play_uci_moves(moves.iter().map(String::as_str), self.opts.chess960)
                {
                    self.say(&format!(
                        "info string illegal move {} in position command; ignored from there on",
                        echo(&bad)
                    ));
                }
                self.pos = pos;
            }
            Err(e) => self.say(&format!("info string {}; position unchanged", echo(&e))),
        }
    }

    fn start_search(&mut self, mut limits: Limits) {
        if let Some(cap) = self.node_cap {
            limits.nodes = Some(limits.nodes.map_or(cap, |n| n.min(cap)));
        }
        self.stop.store(false, Ordering::SeqCst);
        let searcher = self.searcher.clone();
        let pos = self.pos.clone();
        let opts = self.opts.clone();
        let stop = self.stop.clone();
        let out = self.out.clone();
        let faults = self.faults.clone();
        let verbose = self.search_info;
        let spawned = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK)
            .spawn(move || {
                let mut s = searcher.lock().unwrap_or_else(|p| p.into_inner());
                s.configure(&opts);
                s.verbose = verbose;
                let r = catch_unwind(AssertUnwindSafe(|| s.search(&pos, &limits)));
                // `go infinite` must not answer before `stop`.
                if limits.infinite {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
                let best = match r {
                    Ok(r) => {
                        out(&format!(
                            "info nodes {} time {} nps {}",
                            r.nodes,
                            r.elapsed_ms,
                            r.nodes * 1000 / r.elapsed_ms.max(1)
                        ));
                        out(&r.mpc.info_line());
                        r.best_move
                    }
                    Err(_) => {
                        faults.fetch_add(1, Ordering::SeqCst);
                        out("info string internal error in the search; playing a legal move");
                        let mut first = None;
                        pos.board.generate_moves(|m| {
                            first = m.into_iter().next();
                            first.is_some()
                        });
                        first
                    }
                };
                match best {
                    Some(m) => {
                        out(&format!("bestmove {}", format_move(&pos.board, m, opts.chess960)))
                    }
                    None => out("bestmove 0000"),
                }
            });
        match spawned {
            Ok(h) => self.worker = Some(h),
            Err(e) => self.say(&format!("info string cannot start search thread: {e}")),
        }
    }

    /// Whether a search thread is running (for tests).
    pub fn is_searching(&self) -> bool {
        self.searching()
    }

    /// Waits for the running search to end by itself (for tests).
    pub fn wait(&mut self) {
        self.finish_search(false);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn go(line: &str) -> Result<(Limits, Vec<String>), String> {
        let args: Vec<&str> = line.split_whitespace().collect();
        Ok(parse_go(&args, true))
    }

    #[test]
    fn integers_of_any_size_saturate() {
        assert_eq!(int_token("256"), Some(256));
        assert_eq!(int_token("+7"), Some(7));
        assert_eq!(int_token("-20"), Some(-20));
        assert_eq!(int_token("99999999999999999999999"), Some(i64::MAX));
        assert_eq!(int_token("-99999999999999999999999"), Some(i64::MIN));
        assert_eq!(int_token("-9223372036854775808"), Some(i64::MIN));
        for bad in ["", "-", "+", "1.5", "1e9", "0x10", "--5", "12a", "\u{FFFD}"] {
            assert_eq!(int_token(bad), None, "{bad:?}");
        }
    }

    /// Values a u8 cannot hold (depth, movestogo, mate: vampirc-uci kept them in one) are clamped.
    #[test]
    fn go_values_of_256_and_more_are_clamped() {
        let (l, notes) = go("depth 256").unwrap();
        assert_eq!(l.depth, Some(MAX_GO_DEPTH as i32));
        assert!(notes[0].contains("using 127"), "{notes:?}");
        let (l, notes) = go("wtime 1000 btime 1000 movestogo 256").unwrap();
        assert_eq!((l.time, l.movestogo), (Some(1000), Some(256)));
        assert!(notes.is_empty());
        let (l, _) = go("mate 256").unwrap();
        assert_eq!(l.depth, Some(MAX_GO_DEPTH as i32));
        let (l, _) = go("depth 99999999999999999999999999 nodes 99999999999999999999").unwrap();
        assert_eq!((l.depth, l.nodes), (Some(127), Some(i64::MAX as u64)));
        let (l, _) = go("movetime 18446744073709551616").unwrap();
        assert_eq!(l.movetime, Some(i64::MAX as u64));
    }

    #[test]
    fn go_negative_missing_and_unknown() {
        let (l, notes) = go("wtime -20 btime 5 winc -3 depth -4 mate -1").unwrap();
        assert_eq!((l.time, l.inc, l.depth), (Some(0), 0, Some(1)));
        assert_eq!(notes.len(), 4, "{notes:?}");
        let (l, _) = go("movestogo 0 wtime 100").unwrap();
        assert_eq!(l.movestogo, None);
        // A missing or malformed value drops that limit only; the search still starts.
        let (l, notes) = go("depth").unwrap();
        assert_eq!((l.depth, l.infinite), (Some(1), false));
        assert!(notes[0].contains("missing value; depth ignored"), "{notes:?}");
        let (l, notes) = go("wtime 100 btime").unwrap();
        assert_eq!((l.time, l.depth), (Some(100), None));
        assert!(notes[0].contains("missing value"), "{notes:?}");
        let (l, notes) = go("depth banana").unwrap();
        assert_eq!(l.depth, Some(1));
        assert!(notes[0].contains("banana is not an integer; depth ignored"), "{notes:?}");
        let (l, notes) = go("nodes x movetime 50").unwrap();
        assert_eq!((l.nodes, l.movetime, l.depth), (None, Some(50), None));
        assert_eq!(notes.len(), 1, "{notes:?}");
        // A keyword is not taken as the value before it.
        let (l, _) = go("depth nodes 400").unwrap();
        assert_eq!((l.depth, l.nodes), (None, Some(400)));
        // An explicit infinite stays infinite.
        assert!(go("infinite depth x").unwrap().0.infinite);
        let (l, notes) = go("frobnicate 3 depth 4").unwrap();
        assert_eq!(l.depth, Some(4));
        assert_eq!(notes.len(), 2, "{notes:?}");
        let (l, notes) = go("searchmoves e2e4 d2d4 depth 5").unwrap();
        assert_eq!(l.depth, Some(5));
        assert!(notes[0].contains("searchmoves"));
        assert!(go("").unwrap().0.infinite);
        assert!(go("winc 10").unwrap().0.infinite);
        assert!(!go("nodes 0").unwrap().0.infinite);
        assert_eq!(go("nodes -5").unwrap().0.nodes, Some(1));
    }

    #[test]
    fn position_and_setoption_arguments() {
        let p = |s: &str| parse_position(&s.split_whitespace().collect::<Vec<_>>());
        assert_eq!(p("startpos").unwrap().fen, None);
        assert_eq!(p("startpos moves e2e4").unwrap().moves, ["e2e4"]);
        assert!(p("startpos junk moves e2e4").unwrap().ignored.is_some());
        assert_eq!(p("fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves").unwrap().moves.len(), 0);
        assert!(p("fen").is_err());
        assert!(p("fen moves e2e4").is_err());
        assert!(p("").is_err());
        assert!(p("moves e2e4").is_err());
        let o = |s: &str| parse_setoption(&s.split_whitespace().collect::<Vec<_>>());
        assert_eq!(o("name Clear Hash").unwrap(), ("Clear Hash".into(), None));
        assert_eq!(
            o("name Move Overhead value 10").unwrap(),
            ("Move Overhead".into(), Some("10".into()))
        );
        assert_eq!(o("name MPCParams value").unwrap().1, Some(String::new()));
        assert!(o("").is_err());
        assert!(o("name").is_err());
        assert!(o("name value 3").is_err());
        assert!(o("Hash value 3").is_err());
    }

    #[test]
    fn input_lines_are_capped_and_lossy() {
        let mut data: Vec<u8> = b"isready\r\ngo \xff\xfe depth 3\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100));
        data.extend(b"\nlast line without newline");
        let mut r = std::io::BufReader::with_capacity(7, &data[..]);
        assert_eq!(read_input(&mut r, 50), Input::Line("isready\r".into()));
        assert_eq!(read_input(&mut r, 50), Input::Line("go \u{FFFD}\u{FFFD} depth 3".into()));
        assert_eq!(read_input(&mut r, 50), Input::TooLong(100));
        assert_eq!(read_input(&mut r, 50), Input::Line("last line without newline".into()));
        assert_eq!(read_input(&mut r, 50), Input::End);
        let mut empty: &[u8] = b"\n";
        assert_eq!(read_input(&mut empty, 50), Input::Line(String::new()));
        assert_eq!(read_input(&mut empty, 50), Input::End);
    }

    #[test]
    fn echo_is_short_and_has_no_control_characters() {
        assert_eq!(echo("a\rb\u{0}c"), "a?b?c");
        let long = "y".repeat(1000);
        assert_eq!(echo(&long).chars().count(), ECHO_CHARS + 3);
    }
}
