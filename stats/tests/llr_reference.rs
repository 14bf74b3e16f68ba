//! The generalized LLR against published fishtest values and an independent implementation.
//!
//! Independent values: a Python/mpmath script kept outside the repository, which solves the
//! same constrained maximum-likelihood problems in a different way: mpmath at 60 significant
//! digits, Anderson bracketing on the secular equation (logistic) and multidimensional Newton on
//! the full Lagrange system in (x, mu, sigma) (normalized), instead of this crate's safeguarded
//! Newton and fixed-point iteration in double precision. Measured largest difference: 2.2e-13
//! (747,500 pairs, logistic); the tests allow 1e-11. Fishtest's own stored value differs from
//! the 60-digit one by 3.5e-12 (its brentq tolerance), so that comparison allows 1e-9.

// The fixtures carry every digit the 45-digit reference printed.
#![allow(clippy::excessive_precision)]

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

/// Extreme counts (lopsided, one-sided, a single non-empty outcome, all losses) and
/// bounds far from the observations, against the independent 45-digit solver (a profile of
/// the empirical-likelihood dual over the mean, scanned on a grid so that the global maximum
/// is taken; two of these cases have two local maxima). Within 1e-9 relative. The solver works
/// on the same double-precision targets (logistic score, t-value) as the crate.
const EXTREME: &[(&[u64], f64, f64, EloModel, f64)] = &[
    (&[403, 642, 0, 10, 0], 0.0, 5.0, EloModel::Normalized, -17.937575317433246052),
    (&[403, 642, 0, 10, 0], 0.0, 2.0, EloModel::Normalized, -7.1242296331007964355),
    (&[403, 642, 0, 10, 0], -3.0, 1.0, EloModel::Normalized, -14.112256167416014803),
    (&[403, 642, 0, 10, 0], -500.0, -400.0, EloModel::Normalized, -18.291267558184059974),
    (&[403, 642, 0, 10, 0], 300.0, 2000.0, EloModel::Normalized, -3553.9523142955510853),
    // Two local maxima of the nElo profile at -2000 (the fixed point from the observations
    // alone found the lower one, -4327.93).
    (&[403, 642, 0, 10, 0], -2000.0, 2000.0, EloModel::Normalized, -4472.2148007071443754),
    (&[100, 50, 0, 0, 0], 0.0, 5.0, EloModel::Normalized, -2.8172117578564952861),
    (&[100, 50, 0, 0, 0], 0.0, 2.0, EloModel::Normalized, -1.1196079101967712534),
    (&[100, 50, 0, 0, 0], -3.0, 1.0, EloModel::Normalized, -2.2196508775178214425),
    (&[100, 50, 0, 0, 0], -500.0, -400.0, EloModel::Normalized, -3.1285789622634654286),
    (&[500, 0, 0], 0.0, 5.0, EloModel::Normalized, -7.2470940390052015591),
    (&[500, 0, 0], 0.0, 2.0, EloModel::Normalized, -2.8864966998870558654),
    (&[500, 0, 0], -3.0, 1.0, EloModel::Normalized, -5.7398335388652510795),
    (&[500, 0, 0], -500.0, -400.0, EloModel::Normalized, -18.523106859769595732),
    (&[403, 642, 0, 10, 0], 0.0, 5.0, EloModel::Logistic, -15.291906489182937557),
    (&[403, 642, 0, 10, 0], 0.0, 2.0, EloModel::Logistic, -6.0905443766585932881),
    (&[403, 642, 0, 10, 0], -3.0, 1.0, EloModel::Logistic, -12.111170411187225555),
    (&[403, 642, 0, 10, 0], -500.0, -400.0, EloModel::Logistic, 264.69774080755040756),
    (&[403, 642, 0, 10, 0], 300.0, 2000.0, EloModel::Logistic, -10151.561902241140563),
    (&[403, 642, 0, 10, 0], -2000.0, 2000.0, EloModel::Logistic, -6035.6014236171959201),
    (&[100, 50, 0, 0, 0], 0.0, 5.0, EloModel::Logistic, -2.1742170538515337214),
    (&[100, 50, 0, 0, 0], 0.0, 2.0, EloModel::Logistic, -0.86595903685213948327),
    (&[100, 50, 0, 0, 0], -3.0, 1.0, EloModel::Logistic, -1.7219768746479478449),
    (&[100, 50, 0, 0, 0], -500.0, -400.0, EloModel::Logistic, 5.5060637067849761494),
    (&[100, 50, 0, 0, 0], 300.0, 2000.0, EloModel::Logistic, -1443.3677556586957301),
    (&[100, 50, 0, 0, 0], -2000.0, 2000.0, EloModel::Logistic, -1301.6750521151210832),
    (&[1000, 0, 0, 0, 0], 0.0, 5.0, EloModel::Logistic, -14.494735150880552605),
    (&[1000, 0, 0, 0, 0], 0.0, 2.0, EloModel::Logistic, -5.7730426517260954996),
    (&[1000, 0, 0, 0, 0], -3.0, 1.0, EloModel::Logistic, -11.479811952496889727),
    (&[1000, 0, 0, 0, 0], -500.0, -400.0, EloModel::Logistic, -40.599889416313843885),
    (&[1000, 0, 0, 0, 0], 300.0, 2000.0, EloModel::Logistic, -9622.3533341869446811),
    (&[1000, 0, 0, 0, 0], -2000.0, 2000.0, EloModel::Logistic, -11512.948025176140363),
    (&[0, 0, 0, 0, 1000], 0.0, 5.0, EloModel::Logistic, 14.28763607592272959),
    (&[0, 0, 0, 0, 1000], 0.0, 2.0, EloModel::Logistic, 5.7399058389953101161),
    (&[0, 0, 0, 0, 1000], -3.0, 1.0, EloModel::Logistic, 11.546085028945572721),
    (&[0, 0, 0, 0, 1000], -500.0, -400.0, EloModel::Logistic, 535.04753509082818246),
    (&[0, 0, 0, 0, 1000], 300.0, 2000.0, EloModel::Logistic, 163.65241738961930917),
    (&[0, 0, 0, 0, 1000], -2000.0, 2000.0, EloModel::Logistic, 11512.948025181785186),
    (&[0, 0, 1000, 0, 0], 0.0, 5.0, EloModel::Logistic, -14.48458061147529501),
    (&[0, 0, 1000, 0, 0], 0.0, 2.0, EloModel::Logistic, -5.7637958146342814096),
    (&[0, 0, 1000, 0, 0], -3.0, 1.0, EloModel::Logistic, 5.7885178782305243426),
    (&[0, 0, 1000, 0, 0], -500.0, -400.0, EloModel::Logistic, 535.04748760765033621),
    (&[0, 0, 1000, 0, 0], 300.0, 2000.0, EloModel::Logistic, -9622.3531383920548639),
    (&[0, 0, 0, 0, 1], 0.0, 5.0, EloModel::Logistic, 0.014315849412829758679),
    (&[0, 0, 0, 0, 1], 0.0, 2.0, EloModel::Logistic, 0.0057512909166519860758),
    (&[0, 0, 0, 0, 1], -3.0, 1.0, EloModel::Logistic, 0.0115691211597385932),
    (&[0, 0, 0, 0, 1], -500.0, -400.0, EloModel::Logistic, 0.53661031904802527746),
    (&[0, 0, 0, 0, 1], 300.0, 2000.0, EloModel::Logistic, 0.13818809718144497132),
    (&[0, 0, 0, 0, 1], -2000.0, 2000.0, EloModel::Logistic, 11.519584306955278517),
    (&[1, 0, 0, 0, 0], 0.0, 5.0, EloModel::Logistic, -0.014523779645967619751),
    (&[1, 0, 0, 0, 0], 0.0, 2.0, EloModel::Logistic, -0.005784560718496934049),
    (&[1, 0, 0, 0, 0], -3.0, 1.0, EloModel::Logistic, -0.011502582107236154788),
    (&[1, 0, 0, 0, 0], -500.0, -400.0, EloModel::Logistic, -0.040152537080304909836),
    (&[1, 0, 0, 0, 0], 300.0, 2000.0, EloModel::Logistic, -9.6510271743779622997),
    (&[1, 0, 0, 0, 0], -2000.0, 2000.0, EloModel::Logistic, -11.519584306949594267),
    (&[0, 0, 0, 3, 0], 0.0, 5.0, EloModel::Logistic, 0.04287641672152720122),
    (&[0, 0, 0, 3, 0], 0.0, 2.0, EloModel::Logistic, 0.017225297091569400487),
    (&[0, 0, 0, 3, 0], -3.0, 1.0, EloModel::Logistic, 0.03464987799069389168),
    (&[0, 0, 0, 3, 0], -500.0, -400.0, EloModel::Logistic, 1.6066874242428188456),
    (&[0, 0, 0, 3, 0], 300.0, 2000.0, EloModel::Logistic, -28.89491574474779894),
    (&[0, 0, 0, 3, 0], -2000.0, 2000.0, EloModel::Logistic, 3.2947382271010221735),
    (&[50, 60, 0, 40, 30], 0.0, 5.0, EloModel::Logistic, -0.76660972835103626244),
    (&[50, 60, 0, 40, 30], 0.0, 2.0, EloModel::Logistic, -0.29923093068728042923),
    (&[50, 60, 0, 40, 30], -3.0, 1.0, EloModel::Logistic, -0.57864854985741229371),
    (&[50, 60, 0, 40, 30], -500.0, -400.0, EloModel::Logistic, 64.029201742518339559),
    (&[50, 60, 0, 40, 30], 300.0, 2000.0, EloModel::Logistic, -1433.2082500496726531),
    (&[50, 60, 0, 40, 30], -2000.0, 2000.0, EloModel::Logistic, -277.48102131539009177),
    (&[0, 5, 20, 7, 0], 0.0, 5.0, EloModel::Logistic, 0.11845432690534793624),
    (&[0, 5, 20, 7, 0], 0.0, 2.0, EloModel::Logistic, 0.055791662264257201286),
    (&[0, 5, 20, 7, 0], -3.0, 1.0, EloModel::Logistic, 0.13376628067543578466),
    (&[0, 5, 20, 7, 0], -500.0, -400.0, EloModel::Logistic, 17.121909310371530654),
    (&[0, 5, 20, 7, 0], 300.0, 2000.0, EloModel::Logistic, -307.92357624093781131),
    (&[0, 5, 20, 7, 0], -2000.0, 2000.0, EloModel::Logistic, 2.1972245758502249198),
    (&[5, 0, 0, 0, 5], 0.0, 5.0, EloModel::Logistic, -0.0010360608217173298371),
    (&[5, 0, 0, 0, 5], 0.0, 2.0, EloModel::Logistic, -0.00016577453724552274209),
    (&[5, 0, 0, 0, 5], -3.0, 1.0, EloModel::Logistic, 0.00033154632823624081841),
    (&[5, 0, 0, 0, 5], -500.0, -400.0, EloModel::Logistic, 2.4736722550968497475),
    (&[5, 0, 0, 0, 5], 300.0, 2000.0, EloModel::Logistic, -47.321531571275224271),
    (&[0, 7, 0, 7, 0], 0.0, 5.0, EloModel::Logistic, -0.0057997211080168264425),
    (&[0, 7, 0, 7, 0], 0.0, 2.0, EloModel::Logistic, -0.00092774062602780597334),
    (&[0, 7, 0, 7, 0], -3.0, 1.0, EloModel::Logistic, 0.0018556039291700502054),
    (&[0, 7, 0, 7, 0], -500.0, -400.0, EloModel::Logistic, 7.4915891790475665532),
    (&[0, 7, 0, 7, 0], 300.0, 2000.0, EloModel::Logistic, -134.73127436564245127),
    (&[30, 0, 1, 0, 2], 0.0, 5.0, EloModel::Logistic, -0.41901016145384695777),
    (&[30, 0, 1, 0, 2], 0.0, 2.0, EloModel::Logistic, -0.16677797239759208878),
    (&[30, 0, 1, 0, 2], -3.0, 1.0, EloModel::Logistic, -0.33135271477974058562),
    (&[30, 0, 1, 0, 2], -500.0, -400.0, EloModel::Logistic, 0.11405527453745310694),
    (&[30, 0, 1, 0, 2], 300.0, 2000.0, EloModel::Logistic, -297.97250584110752375),
    (&[30, 0, 1, 0, 2], -2000.0, 2000.0, EloModel::Logistic, -324.87462293508737256),
    (&[1, 1000, 10000, 1000, 0], 0.0, 5.0, EloModel::Logistic, -29.826847780039164575),
    (&[1, 1000, 10000, 1000, 0], 0.0, 2.0, EloModel::Logistic, -4.8934010600138663333),
    (&[1, 1000, 10000, 1000, 0], -3.0, 1.0, EloModel::Logistic, 9.2112224292622071197),
];

#[test]
fn extreme_counts_match_the_independent_solver() {
    let mut worst = 0.0f64;
    for &(counts, elo0, elo1, model, expected) in EXTREME {
        let got = llr(counts, elo0, elo1, model);
        let Ok(got) = got else {
            panic!("{counts:?} {model} [{elo0}, {elo1}]: {got:?}");
        };
        let rel = (got - expected).abs() / expected.abs();
        println!("{counts:?} {model} [{elo0}, {elo1}]: {got:.12} vs {expected:.12}, rel {rel:.1e}");
        worst = worst.max(rel);
        assert!(rel <= 1e-9, "{counts:?} {model} [{elo0}, {elo1}]: {got} vs {expected}");
        // Sign-correct (implied by the relative tolerance; said for the record).
        assert_eq!(got > 0.0, expected > 0.0);
    }
    println!("largest relative difference {worst:.1e}");
}

/// The command line `--penta 403,642,0,10,0 --sprt elo0=0,elo1=5` failed with
/// "no distribution with t-value 0 was found"; it must stop at H0.
#[test]
fn lopsided_penta_counts_accept_h0() {
    let counts = Counts::Penta(Penta { ll: 403, ld: 642, dd: 0, wd: 10, ww: 0 });
    for model in [EloModel::Normalized, EloModel::Logistic] {
        let spec = SprtSpec { model, ..SprtSpec::parse("elo0=0,elo1=5").unwrap() };
        let r = sprt(&counts, &spec).unwrap();
        assert_eq!(r.verdict, Verdict::H0, "{model}: {}", r.llr);
    }
}
