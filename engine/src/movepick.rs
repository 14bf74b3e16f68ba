//! Staged move picker: the transposition-table move first (checked for
//! legality, no generation needed), then winning and equal captures and
//! promotions by MVV-LVA, then the killer moves, then the other quiet moves by
//! history, and last the captures that lose material by SEE.
//! In quiescence mode only captures and promotions are produced.

use cozy_chess::{Board, Move, Piece, Square};

use crate::history::History;
use crate::see::{captured, see};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    TtMove,
    Generate,
    GoodNoisy,
    Killers,
    Quiets,
    BadNoisy,
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    GoodNoisy,
    BadNoisy,
    Quiet,
    Taken,
}

#[derive(Clone, Copy)]
struct Entry {
    mv: Move,
    score: i32,
    kind: Kind,
}

const MAX_MOVES: usize = 256;
const NULL_MOVE: Move = Move { from: Square::A1, to: Square::A1, promotion: None };

/// Whether `mv` captures or promotes.
pub fn is_noisy(board: &Board, mv: Move) -> bool {
    mv.promotion.is_some() || captured(board, mv).is_some()
}

/// MVV-LVA: most valuable victim first, then least valuable attacker.
pub fn mvv_lva(board: &Board, mv: Move) -> i32 {
    let victim = captured(board, mv).map_or(0, |p| p as i32 + 1);
    let attacker = board.piece_on(mv.from).map_or(0, |p| p as i32);
    let promo = match mv.promotion {
        Some(Piece::Queen) => 8,
        Some(_) => -8,
        None => 0,
    };
    victim * 16 - attacker + promo
}

pub struct MovePicker {
    stage: Stage,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    killer_idx: usize,
    qsearch: bool,
    list: [Entry; MAX_MOVES],
    len: usize,
}

impl MovePicker {
    /// Picker for a full-width node. `killers` may hold moves illegal here.
    pub fn new(tt_move: Option<Move>, killers: [Option<Move>; 2]) -> Self {
        Self {
            stage: Stage::TtMove,
            tt_move,
            killers,
            killer_idx: 0,
            qsearch: false,
            list: [Entry { mv: NULL_MOVE, score: 0, kind: Kind::Taken }; MAX_MOVES],
            len: 0,
        }
    }

    /// Picker for quiescence: captures and promotions only.
    pub fn new_qsearch(tt_move: Option<Move>) -> Self {
        let mut p = Self::new(tt_move, [None; 2]);
        p.qsearch = true;
        p
    }

    fn generate(&mut self, board: &Board, history: &History) {
        let side = board.side_to_move();
        let tt = self.tt_move;
        let qsearch = self.qsearch;
        let mut len = 0;
        let list = &mut self.list;
        board.generate_moves(|moves| {
            for mv in moves {
                if Some(mv) == tt {
                    continue;
                }
                let noisy = is_noisy(board, mv);
                if qsearch && !noisy {
                    continue;
                }
                let (kind, score) = if noisy {
                    let s = mvv_lva(board, mv);
                    if mv.promotion.is_some_and(|p| p != Piece::Queen) {
                        (Kind::BadNoisy, s)
                    } else if see(board, mv) >= 0 {
                        (Kind::GoodNoisy, s)
                    } else {
                        (Kind::BadNoisy, s)
                    }
                } else {
                    (Kind::Quiet, history.score(side, mv))
                };
                list[len] = Entry { mv, score, kind };
                len += 1;
            }
            false
        });
        self.len = len;
    }

    fn best_of(&mut self, kind: Kind) -> Option<Move> {
        let mut best: Option<usize> = None;
        for i in 0..self.len {
            let e = &self.list[i];
            if e.kind == kind && best.is_none_or(|b| e.score > self.list[b].score) {
                best = Some(i);
            }
        }
        best.map(|i| {
            self.list[i].kind = Kind::Taken;
            self.list[i].mv
        })
    }

    /// The next move, or `None` when all legal moves were produced.
    pub fn next(&mut self, board: &Board, history: &History) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::Generate;
                    if let Some(m) = self.tt_move {
                        if board.is_legal(m) && (!self.qsearch || is_noisy(board, m)) {
                            return Some(m);
                        }
                        self.tt_move = None;
                    }
                }
                Stage::Generate => {
                    self.generate(board, history);
                    self.stage = Stage::GoodNoisy;
                }
                Stage::GoodNoisy => {
                    if let Some(m) = self.best_of(Kind::GoodNoisy) {
                        return Some(m);
                    }
                    self.stage = if self.qsearch { Stage::BadNoisy } else { Stage::Killers };
                }
                Stage::Killers => {
                    while self.killer_idx < 2 {
                        let k = self.killers[self.killer_idx];
                        self.killer_idx += 1;
                        if let Some(k) = k
                            && let Some(e) = self.list[..self.len]
                                .iter_mut()
                                .find(|e| e.mv == k && e.kind == Kind::Quiet)
                        {
                            e.kind = Kind::Taken;
                            return Some(k);
                        }
                    }
                    self.stage = Stage::Quiets;
                }
                Stage::Quiets => {
                    if let Some(m) = self.best_of(Kind::Quiet) {
                        return Some(m);
                    }
                    self.stage = Stage::BadNoisy;
                }
                Stage::BadNoisy => {
                    if let Some(m) = self.best_of(Kind::BadNoisy) {
                        return Some(m);
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
            }
        }
    }
}
