//! Making an opening book with an engine (`runner book`).
//!
//! A candidate starts from an opening line: a named human line read with `--from` (see
//! [`lines`]), or the empty line from the start position for random walks. It is extended, when
//! shorter than the target ply count, by random moves that are "sane": after every random move
//! the engine searches the new position briefly (`guard_depth`), and a move that leaves the mover
//! worse than `-guard` cp is taken back and another one drawn (up to a few tries). The end
//! position is scored by a deeper search (`depth`) and kept when the score is in the book's
//! window ([`Keep`]: balanced, or unbalanced as fishtest's UHO books) and the position is not a
//! duplicate.
//!
//! Candidate `i` draws its moves from a generator seeded with `(seed, i)` and the engine's hash
//! is cleared (`ucinewgame`) before each candidate, so with a deterministic engine the book depends
//! only on the settings, never on how candidates were spread over engine processes.

pub mod chess960;
pub mod lines;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use shakmaty::fen::{Epd, Fen};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use lines::{SourceLine, epd_string};
use tokio::sync::Mutex;

use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::position_from_fen;
use crate::play::cancel::Cancel;
use crate::play::uci::{StartOptions, UciEngine};

/// Which final scores a book keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// `|score| <= window` cp.
    Balanced { window: i32 },
    /// White ahead by `min..=max` cp (fishtest's UHO books), or the side to move when `mover`.
    Unbalanced { min: i32, max: i32, mover: bool },
}

impl Keep {
    /// Whether a position with this final score (cp for the side to move) is kept.
    pub fn keeps(self, ce: i32, white_to_move: bool) -> bool {
        match self {
            Keep::Balanced { window } => ce.abs() <= window,
            Keep::Unbalanced { min, max, mover } => {
                let ahead = if mover || white_to_move { ce } else { -ce };
                (min..=max).contains(&ahead)
            }
        }
    }
}

/// Settings of one book generation.
#[derive(Clone, Debug)]
pub struct BookGenConfig {
    /// Openings wanted (the book is cut to this many).
    pub count: usize,
    /// Lines the candidates start from: candidate `i` starts from `lines[(i / per_line) %
    /// lines.len()]` (one empty line: random walks from the start).
    pub lines: Arc<Vec<SourceLine>>,
    /// Candidates per line (more than one only differ when lines are extended).
    pub per_line: usize,
    /// Extend each line with random moves to this many plies (a longer line is kept as it is).
    pub plies: usize,
    /// Depth of the final evaluation.
    pub depth: u32,
    /// Which final scores are kept.
    pub keep: Keep,
    /// Depth of the per-move sanity search.
    pub guard_depth: u32,
    /// A move is refused when it leaves the mover worse than -guard (cp).
    pub guard: i32,
    /// Random moves tried per ply before the walk is abandoned.
    pub tries_per_ply: usize,
    pub seed: u64,
    /// Engine processes searching at once.
    pub concurrency: usize,
    /// Give up after this many candidates (protects against a window nothing fits).
    pub max_candidates: usize,
}

impl BookGenConfig {
    /// The line candidate `i` starts from.
    fn line(&self, candidate: usize) -> &SourceLine {
        &self.lines[(candidate / self.per_line.max(1)) % self.lines.len()]
    }
}

/// One accepted opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookEntry {
    /// Candidate number (book order).
    pub candidate: usize,
    /// Full FEN of the end position.
    pub fen: String,
    /// The line and its extension, in UCI notation from the line's start.
    pub moves: Vec<String>,
    /// Final score from White's point of view (cp).
    pub score: i32,
    /// The opening's ECO code and name, when the line has them.
    pub eco: Option<String>,
    pub name: Option<String>,
}

impl BookEntry {
    /// The EPD line written to the book: the position, then the operations `eco` and `c0` (the
    /// opening's name) when known, `ce` (the final score in cp from the side to move, as the EPD
    /// standard defines it) and the move counters `hmvc`/`fmvn`.
    pub fn epd_line(&self) -> Result<String> {
        let pos = position_from_fen(&self.fen)?;
        let epd = Epd::from_position(&pos, EnPassantMode::Legal);
        let mut ops = String::new();
        if let Some(eco) = &self.eco {
            ops.push_str(&format!(" eco {};", epd_string(eco)));
        }
        if let Some(name) = &self.name {
            ops.push_str(&format!(" c0 {};", epd_string(name)));
        }
        let ce = if pos.turn().is_white() { self.score } else { -self.score };
        Ok(format!("{epd}{ops} ce {ce}; hmvc {}; fmvn {};", pos.halfmoves(), pos.fullmoves()))
    }
}

/// Progress counters shared with the caller's progress display.
#[derive(Debug, Default)]
pub struct BookProgress {
    pub tried: AtomicUsize,
    pub accepted: AtomicUsize,
}

enum Walk {
    Kept(BookEntry),
    Rejected,
}

/// Generates the book; the result is in candidate order, de-duplicated by position, `count` long
/// (or shorter when `max_candidates` ran out or the run was cancelled).
pub async fn generate(
    spec: &EngineSpec,
    cfg: &BookGenConfig,
    progress: Arc<BookProgress>,
    cancel: Cancel,
) -> Result<Vec<BookEntry>> {
    if cfg.count == 0 {
        return Ok(Vec::new());
    }
    let next = Arc::new(AtomicUsize::new(0));
    let enough = Arc::new(AtomicBool::new(false));
    let results = Arc::new(Mutex::new(Vec::<BookEntry>::new()));
    let mut workers = Vec::new();
    for instance in 0..cfg.concurrency.max(1) {
        let opts = StartOptions { instance, ..StartOptions::default() };
        let engine = UciEngine::start(spec, &opts).await?;
        let (cfg, next, enough, results, progress, cancel) = (
            cfg.clone(),
            next.clone(),
            enough.clone(),
            results.clone(),
            progress.clone(),
            cancel.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut engine = engine;
            let out = worker(&mut engine, &cfg, &next, &enough, &results, &progress, &cancel).await;
            engine.shutdown().await;
            out
        }));
    }
    for w in workers {
        w.await.map_err(|e| anyhow!("book worker failed: {e}"))??;
    }
    let mut all = Arc::try_unwrap(results).map(Mutex::into_inner).unwrap_or_default();
    all.sort_by_key(|e| e.candidate);
    Ok(dedup_and_cut(all, cfg.count))
}

/// Drops repeated positions (by EPD: board, side, castling, en passant) keeping the first, and
/// cuts to `count`.
fn dedup_and_cut(entries: Vec<BookEntry>, count: usize) -> Vec<BookEntry> {
    let mut seen = HashSet::new();
    entries
        .into_iter()
        .filter(|e| seen.insert(e.fen.split_whitespace().take(4).collect::<Vec<_>>().join(" ")))
        .take(count)
        .collect()
}

async fn worker(
    engine: &mut UciEngine,
    cfg: &BookGenConfig,
    next: &AtomicUsize,
    enough: &AtomicBool,
    results: &Mutex<Vec<BookEntry>>,
    progress: &BookProgress,
    cancel: &Cancel,
) -> Result<()> {
    while !enough.load(Ordering::SeqCst) && !cancel.is_cancelled() {
        let candidate = next.fetch_add(1, Ordering::SeqCst);
        if candidate >= cfg.max_candidates {
            break;
        }
        let walk = walk(engine, cfg, candidate)
            .await
            .with_context(|| format!("candidate opening {candidate}"))?;
        progress.tried.fetch_add(1, Ordering::SeqCst);
        if let Walk::Kept(entry) = walk {
            let mut r = results.lock().await;
            r.push(entry);
            progress.accepted.store(r.len(), Ordering::SeqCst);
            // Duplicates are removed at the end; a little headroom keeps the count reachable.
            if r.len() > cfg.count.saturating_add(cfg.count / 20) {
                enough.store(true, Ordering::SeqCst);
            }
        }
    }
    Ok(())
}

/// White-relative centipawns of a search of `pos`, reached by `moves` from `root` (mates far
/// outside any window).
async fn score(
    engine: &mut UciEngine,
    root: &str,
    pos: &Chess,
    moves: &[String],
    depth: u32,
) -> Result<i32> {
    let reply =
        engine.search(root, moves, &format!("go depth {depth}"), Duration::from_secs(60)).await?;
    let eval = reply.info().score.ok_or_else(|| anyhow!("the engine reported no score"))?;
    let cp = eval.as_cp();
    Ok(if pos.turn().is_white() { cp } else { -cp })
}

async fn walk(engine: &mut UciEngine, cfg: &BookGenConfig, candidate: usize) -> Result<Walk> {
    let line = cfg.line(candidate);
    if !candidate.is_multiple_of(cfg.per_line.max(1)) && line.moves.len() >= cfg.plies {
        // Only extensions differ between a line's candidates.
        return Ok(Walk::Rejected);
    }
    engine.new_game(Duration::from_secs(10)).await?;
    let mut rng = ChaCha8Rng::seed_from_u64(
        cfg.seed ^ (candidate as u64).wrapping_mul(0xA24B_AED4_963E_E407),
    );
    let mut pos = position_from_fen(&line.root)?;
    for m in &line.moves {
        let m: UciMove = m.parse().map_err(|_| anyhow!("bad move {m} in {}", line.at))?;
        let m = m.to_move(&pos).map_err(|_| anyhow!("illegal move {m} in {}", line.at))?;
        pos.play_unchecked(m);
    }
    if pos.is_game_over() {
        return Ok(Walk::Rejected);
    }
    let mut moves = line.moves.clone();
    while moves.len() < cfg.plies {
        let legal = pos.legal_moves();
        let mut accepted = false;
        for _ in 0..cfg.tries_per_ply {
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            let mut after = pos.clone();
            after.play_unchecked(m);
            if after.is_game_over() {
                continue;
            }
            let uci = UciMove::from_move(m, CastlingMode::Standard).to_string();
            moves.push(uci);
            let white_cp = score(engine, &line.root, &after, &moves, cfg.guard_depth).await?;
            let mover_cp = if pos.turn().is_white() { white_cp } else { -white_cp };
            if mover_cp >= -cfg.guard {
                pos = after;
                accepted = true;
                break;
            }
            moves.pop();
        }
        if !accepted {
            return Ok(Walk::Rejected);
        }
    }
    let final_cp = score(engine, &line.root, &pos, &moves, cfg.depth).await?;
    let ce = if pos.turn().is_white() { final_cp } else { -final_cp };
    if !cfg.keep.keeps(ce, pos.turn().is_white()) {
        return Ok(Walk::Rejected);
    }
    Ok(Walk::Kept(BookEntry {
        candidate,
        fen: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
        moves,
        score: final_cp,
        eco: line.eco.clone(),
        name: line.name.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(candidate: usize, fen: &str) -> BookEntry {
        BookEntry { candidate, fen: fen.into(), moves: vec![], score: 0, eco: None, name: None }
    }

    #[test]
    fn dedup_ignores_move_counters_and_keeps_the_first() {
        let a = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let a2 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 4 3";
        let b = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
        let out = dedup_and_cut(vec![entry(0, a), entry(1, a2), entry(2, b), entry(3, b)], 5);
        assert_eq!(out.iter().map(|e| e.candidate).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(dedup_and_cut(vec![entry(0, a), entry(2, b)], 1).len(), 1);
    }

    #[test]
    fn windows_keep_what_they_say() {
        let balanced = Keep::Balanced { window: 30 };
        assert!(
            balanced.keeps(-30, true) && balanced.keeps(30, false) && !balanced.keeps(31, true)
        );
        let uho = Keep::Unbalanced { min: 80, max: 150, mover: false };
        // White ahead by 100: +100 for White to move, -100 for Black to move.
        assert!(uho.keeps(100, true) && uho.keeps(-100, false));
        assert!(!uho.keeps(100, false) && !uho.keeps(79, true) && !uho.keeps(151, true));
        let mover = Keep::Unbalanced { min: 80, max: 150, mover: true };
        assert!(mover.keeps(100, false) && !mover.keeps(-100, false));
    }

    #[test]
    fn epd_lines_keep_counters_as_operations() {
        let e = entry(0, "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3");
        assert_eq!(
            e.epd_line().unwrap(),
            "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 ce 0; hmvc 0; fmvn 3;"
        );
        let named = BookEntry {
            eco: Some("B00".into()),
            name: Some("King's Pawn".into()),
            score: 35,
            ..entry(0, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        };
        assert_eq!(
            named.epd_line().unwrap(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - eco \"B00\"; c0 \"King's Pawn\"; ce -35; hmvc 0; fmvn 1;"
        );
        let back =
            crate::plan::openings::epd_line_to_fen(&e.epd_line().unwrap(), Default::default())
                .unwrap();
        assert_eq!(back, e.fen);
    }
}
