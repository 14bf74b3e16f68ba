//! Elo scales: logistic Elo and normalized Elo.
//!
//! **Logistic Elo.** A score (expected points per game) `s` in (0, 1) and an Elo difference `E`
//! are related by the logistic curve
//!
//! ```text
//! s = L(E) = 1 / (1 + 10^(-E/400)),        E = -400 log10(1/s - 1).
//! ```
//!
//! **Normalized Elo** (nElo, Michel Van den Bergh) measures the score's distance from 1/2 in
//! units of the per-game standard deviation `sigma`, the "t-value" of a single game
//! `t = (s - 1/2) / sigma`, scaled so that it resembles logistic Elo for draw-free games:
//!
//! ```text
//! nElo = t * 800 / ln(10)   (800/ln 10 = 347.4355855226...).
//! ```
//!
//! The number of games an SPRT needs depends on the bounds in nElo alone, whatever the draw
//! ratio, which is why testing frameworks state bounds in nElo.

/// Normalized Elo per unit of per-game t-value: `800 / ln 10`.
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// The logistic curve: expected score of a player `elo` points stronger.
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo of a score; `None` unless `0 < score < 1` (the Elo of 0 % or 100 % is infinite).
pub fn logistic_elo(score: f64) -> Option<f64> {
    if score > 0.0 && score < 1.0 {
        // `+ 0.0` turns the -0.0 of a 50 % score into 0.
        Some(-400.0 * (1.0 / score - 1.0).log10() + 0.0)
    } else {
        None
    }
}

/// Logistic Elo with the score clamped to [0.001, 0.999], i.e. Elo within about +/-1200 (the
/// clamp fishtest uses). Used for the ends of confidence intervals, which can fall outside
/// (0, 1) for small samples.
pub fn logistic_elo_clamped(score: f64) -> f64 {
    const EPS: f64 = 1e-3;
    let s = score.clamp(EPS, 1.0 - EPS);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Normalized Elo of a per-game t-value.
pub fn nelo_from_t(t: f64) -> f64 {
    t * NELO_PER_T
}

/// Per-game t-value of a normalized Elo.
pub fn t_from_nelo(nelo: f64) -> f64 {
    nelo / NELO_PER_T
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_round_trip() {
        for e in [-800.0, -35.5, 0.0, 0.1, 5.0, 400.0] {
            let s = logistic_score(e);
            assert!((logistic_elo(s).unwrap() - e).abs() < 1e-9, "{e}");
        }
        assert_eq!(logistic_score(0.0), 0.5);
        // 400 Elo: the stronger side is expected to score 10:1.
        assert!((logistic_score(400.0) - 10.0 / 11.0).abs() < 1e-15);
    }

    #[test]
    fn infinite_elo_is_none_or_clamped() {
        assert_eq!(logistic_elo(1.0), None);
        assert_eq!(logistic_elo(0.0), None);
        let top = logistic_elo_clamped(1.5);
        assert!((top - 1199.826).abs() < 0.001, "{top}");
        assert!((logistic_elo_clamped(-1.0) + top).abs() < 1e-9);
    }

    #[test]
    fn nelo_constant() {
        assert!((NELO_PER_T - 347.435_585_522_601_46).abs() < 1e-10);
        assert!((t_from_nelo(nelo_from_t(0.3)) - 0.3).abs() < 1e-15);
    }
}
