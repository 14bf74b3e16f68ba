//! Multi-ProbCut variant options and the null-move rule through MPC:
//! each option changes fixed-depth results as it says, and with thresholds too large to cut
//! every variant searches exactly like MPC off.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use engine::bench::BENCH_FENS;
use engine::mpc::{MpcParam, MpcTable, Stage};
use engine::options::EngineOptions;
use engine::position::Position;
use engine::search::{SearchResult, Searcher, search_fen_depth};
use engine::timeman::Limits;

/// A middlegame where the default MPC tries and cuts on both sides at depth 9.
const MIDDLEGAME: &str = "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14";

fn opts(settings: &[(&str, &str)]) -> EngineOptions {
    let mut o = EngineOptions::default();
    for (k, v) in settings {
        o.set(k, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    o
}

fn search(fen: &str, depth: i32, o: &EngineOptions) -> SearchResult {
    search_fen_depth(o, fen, depth).unwrap()
}

/// Every variant option at a non-default value, one at a time.
const VARIANTS: &[(&str, &str)] = &[
    ("MPCSide", "beta"),
    ("MPCPV", "false"),
    ("MPCEvalGate", "0"),
    ("MPCVerify", "qsearch"),
    ("MPCVerify", "captures"),
    ("MPCNested", "2"),
    ("MPCMinDepth", "8"),
    ("MPCAfterNull", "true"),
];

#[test]
fn every_variant_with_unreachable_thresholds_equals_mpc_off() {
    let off = opts(&[("MPC", "false")]);
    for fen in [BENCH_FENS[0], BENCH_FENS[7], "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"] {
        let a = search(fen, 8, &off);
        for &(k, v) in VARIANTS {
            let b = search(fen, 8, &opts(&[(k, v), ("t_mid", "100"), ("t_end", "100")]));
            assert_eq!(
                (a.best_move, a.score, a.nodes),
                (b.best_move, b.score, b.nodes),
                "{k}={v} {fen}"
            );
            assert_eq!(b.mpc.tries + b.mpc.verify_rejects + b.mpc.gated, 0, "{k}={v} {fen}");
        }
    }
}

#[test]
fn variants_change_the_search_as_they_say() {
    let base = search(MIDDLEGAME, 9, &EngineOptions::default());
    let m = base.mpc;
    assert!(m.beta_cuts > 0 && m.alpha_cuts > 0 && m.pv_tries > 0, "{m:?}");
    assert_eq!((m.nested_tries, m.gated, m.verify_rejects), (0, 0, 0), "{m:?}");
    let run = |k: &str, v: &str| {
        let r = search(MIDDLEGAME, 9, &opts(&[(k, v)]));
        assert_ne!(r.nodes, base.nodes, "{k}={v} searched like the default");
        r.mpc
    };
    // Fail-high cuts only.
    let s = run("MPCSide", "beta");
    assert!(s.beta_cuts > 0 && s.alpha_cuts == 0, "{s:?}");
    // No tries at PV nodes.
    let s = run("MPCPV", "false");
    assert!(s.tries > 0 && s.pv_tries == 0, "{s:?}");
    // Sides far from the evaluation are skipped.
    let s = run("MPCEvalGate", "0");
    assert!(s.gated > 0 && s.cuts() > 0, "{s:?}");
    // Quiescence at the bound refuses some shallow searches.
    let s = run("MPCVerify", "qsearch");
    assert!(s.verify_rejects > 0 && s.cuts() > 0, "{s:?}");
    let s = run("MPCVerify", "captures");
    assert!(s.verify_rejects > 0 && s.tries > 0, "{s:?}");
    // MPC inside MPC's shallow searches. With the default pairs the deepest shallow search
    // (4) is below the lowest height that tries (6), so nesting cannot happen there (checked
    // last); a (7, 8) pair gives the shallow searches children of height 6.
    let mut deep = EngineOptions::default();
    for stage in [Stage::Middlegame, Stage::Endgame] {
        assert!(deep.mpc_table.add(stage, 8, MpcParam { shallow: 7, a: 1.0, b: 0.0, sigma: 60.0 }));
    }
    let flat = search(MIDDLEGAME, 9, &deep);
    assert_eq!(flat.mpc.nested_tries, 0, "{:?}", flat.mpc);
    deep.set("MPCNested", Some("1")).unwrap();
    let nested = search(MIDDLEGAME, 9, &deep);
    assert!(nested.mpc.nested_tries > 0, "{:?}", nested.mpc);
    assert_ne!(nested.nodes, flat.nodes);
    assert_eq!(search(MIDDLEGAME, 9, &opts(&[("MPCNested", "1")])).nodes, base.nodes);
    // After null move: fewer nodes reach the test.
    let s = run("MPCAfterNull", "true");
    assert!(s.tries < m.tries, "{s:?} vs {m:?}");
}

#[test]
fn min_depth_equals_the_table_without_the_lower_heights() {
    let full = MpcTable::default_multi();
    let mut upper = MpcTable::empty(false);
    for stage in [Stage::Middlegame, Stage::Endgame] {
        for h in 8..=full.max_height(stage) {
            for p in full.tries(stage, h as i32) {
                assert!(upper.add(stage, h, p));
            }
        }
    }
    let cut_table = EngineOptions { mpc_table: upper, ..Default::default() };
    let min8 = opts(&[("MPCMinDepth", "8")]);
    let default = EngineOptions::default();
    for fen in [MIDDLEGAME, BENCH_FENS[7], BENCH_FENS[40]] {
        let a = search(fen, 9, &cut_table);
        let b = search(fen, 9, &min8);
        assert_eq!((a.best_move, a.score, a.nodes, a.mpc), (b.best_move, b.score, b.nodes, b.mpc));
        assert!(b.mpc.tries < search(fen, 9, &default).mpc.tries, "{fen}");
    }
}

#[test]
fn no_two_null_moves_in_a_row_through_mpc() {
    // MPC's shallow searches at a null move's child must not null-move again. With
    // the default settings a null move's child has a remaining depth of 3 or less at depth 9;
    // a null-move reduction of 1 (NmpBase=1, NmpDepthDiv=20) and (3, 4), (3, 5) pairs put
    // shallow searches that could null-move at null children.
    let stop = Arc::new(AtomicBool::new(false));
    let mut low = MpcTable::default_multi();
    for stage in [Stage::Middlegame, Stage::Endgame] {
        for h in [4, 5] {
            assert!(low.add(stage, h, MpcParam { shallow: 3, a: 1.0, b: 0.0, sigma: 60.0 }));
        }
    }
    let mut total = 0;
    for variant in [&[][..], &[("MPCNested", "2")][..], &[("MPCAfterNull", "true")][..]] {
        let mut o = EngineOptions { mpc_table: low.clone(), ..opts(variant) };
        o.set("NmpBase", Some("1")).unwrap();
        o.set("NmpDepthDiv", Some("20")).unwrap();
        let mut s = Searcher::new(&o, stop.clone());
        for fen in &BENCH_FENS[7..12] {
            s.clear();
            let r = s.search(
                &Position::from_fen(fen).unwrap(),
                &Limits { depth: Some(9), ..Default::default() },
            );
            assert_eq!(s.double_null_moves(), 0, "{variant:?} {fen}");
            total += r.mpc.tries;
        }
    }
    assert!(total > 0);
}

#[test]
fn options_are_declared_for_uci() {
    let decl = EngineOptions::uci_declarations();
    for name in
        ["MPCSide", "MPCPV", "MPCEvalGate", "MPCVerify", "MPCNested", "MPCMinDepth", "MPCAfterNull"]
    {
        assert!(decl.iter().any(|l| l.starts_with(&format!("option name {name} type"))), "{name}");
    }
    let mut o = EngineOptions::default();
    assert!(o.set("MPCVerify", Some("nonsense")).is_err());
    assert_eq!(o.mpc_variant, Default::default());
}
