//! Transposition table: one entry per slot, indexed by the Zobrist key,
//! depth-preferred replacement with aging (entries from an older search are
//! always replaceable). Mate scores are stored relative to the node.

use cozy_chess::{Move, Piece, Square};

/// Kind of bound a stored score is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score is at least the stored one (fail high).
    Lower,
    /// The true score is at most the stored one (fail low).
    Upper,
    /// The stored score is exact.
    Exact,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    mv: u16,
    score: i16,
    eval: i16,
    depth: i8,
    /// Low 2 bits: bound (0 = empty); high 6 bits: age.
    meta: u8,
}

/// What a probe finds.
#[derive(Clone, Copy, Debug)]
pub struct TtHit {
    pub mv: Option<Move>,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

pub struct TranspositionTable {
    slots: Vec<Slot>,
    age: u8,
}

const PROMOS: [Option<Piece>; 5] =
    [None, Some(Piece::Knight), Some(Piece::Bishop), Some(Piece::Rook), Some(Piece::Queen)];

/// Packs a move into 16 bits: from | to << 6 | promotion << 12.
pub fn pack_move(mv: Move) -> u16 {
    let promo = match mv.promotion {
        None => 0,
        Some(Piece::Knight) => 1,
        Some(Piece::Bishop) => 2,
        Some(Piece::Rook) => 3,
        Some(_) => 4,
    };
    mv.from as u16 | (mv.to as u16) << 6 | promo << 12
}

/// Inverse of [`pack_move`]; 0 is "no move".
pub fn unpack_move(v: u16) -> Option<Move> {
    if v == 0 {
        return None;
    }
    let promo = PROMOS.get((v >> 12) as usize).copied().flatten();
    Some(Move {
        from: Square::index((v & 63) as usize),
        to: Square::index(((v >> 6) & 63) as usize),
        promotion: promo,
    })
}

impl TranspositionTable {
    /// A table using about `mb` megabytes.
    pub fn new(mb: usize) -> Self {
        let n = (mb.max(1) * 1024 * 1024 / std::mem::size_of::<Slot>()).max(1024);
        Self { slots: vec![Slot::default(); n], age: 0 }
    }

    /// A table with no slots, only to hold the place of a table lent out for a moment (the
    /// MPC diagnostics lend the search's table to their sandbox); it must never be probed.
    pub(crate) fn placeholder() -> Self {
        Self { slots: Vec::new(), age: 0 }
    }

    pub fn resize(&mut self, mb: usize) {
        *self = Self::new(mb);
    }

    pub fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.age = 0;
    }

    /// Called once per `go`: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.age = (self.age + 1) & 63;
    }

    fn index(&self, key: u64) -> usize {
        ((key as u128 * self.slots.len() as u128) >> 64) as usize
    }

    pub fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        let s = self.slots[self.index(key)];
        if s.meta & 3 == 0 || s.key != key {
            return None;
        }
        let bound = match s.meta & 3 {
            1 => Bound::Lower,
            2 => Bound::Upper,
            _ => Bound::Exact,
        };
        Some(TtHit {
            mv: unpack_move(s.mv),
            score: crate::score::from_tt(s.score as i32, ply),
            eval: s.eval as i32,
            depth: s.depth as i32,
            bound,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        key: u64,
        mv: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let i = self.index(key);
        let old = self.slots[i];
        let old_age = old.meta >> 2;
        let depth = depth.clamp(-1, 127);
        let replace = old.meta & 3 == 0
            || old_age != self.age
            || bound == Bound::Exact
            || depth + 2 >= old.depth as i32;
        if !replace {
            return;
        }
        let packed = match mv {
            Some(m) => pack_move(m),
            None if old.key == key => old.mv,
            None => 0,
        };
        let b = match bound {
            Bound::Lower => 1,
            Bound::Upper => 2,
            Bound::Exact => 3,
        };
        self.slots[i] = Slot {
            key,
            mv: packed,
            score: crate::score::to_tt(score, ply) as i16,
            eval: eval.clamp(-32000, 32000) as i16,
            depth: depth as i8,
            meta: b | self.age << 2,
        };
    }

    /// Permille of the first 1000 slots used by the current search.
    pub fn hashfull(&self) -> usize {
        let n = self.slots.len().min(1000);
        let used =
            self.slots[..n].iter().filter(|s| s.meta & 3 != 0 && s.meta >> 2 == self.age).count();
        used * 1000 / n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_packing_round_trips() {
        for s in ["e2e4", "a7a8q", "h2h1n", "e1h1", "b7c8r", "g2f1b"] {
            let m: Move = s.parse().unwrap();
            assert_eq!(unpack_move(pack_move(m)), Some(m));
        }
    }

    #[test]
    fn store_and_probe_with_mate_adjustment() {
        let mut tt = TranspositionTable::new(1);
        let m: Move = "e2e4".parse().unwrap();
        tt.store(42, Some(m), crate::score::MATE - 10, 5, 6, Bound::Exact, 4);
        let hit = tt.probe(42, 2).unwrap();
        assert_eq!(hit.mv, Some(m));
        assert_eq!(hit.score, crate::score::MATE - 8);
        assert_eq!(hit.depth, 6);
        assert!(tt.probe(43, 0).is_none());
    }

    #[test]
    fn deeper_entry_survives_shallow_store_from_same_search() {
        let mut tt = TranspositionTable::new(1);
        tt.store(7, None, 10, 0, 10, Bound::Lower, 0);
        // A different key mapping to the same slot: find one.
        let i = tt.index(7);
        let other = (8u64..).find(|k| tt.index(*k) == i).unwrap();
        tt.store(other, None, 20, 0, 2, Bound::Lower, 0);
        assert!(tt.probe(7, 0).is_some());
        tt.new_search();
        tt.store(other, None, 20, 0, 2, Bound::Lower, 0);
        assert!(tt.probe(other, 0).is_some());
    }
}
