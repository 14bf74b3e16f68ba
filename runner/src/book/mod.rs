//! Making an opening book with an engine (`runner book`).
//!
//! Each candidate opening is a short random walk from the start position. A walk is "sane" when no
//! move in it hands the opponent a big advantage: after every random move the engine searches the
//! new position briefly (`guard_depth`), and a move that leaves the mover worse than `-guard` cp is
//! taken back and another one drawn (up to a few tries). The walk's end position is kept when a
//! deeper search (`depth`) scores it within `window` cp of equality and it is not a duplicate.
//!
//! Candidate `i` draws its moves from a generator seeded with `(seed, i)` and the engine's hash
//! is cleared (`ucinewgame`) before each candidate, so with a deterministic engine the book depends
//! only on the settings, never on how candidates were spread over engine processes.

pub mod chess960;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::fen::{Epd, Fen};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};
use tokio::sync::Mutex;

use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::STARTPOS_FEN;
use crate::play::cancel::Cancel;
use crate::play::uci::{StartOptions, UciEngine};

/// Settings of one book generation.
#[derive(Clone, Debug)]
pub struct BookGenConfig {
    /// Openings wanted.
    pub count: usize,
    /// Length of each random walk, in plies.
    pub plies: usize,
    /// Depth of the final evaluation.
    pub depth: u32,
    /// Keep an opening when |final score| <= window (cp).
    pub window: i32,
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

/// One accepted opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookEntry {
    /// Candidate number (book order).
    pub candidate: usize,
    /// Full FEN of the end position.
    pub fen: String,
    /// The walk, in UCI notation from the start position.
    pub moves: Vec<String>,
    /// Final score from White's point of view (cp).
    pub score: i32,
}

impl BookEntry {
    /// The EPD line written to the book: the position plus `hmvc`/`fmvn` operations, so the
    /// move counters survive in tools that read plain EPD.
    pub fn epd_line(&self) -> Result<String> {
        let pos = crate::plan::openings::position_from_fen(&self.fen)?;
        let epd = Epd::from_position(&pos, EnPassantMode::Legal);
        Ok(format!("{epd} hmvc {}; fmvn {};", pos.halfmoves(), pos.fullmoves()))
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
            if r.len() > cfg.count + cfg.count / 20 {
                enough.store(true, Ordering::SeqCst);
            }
        }
    }
    Ok(())
}

/// White-relative centipawns of a search of `pos` (mates far outside any window).
async fn score(engine: &mut UciEngine, pos: &Chess, moves: &[String], depth: u32) -> Result<i32> {
    let reply = engine
        .search(STARTPOS_FEN, moves, &format!("go depth {depth}"), Duration::from_secs(60))
        .await?;
    let eval = reply.info().score.ok_or_else(|| anyhow!("the engine reported no score"))?;
    let cp = eval.as_cp();
    Ok(if pos.turn().is_white() { cp } else { -cp })
}

async fn walk(engine: &mut UciEngine, cfg: &BookGenConfig, candidate: usize) -> Result<Walk> {
    engine.new_game(Duration::from_secs(10)).await?;
    let mut rng = ChaCha8Rng::seed_from_u64(
        cfg.seed ^ (candidate as u64).wrapping_mul(0xA24B_AED4_963E_E407),
    );
    let mut pos = Chess::default();
    let mut moves: Vec<String> = Vec::with_capacity(cfg.plies);
    for _ in 0..cfg.plies {
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
            let white_cp = score(engine, &after, &moves, cfg.guard_depth).await?;
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
    let final_cp = score(engine, &pos, &moves, cfg.depth).await?;
    if final_cp.abs() > cfg.window {
        return Ok(Walk::Rejected);
    }
    Ok(Walk::Kept(BookEntry {
        candidate,
        fen: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
        moves,
        score: final_cp,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(candidate: usize, fen: &str) -> BookEntry {
        BookEntry { candidate, fen: fen.into(), moves: vec![], score: 0 }
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
    fn epd_lines_keep_counters_as_operations() {
        let e = entry(0, "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3");
        assert_eq!(
            e.epd_line().unwrap(),
            "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 hmvc 0; fmvn 3;"
        );
        let back =
            crate::plan::openings::epd_line_to_fen(&e.epd_line().unwrap(), Default::default())
                .unwrap();
        assert_eq!(back, e.fen);
    }
}
