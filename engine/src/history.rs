//! Quiet-move ordering memory: killer moves per ply and a butterfly history
//! table (side, from, to) updated with a bounded "gravity" rule.

use cozy_chess::{Color, Move};

use crate::score::MAX_PLY;

const HISTORY_MAX: i32 = 16_384;

#[derive(Clone)]
pub struct History {
    table: Box<[[[i32; 64]; 64]; 2]>,
    pub killers: [[Option<Move>; 2]; MAX_PLY + 2],
}

impl Default for History {
    fn default() -> Self {
        Self { table: Box::new([[[0; 64]; 64]; 2]), killers: [[None; 2]; MAX_PLY + 2] }
    }
}

impl History {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn clear_killers(&mut self) {
        self.killers = [[None; 2]; MAX_PLY + 2];
    }

    pub fn score(&self, side: Color, mv: Move) -> i32 {
        self.table[side as usize][mv.from as usize][mv.to as usize]
    }

    fn apply(&mut self, side: Color, mv: Move, bonus: i32) {
        let h = &mut self.table[side as usize][mv.from as usize][mv.to as usize];
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    /// A quiet move caused a beta cutoff at `depth`; `tried` are the quiet
    /// moves searched before it at the same node, which get a malus.
    pub fn on_cutoff(&mut self, side: Color, mv: Move, tried: &[Move], depth: i32, ply: usize) {
        let bonus = (depth * depth * 8).min(1600);
        self.apply(side, mv, bonus);
        for &q in tried {
            if q != mv {
                self.apply(side, q, -bonus);
            }
        }
        if let Some(k) = self.killers.get_mut(ply)
            && k[0] != Some(mv)
        {
            k[1] = k[0];
            k[0] = Some(mv);
        }
    }
}
