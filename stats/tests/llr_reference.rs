//! The generalized LLR against published fishtest values and an independent implementation.
//!
//! Independent values: a Python/mpmath script kept outside the repository, which solves the
//! same constrained maximum-likelihood problems in a different way: mpmath at 60 significant
//! digits, Anderson bracketing on the secular equation (logistic) and multidimensional Newton on
//! the full Lagrange system in (x, mu, sigma) (normalized), instead of this crate's safeguarded
//! Newton and fixed-point iteration in double precision. Measured largest difference: 2.2e-13
//! (747,500 pairs, logistic); the tests allow 1e-11. Fishtest's own stored value differs from
//! the 60-digit one by 3.5e-12 (its brentq tolerance), so that comparison allows 1e-9.

use stats::{Counts, EloModel, Penta, SprtSpec, Verdict, Wdl, llr, sprt};

fn check(counts: &[u64], elo0: f64, elo1: f64, model: EloModel, expected: f64, tol: f64) {
    let got = llr(counts, elo0, elo1, model).unwrap();
    // Shown with --nocapture: how far this crate is from the reference.
    println!(
        "{counts:?} {model} [{elo0}, {elo1}]: {got:.15} vs {expected:.15}, diff {:.1e}",
        (got - expected).abs()
    );
    assert!(
        (got - expected).abs() <= tol,
        "{counts:?} {model} [{elo0}, {elo1}]: got {got:.15}, expected {expected:.15}, diff {:.2e}",
        (got - expected).abs()
    );
}

/// A real fishtest run (id 6549951b136acbc573529528, "phRed8" by Vizvezdenec, STC 10+0.1,
/// SPRT nElo [0, 2]) whose stored state is reproduced verbatim as a fixture in vtjson's
/// `bench.py` (github.com/vdbergh/vtjson): pentanomial [369, 12695, 27124, 12664, 332],
/// `"llr": -2.936953911013966`, `"state": "rejected"` (the web page shows "LLR: -2.94
/// (-2.94,2.94) <0.00,2.00>").
#[test]
fn fishtest_run_6549951b() {
    let p = [369, 12695, 27124, 12664, 332];
    check(&p, 0.0, 2.0, EloModel::Normalized, -2.936953911013966, 1e-9);
    // The 60-digit value of the independent check.
    check(&p, 0.0, 2.0, EloModel::Normalized, -2.9369539110174645, 1e-11);
    let counts = Counts::Penta(Penta { ll: 369, ld: 12695, dd: 27124, wd: 12664, ww: 332 });
    let r = sprt(&counts, &SprtSpec::parse("elo0=0,elo1=2").unwrap()).unwrap();
    // Fishtest stopped this run with its overshoot correction; the plain Wald bound is
    // -2.9444, so without that correction the test would continue.
    assert_eq!(r.verdict, Verdict::Continue);
    assert!((r.lower_bound - -2.9444389791664403).abs() < 1e-15);
}

/// Stockfish commit messages quote fishtest's result lines, e.g. (Stockfish's contribution
/// guide's example of a functional change):
/// "LLR: 2.93 (-2.94,2.94) <0.00,2.00> Total: 151072 W: 39154 L: 38677 D: 73241
///  Ptnml(0-2): 372, 17511, 39320, 17934, 399" and, for the LTC,
/// "LLR: 2.96 (-2.94,2.94) <0.50,2.50> Total: 109866 W: 28697 L: 28240 D: 52929
///  Ptnml(0-2): 39, 11353, 31686, 11822, 33".
#[test]
fn stockfish_commit_message_examples() {
    let stc = llr(&[372, 17511, 39320, 17934, 399], 0.0, 2.0, EloModel::Normalized).unwrap();
    assert_eq!(format!("{stc:.2}"), "2.93");
    let ltc = llr(&[39, 11353, 31686, 11822, 33], 0.5, 2.5, EloModel::Normalized).unwrap();
    assert_eq!(format!("{ltc:.2}"), "2.96");
    // Independent 60-digit values.
    check(
        &[372, 17511, 39320, 17934, 399],
        0.0,
        2.0,
        EloModel::Normalized,
        2.9342412426344135,
        1e-11,
    );
    check(
        &[39, 11353, 31686, 11822, 33],
        0.5,
        2.5,
        EloModel::Normalized,
        2.9622268415590054,
        1e-11,
    );
}

/// Counts from fishtest's own `stat_util.py` self-test, with the independent values.
#[test]
fn fishtest_self_test_counts() {
    let penta = [10789, 19328, 33806, 19402, 10543];
    check(&penta, -3.0, 1.0, EloModel::Logistic, 2.131067811787861, 1e-11);
    check(&penta, -3.0, 1.0, EloModel::Normalized, 0.30086978548904675, 1e-11);
    let tri = [65804, 56553, 65388]; // L, D, W
    check(&tri, -3.0, 1.0, EloModel::Logistic, 2.0490426179767542, 1e-11);
    check(&tri, -3.0, 1.0, EloModel::Normalized, 0.4917117762927174, 1e-11);
    let ltc = [39, 2226, 31451, 2412, 40];
    check(&ltc, 0.2, 0.9, EloModel::Logistic, 2.1625425800472304, 1e-11);
    check(&ltc, 0.764, 3.439, EloModel::Normalized, 2.162940869583553, 1e-11);
    check(&[13624, 34333, 13543], 0.0, 5.0, EloModel::Logistic, -17.05192055520453, 1e-11);
}

/// A large realistic sample (747,500 pairs) and small ones with empty bins (regularized).
#[test]
fn large_and_sparse_samples() {
    let big = [1200, 160000, 420000, 165000, 1300];
    check(&big, 0.0, 2.0, EloModel::Normalized, 38.466301189838475, 1e-11);
    check(&big, 0.0, 2.0, EloModel::Logistic, 23.045211291354576, 1e-11);
    check(&[0, 5, 20, 7, 0], 0.0, 5.0, EloModel::Normalized, 0.05984837949101291, 1e-13);
    check(&[0, 5, 20, 7, 0], 0.0, 5.0, EloModel::Logistic, 0.11845432690534788, 1e-13);
    check(&[0, 1, 0], 0.0, 5.0, EloModel::Logistic, -0.011500106296101925, 1e-14);
    check(&[1, 0, 0], -10.0, 10.0, EloModel::Normalized, -0.05752784525416501, 1e-14);
    check(&[3, 0, 9], 0.0, 50.0, EloModel::Logistic, 0.7396862502609058, 1e-13);
    // Double-precision Brent (the 60-digit Newton is singular for this degenerate sample).
    check(&[0, 0, 1, 0, 0], 0.0, 2.0, EloModel::Normalized, -3.34559000476394e-05, 1e-15);
}

#[test]
fn edge_cases() {
    let spec = SprtSpec::parse("elo0=0,elo1=5,model=logistic").unwrap();
    // Zero games: LLR 0, continue.
    let r = sprt(&Counts::Wdl(Wdl::default()), &spec).unwrap();
    assert_eq!((r.llr, r.verdict), (0.0, Verdict::Continue));
    let r = sprt(&Counts::Penta(Penta::default()), &spec).unwrap();
    assert_eq!((r.llr, r.verdict), (0.0, Verdict::Continue));
    // One game, all draws, one zero bin: finite, small, continue.
    for c in [
        Wdl { wins: 1, draws: 0, losses: 0 },
        Wdl { wins: 0, draws: 0, losses: 1 },
        Wdl { wins: 0, draws: 1, losses: 0 },
        Wdl { wins: 2, draws: 3, losses: 0 },
    ] {
        for model in [EloModel::Logistic, EloModel::Normalized] {
            let spec = SprtSpec { model, ..spec };
            let r = sprt(&Counts::Wdl(c), &spec).unwrap();
            assert!(r.llr.is_finite(), "{c:?} {model}");
            assert_eq!(r.verdict, Verdict::Continue, "{c:?} {model}: {}", r.llr);
        }
    }
    // Many wins and nothing else: H1 quickly; many losses: H0.
    let r = sprt(&Counts::Wdl(Wdl { wins: 500, draws: 0, losses: 0 }), &spec).unwrap();
    assert_eq!(r.verdict, Verdict::H1);
    let r = sprt(&Counts::Wdl(Wdl { wins: 0, draws: 0, losses: 500 }), &spec).unwrap();
    assert_eq!(r.verdict, Verdict::H0);
    // All draws: a score of exactly 1/2 with (almost) no variance is strong evidence for
    // elo0 = 0 in both models; the regularized empty bins keep the LLR finite.
    for model in [EloModel::Logistic, EloModel::Normalized] {
        let spec = SprtSpec { model, ..spec };
        let r = sprt(&Counts::Wdl(Wdl { wins: 0, draws: 100_000, losses: 0 }), &spec).unwrap();
        assert!(r.llr.is_finite() && r.verdict == Verdict::H0, "{model}: {}", r.llr);
    }
}

#[test]
fn paired_counts_use_the_pentanomial_llr() {
    let penta = Penta { ll: 369, ld: 12695, dd: 27124, wd: 12664, ww: 332 };
    let wdl = Wdl { wins: 26829, draws: 52605, losses: 26934 };
    let spec = SprtSpec::parse("elo0=0,elo1=2").unwrap();
    let paired = sprt(&Counts::Paired { wdl, penta }, &spec).unwrap();
    let alone = sprt(&Counts::Penta(penta), &spec).unwrap();
    assert_eq!(paired.llr, alone.llr);
    let tri = sprt(&Counts::Wdl(wdl), &spec).unwrap();
    assert!((tri.llr - paired.llr).abs() > 0.1, "trinomial and pentanomial LLRs differ");
}
