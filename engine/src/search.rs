//! The tree search: iterative deepening with aspiration windows around a
//! fail-soft principal variation search; transposition table; quiescence
//! search over captures and promotions with SEE pruning; Multi-ProbCut (see
//! `mpc`), placed before null-move pruning (adaptive R, off without pieces);
//! reverse futility pruning; late move reductions; check extension; killer and
//! history ordering; repetition, fifty-move and mate-distance handling.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cozy_chess::{Board, Color, Move, Piece};

use crate::eval::evaluate;
use crate::history::History;
use crate::movepick::{MovePicker, is_noisy};
use crate::mpc::{MpcParam, MpcTable, Stage, alpha_bound, beta_bound, bound_usable, stage_of};
use crate::mpc_diag;
use crate::mpc_variant::{MpcSide, MpcVariant, MpcVerify};
use crate::options::{EngineOptions, Tunables};
use crate::position::{Position, format_move};
use crate::score::{DRAW, INF, MATE, MAX_PLY, is_mate, uci_score};
use crate::see::see;
use crate::timeman::{Limits, TimeManager};
use crate::tt::{Bound, TranspositionTable, TtHit};

/// Multi-ProbCut counters for one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MpcStats {
    /// Shallow searches started (each side of each try counts once).
    pub tries: u64,
    /// Cuts on the beta side (node returned beta).
    pub beta_cuts: u64,
    /// Cuts on the alpha side (node returned alpha).
    pub alpha_cuts: u64,
    /// Nodes spent inside shallow searches.
    pub shallow_nodes: u64,
    /// Tries at PV nodes (`MPCPV=false` makes none).
    pub pv_tries: u64,
    /// Tries made inside another try's shallow search (`MPCNested`).
    pub nested_tries: u64,
    /// Sides not tried because the evaluation was far from the bound (`MPCEvalGate`).
    pub gated: u64,
    /// Sides whose quiescence check disagreed, so no shallow search ran (`MPCVerify`).
    pub verify_rejects: u64,
    /// Cuts at PV nodes (where neither null move nor reverse futility is ever tried).
    pub pv_cuts: u64,
    /// Fail-high cuts at nodes where null move would have been tried next (its static
    /// conditions hold; MPC before null move only: after it, null move was tried and failed).
    pub null_cond: u64,
    /// Fail-high cuts at nodes where reverse futility's condition holds. Reverse futility is
    /// tested before MPC, so this stays 0; it is counted to show it.
    pub rfp_cond: u64,
    /// Fail-low cuts at non-PV nodes whose static evaluation is below alpha by reverse
    /// futility's margin (the mirror of its rule; the engine has no such pruning, so this only
    /// says how many fail-low cuts a static rule could have found).
    pub razor_cond: u64,
    /// `MPCDiag`: null-move searches run in the sandbox at `null_cond` cuts.
    pub null_checks: u64,
    /// `MPCDiag`: those that failed high (null move would have cut the node anyway).
    pub null_would_cut: u64,
    /// `MPCDiag`: nodes of those null-move searches (not in the search's node count).
    pub null_check_nodes: u64,
    /// `MPCVerifySample`: fail-high cuts re-searched at full depth in the sandbox.
    pub verified_beta: u64,
    /// ... of which the full-depth search returned below beta (the cut was wrong).
    pub wrong_beta: u64,
    /// `MPCVerifySample`: fail-low cuts re-searched at full depth.
    pub verified_alpha: u64,
    /// ... of which the full-depth search returned above alpha.
    pub wrong_alpha: u64,
    /// Nodes of the verification searches (not in the search's node count).
    pub verify_nodes: u64,
    /// Sum over verified cuts of the model's probability that the cut is wrong, given the
    /// shallow search's (fail-soft) value, in millionths (an upper bound: that value is itself
    /// a bound on the shallow value).
    pub model_wrong_ppm: u64,
    /// Sum over verified cuts of `Phi(-t)`, the model's wrong-cut probability at the bound
    /// itself, in millionths.
    pub bound_wrong_ppm: u64,
}

impl MpcStats {
    pub fn cuts(&self) -> u64 {
        self.beta_cuts + self.alpha_cuts
    }

    /// The `info string mpc ...` line reported before `bestmove`.
    pub fn info_line(&self) -> String {
        format!(
            "info string mpc tries {} cuts {} beta_cuts {} alpha_cuts {} shallow_nodes {} \
             pv_tries {} nested_tries {} gated {} verify_rejects {} {}",
            self.tries,
            self.cuts(),
            self.beta_cuts,
            self.alpha_cuts,
            self.shallow_nodes,
            self.pv_tries,
            self.nested_tries,
            self.gated,
            self.verify_rejects,
            self.overlap_fields()
        )
    }

    /// The overlap and diagnostic counters as `name value` pairs (the tail of
    /// [`MpcStats::info_line`], and a line of `bench`).
    pub fn overlap_fields(&self) -> String {
        format!(
            "pv_cuts {} null_cond {} rfp_cond {} razor_cond {} null_checks {} null_would_cut {} \
             null_check_nodes {} verified_beta {} wrong_beta {} verified_alpha {} wrong_alpha {} \
             verify_nodes {} model_wrong_ppm {} bound_wrong_ppm {}",
            self.pv_cuts,
            self.null_cond,
            self.rfp_cond,
            self.razor_cond,
            self.null_checks,
            self.null_would_cut,
            self.null_check_nodes,
            self.verified_beta,
            self.wrong_beta,
            self.verified_alpha,
            self.wrong_alpha,
            self.verify_nodes,
            self.model_wrong_ppm,
            self.bound_wrong_ppm
        )
    }

    /// Adds `o`'s counts to these (bench totals).
    pub fn add(&mut self, o: &MpcStats) {
        let MpcStats {
            tries,
            beta_cuts,
            alpha_cuts,
            shallow_nodes,
            pv_tries,
            nested_tries,
            gated,
            verify_rejects,
            pv_cuts,
            null_cond,
            rfp_cond,
            razor_cond,
            null_checks,
            null_would_cut,
            null_check_nodes,
            verified_beta,
            wrong_beta,
            verified_alpha,
            wrong_alpha,
            verify_nodes,
            model_wrong_ppm,
            bound_wrong_ppm,
        } = *o;
        self.tries += tries;
        self.beta_cuts += beta_cuts;
        self.alpha_cuts += alpha_cuts;
        self.shallow_nodes += shallow_nodes;
        self.pv_tries += pv_tries;
        self.nested_tries += nested_tries;
        self.gated += gated;
        self.verify_rejects += verify_rejects;
        self.pv_cuts += pv_cuts;
        self.null_cond += null_cond;
        self.rfp_cond += rfp_cond;
        self.razor_cond += razor_cond;
        self.null_checks += null_checks;
        self.null_would_cut += null_would_cut;
        self.null_check_nodes += null_check_nodes;
        self.verified_beta += verified_beta;
        self.wrong_beta += wrong_beta;
        self.verified_alpha += verified_alpha;
        self.wrong_alpha += wrong_alpha;
        self.verify_nodes += verify_nodes;
        self.model_wrong_ppm += model_wrong_ppm;
        self.bound_wrong_ppm += bound_wrong_ppm;
    }
}

/// A node as Multi-ProbCut sees it.
struct MpcNode {
    depth: i32,
    alpha: i32,
    beta: i32,
    ply: usize,
    /// The node's own null-move flag, passed to its shallow searches.
    null_allowed: bool,
    pv: bool,
    static_eval: i32,
}

/// Outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best_move: Option<Move>,
    pub score: i32,
    /// Deepest fully completed iteration.
    pub depth: i32,
    pub seldepth: usize,
    pub nodes: u64,
    pub pv: Vec<Move>,
    pub mpc: MpcStats,
    pub elapsed_ms: u64,
}

/// Search settings taken from the options at the start of a `go`.
#[derive(Clone, Debug)]
struct Settings {
    mpc: bool,
    t_mid: f64,
    t_end: f64,
    table: MpcTable,
    mpcv: MpcVariant,
    null_move: bool,
    lmr: bool,
    /// `MPCDiag`: run the null-move search at MPC fail-high cuts, in the sandbox.
    diag_null: bool,
    /// `MPCVerifySample`: percent of MPC cuts verified at full depth, in the sandbox.
    verify_pct: u32,
    tun: Tunables,
    chess960: bool,
    overhead_ms: u64,
}

pub struct Searcher {
    pub tt: TranspositionTable,
    pub history: History,
    stop: Arc<AtomicBool>,
    settings: Settings,
    lmr_table: Box<[[i32; 64]; 64]>,
    nodes: u64,
    seldepth: usize,
    node_limit: u64,
    timer: Option<TimeManager>,
    /// Time limits apply (false while depth 1 runs, so a move always exists).
    time_abort_allowed: bool,
    aborted: bool,
    /// > 0 while inside an MPC shallow search (no MPC there unless `MPCNested`).
    mpc_nesting: u32,
    stats: MpcStats,
    /// `null_at[p]`: the node at ply `p` is searching its null-move child.
    null_at: [bool; MAX_PLY + 1],
    /// Null moves made by a null move's own child (must stay 0).
    double_nulls: u64,
    hashes: Vec<u64>,
    pv: Box<[[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    /// Best root move of the current iteration, once one raised alpha.
    root_best: Option<(Move, i32)>,
    pub verbose: bool,
    /// The sandbox of the MPC diagnostics (`MPCDiag`, `MPCVerifySample`): a searcher with MPC
    /// off, its own counters, node count and table; `None` while the diagnostics are off.
    sandbox: Option<Box<Searcher>>,
    /// In the sandbox, during a diagnostic search: the main search's table, read (never
    /// written) after the sandbox's own.
    lent_tt: Option<TranspositionTable>,
}

fn settings_from(o: &EngineOptions) -> Settings {
    Settings {
        mpc: o.mpc,
        t_mid: o.t_mid,
        t_end: o.t_end,
        table: o.active_table(),
        mpcv: o.mpc_variant,
        null_move: o.null_move,
        lmr: o.lmr,
        diag_null: o.mpc_diag,
        verify_pct: o.mpc_verify_sample,
        tun: o.tunables.clone(),
        chess960: o.chess960,
        overhead_ms: o.move_overhead_ms,
    }
}

fn build_lmr(t: &Tunables) -> Box<[[i32; 64]; 64]> {
    let mut table = Box::new([[0i32; 64]; 64]);
    for (d, row) in table.iter_mut().enumerate().skip(1) {
        for (m, r) in row.iter_mut().enumerate().skip(1) {
            let v = t.lmr_base as f64 / 100.0
                + (d as f64).ln() * (m as f64).ln() / (t.lmr_div as f64 / 100.0);
            *r = v.max(0.0) as i32;
        }
    }
    table
}

/// Whether the side to move (in check or not, as given) is checkmated.
fn is_checkmate(board: &Board, in_check: bool) -> bool {
    in_check && !board.generate_moves(|m| !m.is_empty())
}

fn has_pieces(board: &Board, color: Color) -> bool {
    let minor_major = board.pieces(Piece::Knight)
        | board.pieces(Piece::Bishop)
        | board.pieces(Piece::Rook)
        | board.pieces(Piece::Queen);
    !(minor_major & board.colors(color)).is_empty()
}

impl Searcher {
    pub fn new(opts: &EngineOptions, stop: Arc<AtomicBool>) -> Self {
        let settings = settings_from(opts);
        let mut s = Self {
            tt: TranspositionTable::new(opts.hash_mb),
            history: History::default(),
            stop,
            lmr_table: build_lmr(&settings.tun),
            settings,
            nodes: 0,
            seldepth: 0,
            node_limit: u64::MAX,
            timer: None,
            time_abort_allowed: false,
            aborted: false,
            mpc_nesting: 0,
            stats: MpcStats::default(),
            null_at: [false; MAX_PLY + 1],
            double_nulls: 0,
            hashes: Vec::new(),
            pv: Box::new([[None; MAX_PLY + 1]; MAX_PLY + 1]),
            pv_len: [0; MAX_PLY + 1],
            root_best: None,
            verbose: false,
            sandbox: None,
            lent_tt: None,
        };
        s.configure_sandbox(opts);
        s
    }

    /// Creates or drops the diagnostics' sandbox as the options ask.
    fn configure_sandbox(&mut self, opts: &EngineOptions) {
        if !(opts.mpc_diag || opts.mpc_verify_sample > 0) {
            self.sandbox = None;
            return;
        }
        let mut o = opts.clone();
        o.mpc = false;
        o.mpc_diag = false;
        o.mpc_verify_sample = 0;
        match &mut self.sandbox {
            Some(sb) => sb.configure(&o),
            None => self.sandbox = Some(Box::new(Searcher::new(&o, self.stop.clone()))),
        }
    }

    /// Forget everything learned (new game).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.clear();
        if let Some(sb) = &mut self.sandbox {
            sb.clear();
        }
    }

    /// Takes the option values for the next searches.
    pub fn configure(&mut self, opts: &EngineOptions) {
        let s = settings_from(opts);
        if s.tun != self.settings.tun {
            self.lmr_table = build_lmr(&s.tun);
        }
        self.settings = s;
        self.configure_sandbox(opts);
    }

    /// A TT probe; in the sandbox, the main search's lent table answers what its own does not.
    fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        self.tt.probe(key, ply).or_else(|| self.lent_tt.as_ref().and_then(|t| t.probe(key, ply)))
    }

    fn check_limits(&mut self) {
        if self.nodes >= self.node_limit {
            self.aborted = true;
        }
        if self.nodes & 511 == 0 {
            if self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
            if self.time_abort_allowed && self.timer.as_ref().is_some_and(|t| t.hard_exceeded()) {
                self.aborted = true;
            }
        }
    }

    /// Null moves made directly below another null move in the last search (the engine's rule
    /// is never two in a row, also through MPC's shallow searches), for tests.
    pub fn double_null_moves(&self) -> u64 {
        self.double_nulls
    }

    fn is_repetition(&self, board: &Board) -> bool {
        let key = board.hash();
        let n = board.halfmove_clock() as usize;
        let len = self.hashes.len();
        let mut i = 2;
        while i <= n && i <= len {
            if self.hashes[len - i] == key {
                return true;
            }
            i += 2;
        }
        false
    }

    /// Runs a search on `pos` within `limits`.
    pub fn search(&mut self, pos: &Position, limits: &Limits) -> SearchResult {
        self.tt.new_search();
        self.history.clear_killers();
        self.nodes = 0;
        self.seldepth = 0;
        self.stats = MpcStats::default();
        self.aborted = false;
        self.mpc_nesting = 0;
        self.null_at = [false; MAX_PLY + 1];
        self.double_nulls = 0;
        self.node_limit = limits.nodes.unwrap_or(u64::MAX).max(1);
        if let Some(sb) = &mut self.sandbox {
            sb.tt.new_search();
            sb.history.clear_killers();
        }
        self.timer = Some(TimeManager::new(limits, self.settings.overhead_ms));
        self.hashes = pos.history.clone();
        let board = &pos.board;
        let max_depth = limits.depth.unwrap_or(MAX_PLY as i32 - 1).clamp(1, MAX_PLY as i32 - 1);

        let mut fallback = None;
        board.generate_moves(|m| {
            fallback = m.into_iter().next();
            fallback.is_some()
        });
        let mut result = SearchResult {
            best_move: fallback,
            score: 0,
            depth: 0,
            seldepth: 0,
            nodes: 0,
            pv: fallback.into_iter().collect(),
            mpc: MpcStats::default(),
            elapsed_ms: 0,
        };
        if fallback.is_none() {
            return result;
        }
        let mut prev_score = 0;
        for depth in 1..=max_depth {
            self.time_abort_allowed = depth > 1;
            self.root_best = None;
            let score = self.aspiration(board, depth, prev_score);
            if self.aborted {
                // Keep a partial iteration's best move only if it is at least
                // as good as the previous iteration's choice was scored.
                if let Some((mv, s)) = self.root_best
                    && (Some(mv) == result.best_move || s > prev_score)
                {
                    result.best_move = Some(mv);
                    result.pv = vec![mv];
                }
                break;
            }
            prev_score = score;
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]].iter().flatten().copied().collect();
            if let Some(&first) = pv.first() {
                result.best_move = Some(first);
                result.pv = pv;
            }
            result.score = score;
            result.depth = depth;
            if self.verbose {
                self.print_info(board, &result);
            }
            if self.timer.as_ref().is_some_and(|t| t.soft_exceeded()) && !limits.infinite {
                break;
            }
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            // A mate found well within the horizon will not change.
            if is_mate(score)
                && depth > 2 * (MATE - score.abs()) + 4
                && limits.depth.is_none()
                && limits.nodes.is_none()
                && !limits.infinite
            {
                break;
            }
        }
        result.nodes = self.nodes;
        result.seldepth = self.seldepth;
        result.mpc = self.stats;
        result.elapsed_ms = self.timer.as_ref().map_or(0, |t| t.elapsed().as_millis() as u64);
        result
    }

    fn print_info(&self, board: &Board, r: &SearchResult) {
        let ms = self.timer.as_ref().map_or(0, |t| t.elapsed().as_millis() as u64);
        let nps = self.nodes * 1000 / ms.max(1);
        let mut b = board.clone();
        let mut pv = String::new();
        for &m in &r.pv {
            if !b.is_legal(m) {
                break;
            }
            pv.push(' ');
            pv.push_str(&format_move(&b, m, self.settings.chess960));
            b.play_unchecked(m);
        }
        println!(
            "info depth {} seldepth {} score {} nodes {} nps {} time {} hashfull {} pv{}",
            r.depth,
            self.seldepth.max(r.depth as usize),
            uci_score(r.score),
            self.nodes,
            nps,
            ms,
            self.tt.hashfull(),
            pv
        );
    }

    fn aspiration(&mut self, board: &Board, depth: i32, prev: i32) -> i32 {
        let mut delta = self.settings.tun.asp_window;
        let (mut alpha, mut beta) = if depth >= 5 && !is_mate(prev) {
            ((prev - delta).max(-INF), (prev + delta).min(INF))
        } else {
            (-INF, INF)
        };
        loop {
            let score = self.negamax(board, depth, alpha, beta, 0, true);
            if self.aborted {
                return score;
            }
            if score <= alpha && alpha > -INF {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INF);
            } else if score >= beta && beta < INF {
                beta = (score + delta).min(INF);
            } else {
                return score;
            }
            delta += delta / 2 + 10;
            if delta > 1000 {
                alpha = -INF;
                beta = INF;
            }
        }
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        self.pv[ply][ply] = Some(mv);
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    /// Multi-ProbCut at a node, if the options allow it there; returns the value to return from
    /// the node on a cut. `hit` is the node's TT entry, `static_eval` its evaluation.
    fn try_mpc(
        &mut self,
        board: &Board,
        n: &MpcNode,
        hit: Option<TtHit>,
        static_eval: i32,
    ) -> Option<i32> {
        let var = self.settings.mpcv;
        if !self.settings.mpc
            || self.mpc_nesting > var.nested
            || is_mate(n.alpha)
            || is_mate(n.beta)
            || (n.pv && !var.pv)
            || n.depth < var.min_depth
        {
            return None;
        }
        // The estimate for the eval gate: the TT score where its bound makes it nearer the truth.
        let estimate = match hit {
            Some(h)
                if !is_mate(h.score)
                    && match h.bound {
                        Bound::Exact => true,
                        Bound::Lower => h.score > static_eval,
                        Bound::Upper => h.score < static_eval,
                    } =>
            {
                h.score
            }
            _ => static_eval,
        };
        let v = self.probcut(board, n, estimate);
        self.pv_len[n.ply] = n.ply;
        v
    }

    /// Multi-ProbCut test at a node of remaining depth `n.depth` (seed 000, Figure 3, with the
    /// variant options); returns the value to return from the node on a cut.
    fn probcut(&mut self, board: &Board, n: &MpcNode, estimate: i32) -> Option<i32> {
        let var = self.settings.mpcv;
        let stage = stage_of(board);
        let t = match stage {
            Stage::Middlegame => self.settings.t_mid,
            Stage::Endgame => self.settings.t_end,
        };
        let tries: Vec<_> = self.settings.table.tries(stage, n.depth).collect();
        for p in tries {
            if p.shallow >= n.depth || p.shallow < 0 {
                continue;
            }
            let bound = beta_bound(&p, t, n.beta);
            if bound_usable(bound) {
                if !var.gate_beta(estimate, bound) {
                    self.stats.gated += 1;
                } else {
                    let cut = self.mpc_side(board, &p, bound, n, true);
                    if self.aborted {
                        return Some(0);
                    }
                    if let Some(v) = cut {
                        self.on_cut(board, n, &p, t, v, true);
                        self.stats.beta_cuts += 1;
                        return Some(n.beta);
                    }
                }
            }
            if var.side == MpcSide::Beta {
                continue;
            }
            let bound = alpha_bound(&p, t, n.alpha);
            if bound_usable(bound) {
                if !var.gate_alpha(estimate, bound) {
                    self.stats.gated += 1;
                } else {
                    let cut = self.mpc_side(board, &p, bound, n, false);
                    if self.aborted {
                        return Some(0);
                    }
                    if let Some(v) = cut {
                        self.on_cut(board, n, &p, t, v, false);
                        self.stats.alpha_cuts += 1;
                        return Some(n.alpha);
                    }
                }
            }
        }
        None
    }

    /// Counts one shallow search started at node `n`.
    fn count_try(&mut self, n: &MpcNode) {
        self.stats.tries += 1;
        self.stats.pv_tries += n.pv as u64;
        self.stats.nested_tries += (self.mpc_nesting > 1) as u64;
    }

    /// One side of one try: the shallow search's (fail-soft) value when it (after the
    /// verification the options ask for) passes `bound`, upwards (`beta_side`) or downwards;
    /// `None` when it does not. The shallow searches keep the node's own null-move flag.
    fn mpc_side(
        &mut self,
        board: &Board,
        p: &MpcParam,
        bound: i32,
        n: &MpcNode,
        beta_side: bool,
    ) -> Option<i32> {
        let verify = self.settings.mpcv.verify;
        let before = self.nodes;
        self.mpc_nesting += 1;
        let (lo, hi) = if beta_side { (bound - 1, bound) } else { (bound, bound + 1) };
        let passes = |v: i32| if beta_side { v >= bound } else { v <= bound };
        let cut = if beta_side && verify == MpcVerify::Captures {
            self.mpc_beta_captures(board, p.shallow, bound, n)
        } else if verify != MpcVerify::Off && !passes(self.qsearch(board, lo, hi, n.ply)) {
            self.stats.verify_rejects += 1;
            None
        } else {
            self.count_try(n);
            Some(self.negamax(board, p.shallow, lo, hi, n.ply, n.null_allowed))
                .filter(|&v| passes(v))
        };
        self.mpc_nesting -= 1;
        self.stats.shallow_nodes += self.nodes - before;
        cut.filter(|_| !self.aborted)
    }

    /// `MPCVerify=captures`, beta side: some capture or promotion with SEE >= 0 whose
    /// quiescence value and then `shallow - 1` search reach `bound` (Stockfish's ProbCut order);
    /// returns that value.
    fn mpc_beta_captures(
        &mut self,
        board: &Board,
        shallow: i32,
        bound: i32,
        n: &MpcNode,
    ) -> Option<i32> {
        let key = board.hash();
        let tt_move = self.probe(key, n.ply).and_then(|h| h.mv);
        let mut picker = MovePicker::new_qsearch(tt_move);
        let mut any = false;
        while let Some(mv) = picker.next(board, &self.history) {
            if mv.promotion.is_some_and(|p| p != Piece::Queen) || see(board, mv) < 0 {
                continue;
            }
            any = true;
            let mut child = board.clone();
            child.play_unchecked(mv);
            self.hashes.push(key);
            let mut v = -self.qsearch(&child, -bound, -bound + 1, n.ply + 1);
            if v >= bound && shallow > 1 {
                self.count_try(n);
                v = -self.negamax(&child, shallow - 1, -bound, -bound + 1, n.ply + 1, true);
            }
            self.hashes.pop();
            if self.aborted {
                return None;
            }
            if v >= bound {
                return Some(v);
            }
        }
        if !any {
            self.stats.verify_rejects += 1;
        }
        None
    }

    /// The null-move child of a node when null-move pruning would be tried there, with the
    /// reduced depth of its search (the one rule for the search and the MPC counters).
    fn null_move_child(
        &self,
        board: &Board,
        pv_node: bool,
        null_allowed: bool,
        depth: i32,
        static_eval: i32,
        beta: i32,
    ) -> Option<(Board, i32)> {
        if !(self.settings.null_move
            && !pv_node
            && null_allowed
            && depth >= 3
            && static_eval >= beta
            && !is_mate(beta)
            && has_pieces(board, board.side_to_move()))
        {
            return None;
        }
        let r = self.settings.tun.nmp_base + depth / self.settings.tun.nmp_depth_div.max(1);
        board.null_move().map(|child| (child, depth - 1 - r))
    }

    /// Counts an MPC cut at node `n` made by try `p` at threshold `t` with shallow value
    /// `shallow`: where other pruning would have cut it anyway (static conditions; the
    /// null-move search itself with `MPCDiag`) and, for a sample (`MPCVerifySample`), whether a
    /// full-depth search agrees. The diagnostic searches run in the sandbox, so the search's
    /// tree, node count and result stay what they are without them.
    fn on_cut(
        &mut self,
        board: &Board,
        n: &MpcNode,
        p: &MpcParam,
        t: f64,
        shallow: i32,
        beta_side: bool,
    ) {
        let (rfp_depth, rfp_margin) = (self.settings.tun.rfp_depth, self.settings.tun.rfp_margin);
        self.stats.pv_cuts += n.pv as u64;
        if beta_side {
            let rfp = !n.pv
                && n.depth <= rfp_depth
                && !is_mate(n.beta)
                && n.static_eval - rfp_margin * n.depth >= n.beta;
            self.stats.rfp_cond += rfp as u64;
            let null = if self.settings.mpcv.after_null {
                None
            } else {
                self.null_move_child(board, n.pv, n.null_allowed, n.depth, n.static_eval, n.beta)
            };
            if let Some((child, null_depth)) = null {
                self.stats.null_cond += 1;
                if self.settings.diag_null {
                    let (beta, ply, key) = (n.beta, n.ply, board.hash());
                    let r = self.in_sandbox(|sb| {
                        sb.hashes.push(key);
                        -sb.negamax(&child, null_depth, -beta, -beta + 1, ply + 1, false)
                    });
                    if let Some((v, nodes)) = r {
                        self.stats.null_checks += 1;
                        self.stats.null_would_cut += (v >= beta) as u64;
                        self.stats.null_check_nodes += nodes;
                    }
                }
            }
        } else {
            let razor =
                !n.pv && !is_mate(n.alpha) && n.static_eval + rfp_margin * n.depth <= n.alpha;
            self.stats.razor_cond += razor as u64;
        }
        let pct = self.settings.verify_pct;
        if pct > 0 && mpc_diag::sampled(board.hash(), self.stats.cuts(), pct) {
            let (lo, hi) = if beta_side { (n.beta - 1, n.beta) } else { (n.alpha, n.alpha + 1) };
            let (depth, ply, null_allowed) = (n.depth, n.ply, n.null_allowed);
            let r = self.in_sandbox(|sb| sb.negamax(board, depth, lo, hi, ply, null_allowed));
            if let Some((v, nodes)) = r {
                let edge = if beta_side { n.beta } else { n.alpha };
                let wrong = if beta_side { v < edge } else { v > edge };
                if beta_side {
                    self.stats.verified_beta += 1;
                    self.stats.wrong_beta += wrong as u64;
                } else {
                    self.stats.verified_alpha += 1;
                    self.stats.wrong_alpha += wrong as u64;
                }
                self.stats.verify_nodes += nodes;
                let model = mpc_diag::model_wrong_prob(p, shallow, edge, beta_side);
                self.stats.model_wrong_ppm += mpc_diag::ppm(model);
                self.stats.bound_wrong_ppm += mpc_diag::ppm(mpc_diag::phi(-t));
            }
        }
    }

    /// Runs `f` in the diagnostics' sandbox: the sandbox gets this search's repetition history
    /// and move-ordering history (copies) and reads this search's table after its own (lent,
    /// never written). Returns `f`'s value and the sandbox's nodes; `None` without a sandbox or
    /// when the sandbox's search was stopped. Nothing of this searcher changes.
    fn in_sandbox(&mut self, f: impl FnOnce(&mut Searcher) -> i32) -> Option<(i32, u64)> {
        let mut sb = self.sandbox.take()?;
        sb.lent_tt = Some(std::mem::replace(&mut self.tt, TranspositionTable::placeholder()));
        sb.history.clone_from(&self.history);
        sb.hashes.clone_from(&self.hashes);
        sb.nodes = 0;
        sb.aborted = false;
        sb.mpc_nesting = 0;
        sb.node_limit = u64::MAX;
        sb.timer = None;
        sb.time_abort_allowed = false;
        let v = f(&mut sb);
        if let Some(tt) = sb.lent_tt.take() {
            self.tt = tt;
        }
        let out = (!sb.aborted).then_some((v, sb.nodes));
        self.sandbox = Some(sb);
        out
    }

    // One function on purpose: alpha-beta reads as one algorithm (the field's habit).
    fn negamax(
        &mut self,
        board: &Board,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        null_allowed: bool,
    ) -> i32 {
        self.pv_len[ply] = ply;
        let in_check = !board.checkers().is_empty();
        if in_check && ply < MAX_PLY / 2 {
            depth += 1;
        }
        if depth <= 0 {
            return self.qsearch(board, alpha, beta, ply);
        }
        self.nodes += 1;
        self.check_limits();
        if self.aborted {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let pv_node = beta - alpha > 1;
        let root = ply == 0;

        if !root {
            // A mate delivered on the 100th half-move is a mate, not a draw.
            let fifty = board.halfmove_clock() >= 100 && !is_checkmate(board, in_check);
            if fifty || self.is_repetition(board) {
                return DRAW;
            }
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { DRAW } else { evaluate(board) };
            }
        }

        let key = board.hash();
        let hit = self.probe(key, ply);
        let tt_move = hit.and_then(|h| h.mv);
        if let Some(h) = hit
            && !pv_node
            && !root
            && h.depth >= depth
        {
            let cut = match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            };
            if cut {
                return h.score;
            }
        }

        let static_eval =
            if in_check { -INF } else { hit.map_or_else(|| evaluate(board), |h| h.eval) };

        if !in_check && !root {
            // Reverse futility pruning.
            let (rfp_depth, rfp_margin) =
                (self.settings.tun.rfp_depth, self.settings.tun.rfp_margin);
            if !pv_node
                && depth <= rfp_depth
                && !is_mate(beta)
                && static_eval - rfp_margin * depth >= beta
            {
                return static_eval;
            }

            // Multi-ProbCut, before null move (after it with `MPCAfterNull`).
            let mpc_node =
                MpcNode { depth, alpha, beta, ply, null_allowed, pv: pv_node, static_eval };
            if !self.settings.mpcv.after_null
                && let Some(v) = self.try_mpc(board, &mpc_node, hit, static_eval)
            {
                return v;
            }

            // Null move with adaptive reduction.
            if let Some((child, null_depth)) =
                self.null_move_child(board, pv_node, null_allowed, depth, static_eval, beta)
            {
                self.double_nulls += (ply > 0 && self.null_at[ply - 1]) as u64;
                self.null_at[ply] = true;
                self.hashes.push(key);
                let v = -self.negamax(&child, null_depth, -beta, -beta + 1, ply + 1, false);
                self.hashes.pop();
                self.null_at[ply] = false;
                if self.aborted {
                    return 0;
                }
                if v >= beta {
                    return if is_mate(v) { beta } else { v };
                }
            }

            if self.settings.mpcv.after_null
                && let Some(v) = self.try_mpc(board, &mpc_node, hit, static_eval)
            {
                return v;
            }
        }

        let side = board.side_to_move();
        let killers = self.history.killers[ply];
        let mut picker = MovePicker::new(tt_move, killers);
        let mut best = -INF;
        let mut best_move = None;
        let mut moves_searched = 0usize;
        let mut quiets_tried: Vec<Move> = Vec::new();
        let original_alpha = alpha;

        while let Some(mv) = picker.next(board, &self.history) {
            let quiet = !is_noisy(board, mv);
            let mut child = board.clone();
            child.play_unchecked(mv);
            let gives_check = !child.checkers().is_empty();
            let new_depth = depth - 1;
            self.hashes.push(key);
            let score = if moves_searched == 0 {
                -self.negamax(&child, new_depth, -beta, -alpha, ply + 1, true)
            } else {
                let mut r = 0;
                if self.settings.lmr
                    && depth >= 3
                    && moves_searched >= if pv_node { 4 } else { 2 }
                    && quiet
                    && !in_check
                    && !gives_check
                {
                    r = self.lmr_table[depth.min(63) as usize][moves_searched.min(63)];
                    if pv_node {
                        r -= 1;
                    }
                    if killers.contains(&Some(mv)) {
                        r -= 1;
                    }
                    r = r.clamp(0, new_depth - 1);
                }
                let mut s = -self.negamax(&child, new_depth - r, -alpha - 1, -alpha, ply + 1, true);
                if s > alpha && r > 0 {
                    s = -self.negamax(&child, new_depth, -alpha - 1, -alpha, ply + 1, true);
                }
                if s > alpha && s < beta {
                    s = -self.negamax(&child, new_depth, -beta, -alpha, ply + 1, true);
                }
                s
            };
            self.hashes.pop();
            if self.aborted {
                return 0;
            }
            moves_searched += 1;
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    self.update_pv(ply, mv);
                    if root {
                        self.root_best = Some((mv, score));
                    }
                    if alpha >= beta {
                        if quiet {
                            self.history.on_cutoff(side, mv, &quiets_tried, depth, ply);
                        }
                        break;
                    }
                }
            }
            if quiet {
                quiets_tried.push(mv);
            }
        }

        if moves_searched == 0 {
            return if in_check { -MATE + ply as i32 } else { DRAW };
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let eval_store = if in_check { 0 } else { static_eval };
        self.tt.store(key, best_move, best, eval_store, depth, bound, ply);
        best
    }

    fn qsearch(&mut self, board: &Board, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.nodes += 1;
        self.check_limits();
        if self.aborted {
            return 0;
        }
        self.pv_len[ply] = ply;
        self.seldepth = self.seldepth.max(ply);
        let in_check = !board.checkers().is_empty();
        if ply >= MAX_PLY - 1 {
            return if in_check { DRAW } else { evaluate(board) };
        }
        let key = board.hash();
        let hit = self.probe(key, ply);
        if let Some(h) = hit {
            let cut = match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            };
            if cut && beta - alpha == 1 {
                return h.score;
            }
        }
        let mut best;
        let stand_pat;
        if in_check {
            best = -INF;
            stand_pat = -INF;
        } else {
            stand_pat = hit.map_or_else(|| evaluate(board), |h| h.eval);
            if stand_pat >= beta {
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            best = stand_pat;
        }
        let tt_move = hit.and_then(|h| h.mv);
        let mut picker = if in_check {
            MovePicker::new(tt_move, [None; 2])
        } else {
            MovePicker::new_qsearch(tt_move)
        };
        let mut best_move = None;
        let mut any = false;
        while let Some(mv) = picker.next(board, &self.history) {
            any = true;
            if !in_check {
                if mv.promotion.is_some_and(|p| p != Piece::Queen) {
                    continue;
                }
                if see(board, mv) < 0 {
                    continue;
                }
            }
            let mut child = board.clone();
            child.play_unchecked(mv);
            let score = -self.qsearch(&child, -beta, -alpha, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(mv);
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        if in_check && !any {
            return -MATE + ply as i32;
        }
        let bound = if best >= beta { Bound::Lower } else { Bound::Upper };
        let eval_store = if in_check { 0 } else { stand_pat };
        self.tt.store(key, best_move, best, eval_store, 0, bound, ply);
        best
    }
}

/// Convenience: a fresh searcher's fixed-depth search of a FEN (tests, tools).
pub fn search_fen_depth(
    opts: &EngineOptions,
    fen: &str,
    depth: i32,
) -> Result<SearchResult, String> {
    let pos = Position::from_fen(fen)?;
    let mut s = Searcher::new(opts, Arc::new(AtomicBool::new(false)));
    Ok(s.search(&pos, &Limits { depth: Some(depth), ..Default::default() }))
}
