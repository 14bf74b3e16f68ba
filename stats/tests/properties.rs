//! Property tests: monotonicity of the LLR and the LOS, intervals around their estimates, no
//! NaN anywhere.
//!
//! Deterministic: every test draws from a fixed seed, so `cargo test` checks the
//! same inputs on every run and machine. Other seeds are tried by the long run of the notes:
//! `PROPTEST_RNG_SEED=<n> cargo test -p stats --test properties` (any u64). A failing input
//! found that way goes into `tests/regressions.rs` as an explicit unit test.

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};
use stats::{Counts, EloModel, Options, Penta, SprtSpec, Wdl, llr, summarize};

fn wdl() -> impl Strategy<Value = Wdl> {
    (0u64..3000, 0u64..3000, 0u64..3000).prop_map(|(wins, draws, losses)| Wdl {
        wins,
        draws,
        losses,
    })
}

fn penta() -> impl Strategy<Value = Penta> {
    (0u64..800, 0u64..800, 0u64..800, 0u64..800, 0u64..800).prop_map(|(ll, ld, dd, wd, ww)| Penta {
        ll,
        ld,
        dd,
        wd,
        ww,
    })
}

fn model() -> impl Strategy<Value = EloModel> {
    prop_oneof![Just(EloModel::Logistic), Just(EloModel::Normalized)]
}

fn finite_opt(x: Option<f64>) -> bool {
    x.is_none_or(f64::is_finite)
}

/// 400 cases from ChaCha seeded with `PROPTEST_RNG_SEED` if set, else a fixed seed.
fn config() -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok());
    ProptestConfig {
        cases: 400,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed.unwrap_or(0x5747_5f16)),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Turning a loss into a win (same number of games) raises the LLR.
    #[test]
    fn llr_increases_with_wins(w in wdl(), m in model(), elo0 in -10.0f64..5.0, width in 1.0f64..10.0) {
        prop_assume!(w.losses > 0);
        let better = Wdl { wins: w.wins + 1, draws: w.draws, losses: w.losses - 1 };
        let a = llr(&w.ascending(), elo0, elo0 + width, m).unwrap();
        let b = llr(&better.ascending(), elo0, elo0 + width, m).unwrap();
        prop_assert!(b > a, "{:?} -> {:?}: {} !< {}", w, better, a, b);
    }

    /// Turning an LD pair into a WD pair raises the pentanomial LLR.
    #[test]
    fn penta_llr_increases_with_better_pairs(p in penta(), m in model(), elo0 in -10.0f64..5.0, width in 1.0f64..10.0) {
        prop_assume!(p.ld > 0);
        let better = Penta { ld: p.ld - 1, wd: p.wd + 1, ..p };
        let a = llr(&p.ascending(), elo0, elo0 + width, m).unwrap();
        let b = llr(&better.ascending(), elo0, elo0 + width, m).unwrap();
        prop_assert!(b > a, "{:?} -> {:?}: {} !< {}", p, better, a, b);
    }

    /// The constrained MLEs behind the LLR are found for any small sample (with empty bins)
    /// and any bounds: `llr` checks the constraints and would return an error otherwise.
    #[test]
    fn llr_is_defined_for_small_samples(
        c in proptest::collection::vec(0u64..40, 5),
        tri in any::<bool>(),
        m in model(),
        elo0 in prop_oneof![-60.0f64..60.0, -1900.0f64..1500.0],
        width in prop_oneof![0.1f64..60.0, 0.1f64..400.0],
    ) {
        let counts = if tri { &c[..3] } else { &c[..] };
        let l = llr(counts, elo0, elo0 + width, m);
        prop_assert!(matches!(l, Ok(v) if v.is_finite()), "{:?} {} [{}, {}]: {:?}", counts, m, elo0, elo0 + width, l);
    }

    /// Intervals contain their estimates, LOS is a probability, nothing is NaN or infinite.
    #[test]
    fn intervals_contain_estimates(w in wdl(), p in penta(), floor in proptest::option::of(0.0f64..0.99)) {
        let opts = Options {
            draws_floor: floor,
            sprt: Some(SprtSpec::parse("elo0=0,elo1=5").unwrap()),
            ..Options::default()
        };
        for counts in [Counts::Wdl(w), Counts::Penta(p)] {
            let s = summarize(&counts, &opts).unwrap();
            if let (Some(e), Some([lo, hi])) = (s.elo, s.elo_ci) {
                prop_assert!(lo <= e && e <= hi, "{} not in [{}, {}]", e, lo, hi);
            }
            if let (Some(e), Some([lo, hi])) = (s.nelo, s.nelo_ci) {
                prop_assert!(lo <= e && e <= hi, "{} not in [{}, {}]", e, lo, hi);
            }
            if let Some(los) = s.los {
                prop_assert!((0.0..=1.0).contains(&los));
            }
            if let Some(p) = s.p_value {
                prop_assert!((0.0..=1.0).contains(&p));
            }
            for x in [s.score, s.draw_ratio, s.elo, s.nelo, s.los, s.p_value, s.critical_score] {
                prop_assert!(finite_opt(x));
            }
            for ci in [s.elo_ci, s.nelo_ci].into_iter().flatten() {
                prop_assert!(ci.iter().all(|x| x.is_finite()));
            }
            prop_assert!(s.sprt.unwrap().llr.is_finite());
        }
    }

    /// LOS, Elo and the fixed-sample p-value move the right way when a loss becomes a win.
    #[test]
    fn los_is_monotone(w in wdl()) {
        prop_assume!(w.losses > 0);
        let better = Wdl { wins: w.wins + 1, draws: w.draws, losses: w.losses - 1 };
        let a = summarize(&Counts::Wdl(w), &Options::default()).unwrap();
        let b = summarize(&Counts::Wdl(better), &Options::default()).unwrap();
        if let (Some(x), Some(y)) = (a.los, b.los) {
            prop_assert!(y >= x, "LOS {} -> {}", x, y);
        }
        if let (Some(x), Some(y)) = (a.elo, b.elo) {
            prop_assert!(y > x);
        }
        if let (Some(x), Some(y)) = (a.p_value, b.p_value) {
            prop_assert!(y <= x);
        }
    }
}
