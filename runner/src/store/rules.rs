//! A game record checked against the rules of chess: its moves are replayed from its FEN, each
//! must be legal, no ending by the rules may come before the last move (the runner stops a game
//! at the first one), and a result the rules decide (checkmate, stalemate, threefold, fifty
//! moves, insufficient material) must be the final position's. A record whose ending the rules
//! do not decide (adjudication, a loss on time, a crash) may not end in a position the rules
//! had already decided. The fleet applies it to every report and every pull: a worker's record
//! with a result its moves do not give is refused, naming the game.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Position};

use super::GameRecord;
use crate::plan::openings::position_for;
use crate::plan::variant::Variant;
use crate::play::game::{GameResult, rules_ending};

/// Checks `r` (see the module's doc); `Err` is one line saying what is wrong.
pub fn check_rules(r: &GameRecord, variant: Variant) -> Result<(), String> {
    let mut pos: Chess = position_for(&r.fen, variant).map_err(|e| format!("{e:#}"))?;
    if r.plies != r.moves.len() {
        return Err(format!("it counts {} plies but holds {} moves", r.plies, r.moves.len()));
    }
    if r.book_plies > r.moves.len() {
        return Err(format!("{} book plies of {} moves", r.book_plies, r.moves.len()));
    }
    let mut history: Vec<Zobrist64> = vec![pos.zobrist_hash(EnPassantMode::Legal)];
    for (i, m) in r.moves.iter().enumerate() {
        if i >= r.book_plies
            && let Some((t, _)) = rules_ending(&pos, &history)
        {
            return Err(format!("the game was over ({t}) before move {} ({m})", i + 1));
        }
        let mv = m
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| format!("move {} ({m}) is illegal", i + 1))?;
        pos.play_unchecked(mv);
        history.push(pos.zobrist_hash(EnPassantMode::Legal));
    }
    let ending = rules_ending(&pos, &history);
    if r.termination.is_rules() {
        let Some((t, winner)) = ending else {
            return Err(format!(
                "it ends by {} but its final position is not one",
                r.termination.json_str()
            ));
        };
        if t != r.termination {
            return Err(format!(
                "it ends by {} but its final position is {}",
                r.termination.json_str(),
                t.json_str()
            ));
        }
        let result = GameResult::from_winner(winner);
        if result != r.result {
            return Err(format!(
                "its result {} is not the final position's ({})",
                r.result.pgn(),
                result.pgn()
            ));
        }
    } else if let Some((t, _)) = ending {
        return Err(format!(
            "it ends by {} but its final position had already ended the game ({})",
            r.termination.json_str(),
            t.json_str()
        ));
    }
    Ok(())
}
