//! The UCI protocol loop. Standard input is read on its own thread, so that
//! `stop`, `isready` and `quit` are answered while a search runs on the search
//! thread. Commands are parsed with vampirc-uci; anything it cannot parse is
//! answered with `info string unknown command: ...` and ignored.

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use vampirc_uci::{UciMessage, UciTimeControl, parse_one};

use crate::options::{Effect, EngineOptions};
use crate::position::{Position, format_move};
use crate::search::Searcher;
use crate::timeman::Limits;

const NAME: &str = concat!("mpc-engine ", env!("CARGO_PKG_VERSION"));
const AUTHOR: &str = "the mpc-harness authors";
const SEARCH_STACK: usize = 64 * 1024 * 1024;

pub struct Uci {
    opts: EngineOptions,
    pos: Position,
    searcher: Arc<Mutex<Searcher>>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

fn say(line: &str) {
    println!("{line}");
}

impl Default for Uci {
    fn default() -> Self {
        Self::new()
    }
}

impl Uci {
    pub fn new() -> Self {
        let opts = EngineOptions::default();
        let stop = Arc::new(AtomicBool::new(false));
        let searcher = Arc::new(Mutex::new(Searcher::new(&opts, stop.clone())));
        Self { opts, pos: Position::default(), searcher, stop, worker: None }
    }

    /// Runs the loop until `quit` or end of input.
    pub fn run(mut self) {
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    return;
                }
            }
            let _ = tx.send("quit".to_string());
        });
        while let Ok(line) = rx.recv() {
            if !self.handle(&line) {
                break;
            }
        }
        self.finish_search(true);
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
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return true;
        }
        // Commands vampirc-uci does not know, or that we handle by hand.
        let first = trimmed.split_whitespace().next().unwrap_or("");
        match first {
            "quit" => return false,
            "stop" => {
                self.finish_search(true);
                return true;
            }
            "isready" => {
                say("readyok");
                return true;
            }
            "d" => {
                say(&format!("info string fen {}", self.pos.board));
                return true;
            }
            _ => {}
        }
        let msg = parse_one(trimmed);
        if matches!(msg, UciMessage::Unknown(..)) {
            // vampirc-uci rejects some valid input (Shredder-FEN castling,
            // FENs without counters, negative clock values): read those by hand.
            match first {
                "position" => {
                    self.finish_search(true);
                    self.position_by_hand(trimmed);
                    return true;
                }
                "go" => {
                    if let Some(limits) = self.go_by_hand(trimmed) {
                        self.finish_search(true);
                        self.start_search(limits);
                        return true;
                    }
                }
                _ => {}
            }
        }
        match msg {
            UciMessage::Uci => {
                say(&format!("id name {NAME}"));
                say(&format!("id author {AUTHOR}"));
                for o in EngineOptions::uci_declarations() {
                    say(&o);
                }
                say("uciok");
            }
            UciMessage::UciNewGame => {
                self.finish_search(true);
                self.lock().clear();
                self.pos = Position::default();
            }
            UciMessage::SetOption { name, value } => {
                self.finish_search(true);
                match self.opts.set(&name, value.as_deref()) {
                    Ok(Effect::ResizeHash) => self.lock().tt.resize(self.opts.hash_mb),
                    Ok(Effect::ClearHash) => self.lock().tt.clear(),
                    Ok(Effect::None) => {}
                    Err(e) => say(&format!("info string option {name}: {e}; ignored")),
                }
            }
            UciMessage::Position { startpos, fen, moves } => {
                self.finish_search(true);
                let fen = if startpos { None } else { fen.map(|f| f.0) };
                let strs: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
                self.set_position(fen.as_deref(), &strs);
            }
            UciMessage::Go { time_control, search_control } => {
                self.finish_search(true);
                let limits = self.limits(time_control, search_control);
                self.start_search(limits);
            }
            UciMessage::PonderHit | UciMessage::Debug(_) | UciMessage::Register { .. } => {}
            _ => say(&format!("info string unknown command: {trimmed}")),
        }
        true
    }

    fn set_position(&mut self, fen: Option<&str>, moves: &[String]) {
        let base = match fen {
            None => Ok(Position::default()),
            Some(f) => Position::from_fen(f),
        };
        match base {
            Ok(mut pos) => {
                if let Err(bad) =
                    pos.play_uci_moves(moves.iter().map(String::as_str), self.opts.chess960)
                {
                    say(&format!(
                        "info string illegal move {bad} in position command; ignored from there on"
                    ));
                }
                self.pos = pos;
            }
            Err(e) => say(&format!("info string {e}; position unchanged")),
        }
    }

    /// `position startpos|fen <fields> [moves ...]` read without vampirc-uci.
    fn position_by_hand(&mut self, line: &str) {
        let tokens: Vec<&str> = line.split_whitespace().skip(1).collect();
        let moves_at = tokens.iter().position(|t| *t == "moves").unwrap_or(tokens.len());
        let moves: Vec<String> =
            tokens.get(moves_at + 1..).unwrap_or(&[]).iter().map(|s| s.to_string()).collect();
        match tokens.first() {
            Some(&"startpos") => self.set_position(None, &moves),
            Some(&"fen") if moves_at > 1 => {
                let fen = tokens[1..moves_at].join(" ");
                self.set_position(Some(&fen), &moves)
            }
            _ => say(&format!("info string unknown command: {line}")),
        }
    }

    /// `go ...` read without vampirc-uci; `None` if a value is not a number.
    fn go_by_hand(&self, line: &str) -> Option<Limits> {
        let tokens: Vec<&str> = line.split_whitespace().skip(1).collect();
        let white = self.pos.board.side_to_move() == cozy_chess::Color::White;
        let mut l = Limits::default();
        let mut i = 0;
        let num = |i: usize| tokens.get(i + 1).and_then(|v| v.parse::<i64>().ok());
        while i < tokens.len() {
            let key = tokens[i];
            match key {
                "infinite" | "ponder" => {
                    l.infinite = true;
                    i += 1;
                    continue;
                }
                "searchmoves" => break,
                _ => {}
            }
            let v = num(i)?;
            let ms = v.max(0) as u64;
            match key {
                "wtime" if white => l.time = Some(ms),
                "btime" if !white => l.time = Some(ms),
                "winc" if white => l.inc = ms,
                "binc" if !white => l.inc = ms,
                "wtime" | "btime" | "winc" | "binc" => {}
                "movestogo" => l.movestogo = Some(ms).filter(|&m| m > 0),
                "movetime" => l.movetime = Some(ms),
                "depth" => l.depth = Some(v.clamp(1, 127) as i32),
                "nodes" => l.nodes = Some(ms.max(1)),
                "mate" => l.depth = Some((2 * v + 1).clamp(1, 127) as i32),
                _ => return None,
            }
            i += 2;
        }
        if l.time.is_none() && l.movetime.is_none() && l.depth.is_none() && l.nodes.is_none() {
            l.infinite = true;
        }
        Some(l)
    }

    fn limits(
        &self,
        tc: Option<UciTimeControl>,
        sc: Option<vampirc_uci::UciSearchControl>,
    ) -> Limits {
        let mut l = Limits::default();
        let white = self.pos.board.side_to_move() == cozy_chess::Color::White;
        let ms = |d: Option<vampirc_uci::Duration>| d.map(|d| d.num_milliseconds().max(0) as u64);
        match tc {
            Some(UciTimeControl::Infinite) | Some(UciTimeControl::Ponder) => l.infinite = true,
            Some(UciTimeControl::MoveTime(d)) => l.movetime = ms(Some(d)),
            Some(UciTimeControl::TimeLeft {
                white_time,
                black_time,
                white_increment,
                black_increment,
                moves_to_go,
            }) => {
                let (t, inc) = if white {
                    (white_time, white_increment)
                } else {
                    (black_time, black_increment)
                };
                l.time = ms(t);
                l.inc = ms(inc).unwrap_or(0);
                l.movestogo = moves_to_go.map(|m| m as u64).filter(|&m| m > 0);
            }
            None => {}
        }
        if let Some(sc) = sc {
            l.depth = sc.depth.map(|d| (d as i32).max(1));
            l.nodes = sc.nodes;
            if let Some(m) = sc.mate.filter(|_| l.depth.is_none()) {
                l.depth = Some((2 * m as i32 + 1).min(127));
            }
        }
        if tc.is_none() && l.depth.is_none() && l.nodes.is_none() {
            l.infinite = true;
        }
        l
    }

    fn start_search(&mut self, limits: Limits) {
        self.stop.store(false, Ordering::SeqCst);
        let searcher = self.searcher.clone();
        let pos = self.pos.clone();
        let opts = self.opts.clone();
        let stop = self.stop.clone();
        let spawned = std::thread::Builder::new()
            .name("search".into())
            .stack_size(SEARCH_STACK)
            .spawn(move || {
                let mut s = searcher.lock().unwrap_or_else(|p| p.into_inner());
                s.configure(&opts);
                s.verbose = true;
                let r = s.search(&pos, &limits);
                // `go infinite` must not answer before `stop`.
                if limits.infinite {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
                say(&format!(
                    "info nodes {} time {} nps {}",
                    r.nodes,
                    r.elapsed_ms,
                    r.nodes * 1000 / r.elapsed_ms.max(1)
                ));
                say(&r.mpc.info_line());
                match r.best_move {
                    Some(m) => {
                        say(&format!("bestmove {}", format_move(&pos.board, m, opts.chess960)))
                    }
                    None => say("bestmove 0000"),
                }
            });
        match spawned {
            Ok(h) => self.worker = Some(h),
            Err(e) => say(&format!("info string cannot start search thread: {e}")),
        }
    }

    /// Whether a search thread is running (for tests).
    pub fn is_searching(&self) -> bool {
        self.searching()
    }
}
