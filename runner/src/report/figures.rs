//! How the runner words its statistics (terminal, table.md, progress): asymmetric 95 % intervals
//! as `[lo, hi]` (the numbers of summary.json), probabilities that never round to a certainty,
//! and the small-sample rule: below [`MIN_PAIRS`] complete game pairs the figures are printed but
//! marked as not yet meaningful.

use stats::Summary;

/// Complete game pairs below which estimates are "not yet meaningful". The intervals, LOS and
/// P(best) come from a normal approximation of the mean pair score with the variance estimated
/// from the pairs themselves; with fewer than 10 pairs that variance rests on a handful of values
/// (it is zero when they all agree) and one game more moves the score by several points.
pub const MIN_PAIRS: u64 = 10;

/// Whether `pairs` complete pairs are too few for the figures to mean much.
pub fn too_few(pairs: u64) -> bool {
    pairs < MIN_PAIRS
}

/// The warning printed beside figures from too few pairs.
pub fn too_few_note(pairs: u64) -> String {
    format!(
        "{pairs} complete pair{} (< {MIN_PAIRS}): figures not yet meaningful",
        if pairs == 1 { "" } else { "s" }
    )
}

/// `+12.3 [-5.0, +30.1]`: a value and its 95 % interval as in summary.json; `+0.0 [n/a: no
/// spread]` when every pair scored the same (the variance, hence the interval, is zero); `n/a`.
pub fn value_ci(v: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (v, ci) {
        (None, _) => "n/a".into(),
        (Some(v), Some([lo, hi])) => format!("{v:+.1} [{lo:+.1}, {hi:+.1}]"),
        (Some(v), None) => format!("{v:+.1} [n/a: no spread]"),
    }
}

/// Logistic Elo with its interval.
pub fn elo(s: &Summary) -> String {
    value_ci(s.elo, s.elo_ci)
}

/// Normalized Elo with its interval.
pub fn nelo(s: &Summary) -> String {
    value_ci(s.nelo, s.nelo_ci)
}

/// A probability from a normal approximation (LOS, P(best)) in percent with one decimal, never
/// rounded to a certainty the approximation cannot give: `>99.9` instead of `100.0` (also when
/// the normal tail underflows to exactly 1), `<0.1` instead of `0.0`; `n/a` when undefined.
pub fn prob_pct(p: Option<f64>) -> String {
    match p {
        Some(p) if !p.is_finite() => "n/a".into(),
        None => "n/a".into(),
        Some(p) if p >= 0.9995 => ">99.9".into(),
        Some(p) if p < 0.0005 => "<0.1".into(),
        Some(p) => format!("{:.1}", 100.0 * p),
    }
}

/// A score or ratio in percent with one decimal, `n/a` when undefined.
pub fn pct(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or_else(|| "n/a".into(), |v| format!("{:.1}", 100.0 * v))
}

/// A p-value with three significant digits, `<0.0001` below that.
pub fn format_p(p: Option<f64>) -> String {
    match p {
        None => "n/a".into(),
        Some(p) if p < 1e-4 => "<0.0001".into(),
        Some(p) if p >= 0.1 => format!("{p:.2}"),
        Some(p) if p >= 0.01 => format!("{p:.3}"),
        Some(p) => format!("{p:.4}"),
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_asymmetric_and_zero_spread_is_said() {
        assert_eq!(value_ci(Some(-470.44), Some([-1199.8, -277.2])), "-470.4 [-1199.8, -277.2]");
        assert_eq!(value_ci(Some(0.0), None), "+0.0 [n/a: no spread]");
        assert_eq!(value_ci(None, Some([1.0, 2.0])), "n/a");
    }

    #[test]
    fn probabilities_never_round_to_certainty() {
        assert_eq!(prob_pct(Some(0.99996)), ">99.9");
        assert_eq!(prob_pct(Some(1.0)), ">99.9");
        assert_eq!(prob_pct(Some(0.9994)), "99.9");
        assert_eq!(prob_pct(Some(0.00004)), "<0.1");
        assert_eq!(prob_pct(Some(0.0)), "<0.1");
        assert_eq!(prob_pct(Some(0.5)), "50.0");
        assert_eq!(prob_pct(Some(f64::NAN)), "n/a");
        assert_eq!(prob_pct(None), "n/a");
    }

    #[test]
    fn the_small_sample_rule() {
        assert!(too_few(9) && !too_few(10));
        assert_eq!(too_few_note(1), "1 complete pair (< 10): figures not yet meaningful");
    }
}
