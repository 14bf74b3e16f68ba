//! Published fastchess match reports (fastchess follows fishtest's formulas), reproduced to the
//! printed precision: Elo and nElo with their 95 % half-widths, LOS, and the normalized-Elo
//! SPRT's LLR. The reports are quoted from public repositories' match logs
//! (the "Results of ... Elo: ..., nElo: ..., Ptnml(0-2): [...]" blocks fastchess prints).

use stats::{Counts, EloModel, Options, Penta, Summary, llr, summarize};

fn summary(p: [u64; 5]) -> Summary {
    let penta = Penta { ll: p[0], ld: p[1], dd: p[2], wd: p[3], ww: p[4] };
    summarize(&Counts::Penta(penta), &Options::default()).unwrap()
}

fn half(ci: Option<[f64; 2]>) -> f64 {
    let [lo, hi] = ci.unwrap();
    (hi - lo) / 2.0
}

fn f2(x: f64) -> String {
    format!("{x:.2}")
}

#[test]
fn zeno_doubled_passed_pawns_sprt() {
    // "Elo: 19.83 +/- 6.77, nElo: 24.25 +/- 8.26 / LOS: 100.00 % ... Games: 6804, Wins: 2718,
    //  Losses: 2330, Draws: 1756, Points: 3596.0 (52.85 %) / Ptnml(0-2): [352, 579, 1264, 743,
    //  464] / LLR: 4.60 (100.0%) (-4.60, 4.60) [9.00, 16.00]"
    let s = summary([352, 579, 1264, 743, 464]);
    assert_eq!(s.games, 6804);
    assert_eq!(f2(100.0 * s.score.unwrap()), "52.85");
    assert_eq!(f2(s.elo.unwrap()), "19.83");
    assert_eq!(f2(half(s.elo_ci)), "6.77");
    assert_eq!(f2(s.nelo.unwrap()), "24.25");
    assert_eq!(f2(half(s.nelo_ci)), "8.26");
    assert_eq!(f2(100.0 * s.los.unwrap()), "100.00");
    let l = llr(&[352, 579, 1264, 743, 464], 9.0, 16.0, EloModel::Normalized).unwrap();
    assert_eq!(f2(l), "4.60");
}

#[test]
fn sf19_smallnet_vs_sf18_lite() {
    // "Elo: 72.85 +/- 22.33, nElo: 132.30 +/- 39.32 / LOS: 100.00 % ... Games: 300, Wins: 78,
    //  Losses: 16, Draws: 206, Points: 181.0 (60.33 %) / Ptnml(0-2): [1, 10, 78, 48, 13]"
    let s = summary([1, 10, 78, 48, 13]);
    assert_eq!(s.games, 300);
    assert_eq!(f2(s.elo.unwrap()), "72.85");
    assert_eq!(f2(half(s.elo_ci)), "22.33");
    assert_eq!(f2(s.nelo.unwrap()), "132.30");
    assert_eq!(f2(half(s.nelo_ci)), "39.32");
}

#[test]
fn twenty_game_sprt() {
    // "Elo: 190.85 +/- 65.54, nElo: 549.34 +/- 152.27 / LOS: 100.00% ... Games: 20, Wins: 10,
    //  Losses: 0, Draws: 10 ... Ptnml(0-2): [0, 0, 1, 8, 1] / LLR: 1.24 (42.1%) (-2.94, 2.94)
    //  [0.00, 50.00]" (an empty bin: the LLR needs the 1e-3 regularization).
    let s = summary([0, 0, 1, 8, 1]);
    assert_eq!(f2(s.elo.unwrap()), "190.85");
    assert_eq!(f2(half(s.elo_ci)), "65.54");
    assert_eq!(f2(s.nelo.unwrap()), "549.34");
    assert_eq!(f2(half(s.nelo_ci)), "152.27");
    let l = llr(&[0, 0, 1, 8, 1], 0.0, 50.0, EloModel::Normalized).unwrap();
    assert_eq!(f2(l), "1.24");
}

#[test]
fn four_game_even_match() {
    // "Elo: -0.00 +/- 296.58, nElo: 0.00 +/- 340.48 / LOS: 50.00 % ... Games: 4, Wins: 1,
    //  Losses: 1, Draws: 2 ... Ptnml(0-2): [0, 1, 0, 1, 0]"
    let s = summary([0, 1, 0, 1, 0]);
    assert_eq!(s.elo, Some(0.0));
    assert_eq!(f2(half(s.elo_ci)), "296.58");
    assert_eq!(f2(s.nelo.unwrap()), "0.00");
    assert_eq!(f2(half(s.nelo_ci)), "340.48");
    assert_eq!(f2(100.0 * s.los.unwrap()), "50.00");
}
