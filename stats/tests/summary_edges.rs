//! `summarize` on the edge cases: no games, one game, all draws, an empty bin, huge counts.

use stats::{Counts, Options, Penta, SprtSpec, TestBasis, Verdict, Wdl, summarize};

fn wdl(wins: u64, draws: u64, losses: u64) -> Counts {
    Counts::Wdl(Wdl { wins, draws, losses })
}

fn with_sprt() -> Options {
    Options { sprt: Some(SprtSpec::parse("elo0=0,elo1=5").unwrap()), ..Options::default() }
}

#[test]
fn zero_games() {
    for c in [wdl(0, 0, 0), Counts::Penta(Penta::default())] {
        let s = summarize(&c, &with_sprt()).unwrap();
        assert_eq!(s.games, 0);
        assert_eq!(
            (s.score, s.draw_ratio, s.elo, s.elo_ci, s.nelo, s.los, s.p_value, s.critical_score),
            (None, None, None, None, None, None, None, None)
        );
        assert_eq!(s.format_elo(), "n/a");
        let r = s.sprt.unwrap();
        assert_eq!((r.llr, r.verdict), (0.0, Verdict::Continue));
    }
}

#[test]
fn one_game() {
    let s = summarize(&wdl(1, 0, 0), &with_sprt()).unwrap();
    assert_eq!(s.score, Some(1.0));
    assert_eq!((s.elo, s.elo_ci, s.nelo, s.los), (None, None, None, None));
    // z = (1 - 1/2) / sqrt(1/4) = 1: p = 1 - Phi(1) = 0.158655253931457 (statrs is within
    // about 1e-11 of it).
    assert!((s.p_value.unwrap() - 0.158_655_253_931_457).abs() < 1e-10, "{:?}", s.p_value);
    assert_eq!(s.critical_score, None, "no score of one game is significant");
    assert_eq!(s.sprt.unwrap().verdict, Verdict::Continue);
    let s = summarize(&wdl(0, 1, 0), &Options::default()).unwrap();
    assert_eq!((s.score, s.elo, s.p_value), (Some(0.5), Some(0.0), None));
}

#[test]
fn all_draws() {
    let s = summarize(&wdl(0, 100, 0), &Options::default()).unwrap();
    assert_eq!((s.score, s.draw_ratio, s.elo), (Some(0.5), Some(1.0), Some(0.0)));
    // Zero variance: no interval, nElo, LOS or observed-draws p-value.
    assert_eq!((s.elo_ci, s.nelo, s.nelo_ci, s.los, s.p_value), (None, None, None, None, None));
    assert_eq!(s.format_elo(), "+0.0 +/- n/a");
    // With a draws floor the fixed-sample test is defined: 50 of 100 points, p = 1/2.
    let floor = Options { draws_floor: Some(0.3), ..Options::default() };
    let s = summarize(&wdl(0, 100, 0), &floor).unwrap();
    assert!((s.p_value.unwrap() - 0.5).abs() < 1e-15);
    // 50 + 1.6449 * sqrt(100 * 0.7 / 4) = 56.88: 57 points needed.
    assert_eq!(s.critical_score, Some(57.0));
    let s = summarize(&Counts::Penta(Penta { dd: 40, ..Penta::default() }), &floor).unwrap();
    assert_eq!((s.games, s.draws, s.nelo), (80, None, None));
}

#[test]
fn an_empty_bin() {
    // No losses: everything defined and finite; the Elo interval's upper end is clamped.
    let s = summarize(&wdl(10, 5, 0), &with_sprt()).unwrap();
    let elo = s.elo.unwrap();
    let [lo, hi] = s.elo_ci.unwrap();
    assert!(lo < elo && elo < hi && hi <= 1200.0, "{lo} {elo} {hi}");
    assert!(s.sprt.unwrap().llr.is_finite());
    // Score 12.5/15: Elo = -400 log10(15/12.5 - 1) = 279.6.
    assert!((elo - -400.0 * (1.0 / (12.5 / 15.0) - 1.0f64).log10()).abs() < 1e-9);
}

#[test]
fn paired_counts_give_exact_draws() {
    let penta = Penta { ll: 1, ld: 2, dd: 3, wd: 4, ww: 5 };
    // Three DD+WL pairs: one of them a win and a loss.
    let wdl = Wdl { wins: 4 + 10 + 1, draws: 2 + 4 + 4, losses: 2 + 2 + 1 };
    let paired = summarize(&Counts::Paired { wdl, penta }, &Options::default()).unwrap();
    let alone = summarize(&Counts::Penta(penta), &Options::default()).unwrap();
    assert_eq!((paired.wins, paired.draws, paired.losses), (Some(15), Some(10), Some(5)));
    // Pentanomial counts alone do not know W/D/L or the draw ratio.
    assert_eq!((alone.wins, alone.draws, alone.losses, alone.draw_ratio), (None, None, None, None));
    assert_eq!((alone.games, alone.points), (paired.games, paired.points));
    // The pair-based estimates are the same.
    assert_eq!(paired.elo, alone.elo);
    assert_eq!(paired.nelo_ci, alone.nelo_ci);
    assert_eq!(paired.test_basis, Some(TestBasis::ObservedDraws));
    assert_eq!(alone.test_basis, Some(TestBasis::PairVariance));
}

/// `--penta 1,6,20,8,1` used to show 75 % draws and a p-value "from observed
/// draws"; the fixed-sample test now uses the pair variance, 4 (2/4 + 14/16) = 5.5.
#[test]
fn pentanomial_fixed_sample_test_uses_pair_variance() {
    let penta = Penta { ll: 1, ld: 6, dd: 20, wd: 8, ww: 1 };
    let s = summarize(&Counts::Penta(penta), &Options::default()).unwrap();
    assert_eq!((s.games, s.points, s.draw_ratio, s.draws), (72, 37.0, None, None));
    assert_eq!(s.test_basis, Some(TestBasis::PairVariance));
    let p = stats::pair_variance_test(&penta, 0.05).unwrap().unwrap();
    assert_eq!(s.p_value, Some(p.p_value));
    assert_eq!(s.critical_score, Some(40.0));
    // A draws floor is an assumption about the games and needs no W/D/L.
    let floor = Options { draws_floor: Some(0.3), ..Options::default() };
    let s = summarize(&Counts::Penta(penta), &floor).unwrap();
    assert_eq!(s.test_basis, Some(TestBasis::DrawsFloor));
    let d = stats::draw_aware_test(72, 37.0, 0.0, Some(0.3), 0.05).unwrap().unwrap();
    assert_eq!(s.p_value, Some(d.p_value));
    let v = serde_json::to_value(summarize(&Counts::Penta(penta), &Options::default()).unwrap())
        .unwrap();
    assert!(v["wins"].is_null() && v["draw_ratio"].is_null());
    assert_eq!(v["test_basis"], "pair_variance");
}

#[test]
fn invalid_options_and_counts() {
    let c = wdl(1, 2, 3);
    for opts in [
        Options { draws_floor: Some(1.0), ..Options::default() },
        Options { draws_floor: Some(f64::NAN), ..Options::default() },
        Options { alpha: 0.0, ..Options::default() },
        Options { alpha: 1.0, ..Options::default() },
    ] {
        assert!(summarize(&c, &opts).is_err(), "{opts:?}");
    }
    assert!(summarize(&wdl(u64::MAX, 1, 0), &Options::default()).is_err());
    let bad_spec = SprtSpec { elo0: 5.0, ..SprtSpec::parse("elo0=0,elo1=5").unwrap() };
    let opts = Options { sprt: Some(bad_spec), ..Options::default() };
    assert!(summarize(&c, &opts).is_err());
}

#[test]
fn summary_json_shape() {
    let s = summarize(&wdl(0, 0, 0), &Options::default()).unwrap();
    let v = serde_json::to_value(&s).unwrap();
    assert!(v["elo"].is_null() && v["elo_ci"].is_null() && v["sprt"].is_null());
    let s = summarize(&wdl(30, 16, 18), &with_sprt()).unwrap();
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["elo_ci"].as_array().unwrap().len(), 2);
    assert_eq!(v["sprt"]["verdict"], "continue");
}
