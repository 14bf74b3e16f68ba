//! The MPC counters and diagnostics: the overlap counters obey the
//! search's order of pruning, and the diagnostics (`MPCDiag`, `MPCVerifySample`) only count:
//! with them on, every search returns the same move, score, principal variation and node
//! count as with them off.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use engine::bench::{BENCH_FENS, run_bench};
use engine::mpc::{MpcParam, MpcTable, Stage};
use engine::options::EngineOptions;
use engine::position::Position;
use engine::search::{MpcStats, SearchResult, Searcher, search_fen_depth};
use engine::timeman::Limits;

/// A middlegame where the default MPC cuts on both sides at depth 9.
const MIDDLEGAME: &str = "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14";

fn opts(settings: &[(&str, &str)]) -> EngineOptions {
    let mut o = EngineOptions::default();
    for (k, v) in settings {
        o.set(k, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    o
}

fn with(
    base: &[(&'static str, &'static str)],
    more: &[(&'static str, &'static str)],
) -> EngineOptions {
    let mut all = base.to_vec();
    all.extend_from_slice(more);
    opts(&all)
}

const DIAG: &[(&str, &str)] = &[("MPCDiag", "true"), ("MPCVerifySample", "100")];

/// The counters that describe the search itself (not the diagnostics).
fn search_counters(m: &MpcStats) -> [u64; 12] {
    [
        m.tries,
        m.beta_cuts,
        m.alpha_cuts,
        m.shallow_nodes,
        m.pv_tries,
        m.nested_tries,
        m.gated,
        m.verify_rejects,
        m.pv_cuts,
        m.null_cond,
        m.rfp_cond,
        m.razor_cond,
    ]
}

fn same_search(a: &SearchResult, b: &SearchResult, what: &str) {
    assert_eq!(
        (a.best_move, a.score, a.depth, a.nodes, &a.pv, a.seldepth),
        (b.best_move, b.score, b.depth, b.nodes, &b.pv, b.seldepth),
        "{what}"
    );
    assert_eq!(search_counters(&a.mpc), search_counters(&b.mpc), "{what}");
}

#[test]
fn diagnostics_do_not_change_the_search() {
    for variant in [
        &[][..],
        &[("MPCAfterNull", "true")][..],
        &[("MPCEvalGate", "0")][..],
        &[("MPCVerify", "captures"), ("MPCSide", "beta")][..],
    ] {
        for fen in [MIDDLEGAME, BENCH_FENS[7], BENCH_FENS[30]] {
            let what = format!("{variant:?} {fen}");
            let off = search_fen_depth(&with(variant, &[]), fen, 9).unwrap();
            let on = search_fen_depth(&with(variant, DIAG), fen, 9).unwrap();
            same_search(&off, &on, &what);
            let m = on.mpc;
            // Every cut verified, every null-move candidate searched; off, nothing is.
            assert_eq!(m.verified_beta + m.verified_alpha, m.cuts(), "{what}");
            assert_eq!(m.null_checks, m.null_cond, "{what}");
            assert!(m.verify_nodes > 0 || m.cuts() == 0, "{what}");
            let o = off.mpc;
            assert_eq!(
                o.null_checks + o.verified_beta + o.verified_alpha + o.verify_nodes,
                0,
                "{what}"
            );
        }
    }
}

#[test]
fn diagnostics_keep_the_table_and_histories_across_searches() {
    // Searches one after another on one searcher (as in a game: the table and the history are
    // kept), with node limits: the lent table must come back whole and untouched.
    let run = |o: &EngineOptions| {
        let mut s = Searcher::new(o, Arc::new(AtomicBool::new(false)));
        [BENCH_FENS[8], MIDDLEGAME, BENCH_FENS[12], MIDDLEGAME]
            .iter()
            .map(|f| {
                let pos = Position::from_fen(f).unwrap();
                s.search(&pos, &Limits { nodes: Some(60_000), ..Default::default() })
            })
            .collect::<Vec<_>>()
    };
    let off = run(&EngineOptions::default());
    let on = run(&opts(DIAG));
    for (i, (a, b)) in off.iter().zip(&on).enumerate() {
        same_search(a, b, &format!("search {i}"));
    }
    assert!(on.iter().map(|r| r.mpc.verify_nodes).sum::<u64>() > 0);
}

#[test]
fn bench_signature_is_the_same_with_diagnostics() {
    let off = run_bench(&EngineOptions::default(), 6, |_| {});
    let on = run_bench(&opts(DIAG), 6, |_| {});
    assert_eq!(off.nodes, on.nodes);
    assert_eq!(search_counters(&off.mpc), search_counters(&on.mpc));
    assert_eq!(on.mpc.verified_beta + on.mpc.verified_alpha, on.mpc.cuts());
}

#[test]
fn overlap_counters_follow_the_order_of_pruning() {
    let base = search_fen_depth(&opts(&[("MPCDiag", "true")]), MIDDLEGAME, 9).unwrap().mpc;
    assert!(base.beta_cuts > 0 && base.alpha_cuts > 0, "{base:?}");
    // Reverse futility is tested before MPC: it never holds at an MPC cut.
    assert_eq!(base.rfp_cond, 0, "{base:?}");
    // Null move's static conditions hold at some fail-high cuts; its search cuts at a part.
    assert!(base.null_cond > 0 && base.null_cond <= base.beta_cuts, "{base:?}");
    assert!(base.null_would_cut <= base.null_checks, "{base:?}");
    assert!(base.null_check_nodes > 0, "{base:?}");
    assert!(base.razor_cond <= base.alpha_cuts && base.pv_cuts <= base.cuts(), "{base:?}");
    // After null move, MPC only cuts where null move was not tried or did not cut.
    let after =
        search_fen_depth(&opts(&[("MPCAfterNull", "true"), ("MPCDiag", "true")]), MIDDLEGAME, 9)
            .unwrap()
            .mpc;
    assert!(after.beta_cuts > 0 && after.null_cond + after.null_checks == 0, "{after:?}");
    // Without null move there is nothing to overlap with.
    let nonull =
        search_fen_depth(&opts(&[("NullMove", "false"), ("MPCDiag", "true")]), MIDDLEGAME, 9)
            .unwrap()
            .mpc;
    assert!(nonull.beta_cuts > 0 && nonull.null_cond + nonull.null_checks == 0, "{nonull:?}");
    // At PV nodes only (MPCPV=true) none of null move's conditions can hold... and without
    // MPC, no counter moves.
    let off = search_fen_depth(
        &opts(&[("MPC", "false"), ("MPCDiag", "true"), ("MPCVerifySample", "100")]),
        MIDDLEGAME,
        9,
    )
    .unwrap()
    .mpc;
    assert_eq!(off, MpcStats::default());
}

#[test]
fn verification_finds_the_wrong_cuts_of_a_reckless_model() {
    // A model that trusts a 1-ply search at every height from 3 up and claims that the deep
    // value is the shallow one plus 200 cp, give or take 1 (a = 1, b = 200, sigma = 1): it cuts
    // on the beta side whenever the shallow value is within 200 cp below beta. Far more of its
    // cuts are wrong than of the fitted model's, and far more than it claims.
    let mut reckless = opts(&[("MPCVerifySample", "100")]);
    let mut t = MpcTable::empty(true);
    for stage in [Stage::Middlegame, Stage::Endgame] {
        for h in 3..=8 {
            t.add(stage, h, MpcParam { shallow: 1, a: 1.0, b: 200.0, sigma: 1.0 });
        }
    }
    reckless.mpc_table = t;
    let fitted = opts(&[("MPCVerifySample", "100")]);
    let (mut r, mut f) = (MpcStats::default(), MpcStats::default());
    for fen in [MIDDLEGAME, BENCH_FENS[9], BENCH_FENS[20]] {
        r.add(&search_fen_depth(&reckless, fen, 8).unwrap().mpc);
        f.add(&search_fen_depth(&fitted, fen, 8).unwrap().mpc);
    }
    let rate = |m: &MpcStats| {
        (m.wrong_beta + m.wrong_alpha) as f64 / (m.verified_beta + m.verified_alpha).max(1) as f64
    };
    assert!(r.cuts() > 100 && f.cuts() > 10, "{r:?} {f:?}");
    assert!(rate(&r) > 0.05 && rate(&r) > 3.0 * rate(&f), "{} {}: {r:?} {f:?}", rate(&r), rate(&f));
    // The model's predicted rate at the bound is Phi(-t) = Phi(-1) for every verified cut, and
    // at the shallow values no more than that; the reckless model claims less than it does.
    let verified = r.verified_beta + r.verified_alpha;
    assert_eq!(r.bound_wrong_ppm, 158_655 * verified);
    assert!(r.model_wrong_ppm <= r.bound_wrong_ppm);
    assert!((r.model_wrong_ppm as f64 / 1e6) < rate(&r) * verified as f64 / 2.0, "{r:?}");
}

#[test]
fn info_line_names_every_counter() {
    let m = MpcStats {
        null_cond: 3,
        null_would_cut: 2,
        verified_beta: 5,
        wrong_alpha: 1,
        ..Default::default()
    };
    let line = m.info_line();
    assert!(line.starts_with("info string mpc tries 0 cuts 0 "), "{line}");
    for field in [
        " pv_cuts 0 ",
        " null_cond 3 ",
        " rfp_cond 0 ",
        " razor_cond 0 ",
        " null_checks 0 ",
        " null_would_cut 2 ",
        " verified_beta 5 ",
        " wrong_alpha 1 ",
        " verify_nodes 0 ",
        " bound_wrong_ppm 0",
    ] {
        assert!(line.contains(field), "{line} lacks {field}");
    }
    let mut sum = m;
    sum.add(&m);
    assert_eq!((sum.null_cond, sum.wrong_alpha, sum.verified_beta), (6, 2, 10));
}
