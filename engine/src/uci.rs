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
        Self {
            opts,
            pos: Position::default(),
            searcher,
            stop,
            worker: None,
        }
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
                let base = if startpos || fen.is_none() {
                    Ok(Position::default())
                } else {
                    Position::from_fen(fen.as_ref().map_or("", |f| f.as_str()))
                };
                match base {
                    Ok(mut pos) => {
                        let strs: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
                        if let Err(bad) =
                            pos.play_uci_moves(strs.iter().map(String::as_str), self.opts.chess960)
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
            UciMessage::Go {
                time_control,
                search_control,
            } => {
                self.finish_search(true);
                let limits = self.limits(time_control, search_control);
                self.start_search(limits);
            }
            UciMessage::PonderHit | UciMessage::Debug(_) | UciMessage::Register { .. } => {}
            _ => say(&format!("info string unknown command: {trimmed}")),
        }
        true
    }

    fn limits(
        &self,
        tc: Option<UciTimeControl>,
        sc: Option<vampirc_uci::UciSearchControl>,
    ) -> Limits {
        let mut l = Limits::default();
        let white = self.pos.board.side_to_move() == cozy_chess::Color::White;
        let ms = |d: Option<vampirc_uci::Duration>| {
            d.map(|d| d.num_milliseconds().max(0) as u64)
        };
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
            l.depth = sc.depth.map(|d| d as i32);
            l.nodes = sc.nodes;
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
                say(&r.mpc.info_line());
                match r.best_move {
                    Some(m) => say(&format!(
                        "bestmove {}",
                        format_move(&pos.board, m, opts.chess960)
                    )),
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
