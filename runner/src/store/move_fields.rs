//! The per-move fields of a game record beyond score, depth and time: what the engines' last
//! scored `info` line said (seldepth, nodes, nps, hashfull, pv) and the mover's clock after the
//! move. Kept in `games.jsonl` (key `move_info`) so `--pgnout` can write them (and `--resume`
//! rewrite them); each column is aligned with the engine moves and left out of the JSON when no
//! move has it, so records of older runners (which have none) read as before.

use serde::{Deserialize, Serialize};

use crate::play::game::MoveInfo;

/// Columns of per-move fields, one entry per engine move (`GameRecord::moves[book_plies..]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveFields {
    #[serde(default, skip_serializing_if = "all_none")]
    pub seldepths: Vec<Option<u32>>,
    #[serde(default, skip_serializing_if = "all_none")]
    pub nodes: Vec<Option<u64>>,
    #[serde(default, skip_serializing_if = "all_none")]
    pub nps: Vec<Option<u64>>,
    #[serde(default, skip_serializing_if = "all_none")]
    pub hashfull: Vec<Option<u32>>,
    #[serde(default, skip_serializing_if = "all_none")]
    pub pvs: Vec<Option<String>>,
    /// The mover's clock after the move (increment added), ms; under a clock only.
    #[serde(default, skip_serializing_if = "all_none")]
    pub timeleft_ms: Vec<Option<u64>>,
}

fn all_none<T>(v: &[Option<T>]) -> bool {
    v.iter().all(Option::is_none)
}

impl MoveFields {
    /// No move has any of the fields (nothing to store).
    pub fn is_empty(&self) -> bool {
        all_none(&self.seldepths)
            && all_none(&self.nodes)
            && all_none(&self.nps)
            && all_none(&self.hashfull)
            && all_none(&self.pvs)
            && all_none(&self.timeleft_ms)
    }

    /// The columns of a game's engine moves.
    pub fn of_moves(moves: &[MoveInfo]) -> MoveFields {
        let col = |f: &dyn Fn(&MoveInfo) -> Option<u64>| moves.iter().map(f).collect::<Vec<_>>();
        MoveFields {
            seldepths: moves.iter().map(|m| m.extra.seldepth).collect(),
            nodes: col(&|m| m.extra.nodes),
            nps: col(&|m| m.extra.nps),
            hashfull: moves.iter().map(|m| m.extra.hashfull).collect(),
            pvs: moves.iter().map(|m| m.extra.pv.clone()).collect(),
            timeleft_ms: col(&|m| m.extra.timeleft_ms),
        }
    }
}
