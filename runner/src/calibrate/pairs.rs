//! Depth pairs, the per-position search records, and the fit of every (pair, stage) into the
//! parameter rows the engine's `MPCParams` option reads.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use stats::line_fit::{FitError, LinearFit, fit_line};

use crate::plan::positions::Stage;
use crate::play::uci_info::Eval;

/// A (shallow, deep) depth pair, written `shallow:deep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DepthPair {
    pub shallow: u32,
    pub deep: u32,
}

impl fmt::Display for DepthPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.shallow, self.deep)
    }
}

impl FromStr for DepthPair {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("depth pair {s:?} is not SHALLOW:DEEP (e.g. 4:8)"))?;
        let num = |t: &str| {
            t.trim().parse::<u32>().map_err(|_| format!("depth pair {s:?}: {t:?} is not a depth"))
        };
        let (shallow, deep) = (num(a)?, num(b)?);
        if shallow == 0 || shallow >= deep || deep > 64 {
            return Err(format!("depth pair {s:?}: need 1 <= shallow < deep <= 64"));
        }
        Ok(DepthPair { shallow, deep })
    }
}

/// Parses `2:6,3:7,...` (duplicates removed, order kept).
pub fn parse_pairs(text: &str) -> Result<Vec<DepthPair>, String> {
    let mut out: Vec<DepthPair> = Vec::new();
    for item in text.split(',').filter(|s| !s.trim().is_empty()) {
        let p: DepthPair = item.parse()?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err("no depth pairs given".into());
    }
    Ok(out)
}

/// The sorted set of depths the pairs need.
pub fn needed_depths(pairs: &[DepthPair]) -> Vec<u32> {
    let mut d: Vec<u32> = pairs.iter().flat_map(|p| [p.shallow, p.deep]).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// One line of searches.jsonl: a position and its score at each depth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionRecord {
    pub index: usize,
    pub fen: String,
    pub stage: Stage,
    /// Depth -> final exact score of that depth, ascending.
    #[serde(default)]
    pub scores: Vec<(u32, Eval)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default)]
    pub wall_ms: u64,
    /// Set when the engine faulted on this position (no scores then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

impl PositionRecord {
    pub fn score_at(&self, depth: u32) -> Option<Eval> {
        self.scores.iter().find(|(d, _)| *d == depth).map(|(_, s)| *s)
    }
}

/// One (shallow, deep) observation, as written to pairs.jsonl.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairPoint {
    pub index: usize,
    pub stage: Stage,
    pub shallow: u32,
    pub deep: u32,
    pub v_shallow: Eval,
    pub v_deep: Eval,
    /// In the fit: both scores in centipawns (no mate) and |v_shallow| <= max_abs.
    pub used: bool,
}

/// All observations of `pair`, in record order.
pub fn pair_points(records: &[PositionRecord], pair: DepthPair, max_abs: i32) -> Vec<PairPoint> {
    records
        .iter()
        .filter_map(|r| {
            let (vs, vd) = (r.score_at(pair.shallow)?, r.score_at(pair.deep)?);
            let used = matches!((vs, vd), (Eval::Cp(s), Eval::Cp(_)) if s.abs() <= max_abs);
            Some(PairPoint {
                index: r.index,
                stage: r.stage,
                shallow: pair.shallow,
                deep: pair.deep,
                v_shallow: vs,
                v_deep: vd,
                used,
            })
        })
        .collect()
}

/// The `(v', v)` centipawn points used for a stage's fit.
pub fn fit_points(points: &[PairPoint], stage: Stage) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|p| p.used && p.stage == stage)
        .filter_map(|p| match (p.v_shallow, p.v_deep) {
            (Eval::Cp(s), Eval::Cp(d)) => Some((s as f64, d as f64)),
            _ => None,
        })
        .collect()
}

/// A row of params.json, as the engine's `MPCParams` loader reads it.
pub use crate::store::formats::ParamRow;

impl ParamRow {
    pub fn new(stage: Stage, pair: DepthPair, fit: &LinearFit) -> ParamRow {
        let round = |x: f64, places: i32| {
            let k = 10f64.powi(places);
            (x * k).round() / k
        };
        ParamRow {
            stage,
            shallow: pair.shallow,
            deep: pair.deep,
            a: round(fit.a, 4),
            b: round(fit.b, 2),
            sigma: round(fit.sigma, 2),
            r: round(fit.r, 3),
            n: fit.n,
        }
    }
}

/// Fits every pair and stage. Pairs/stages with no usable fit (too few points, no spread, a
/// slope that is not positive) are returned with the reason instead.
pub fn fit_all(
    records: &[PositionRecord],
    pairs: &[DepthPair],
    max_abs: i32,
) -> (Vec<ParamRow>, Vec<(DepthPair, Stage, FitError)>) {
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for &pair in pairs {
        let points = pair_points(records, pair, max_abs);
        for stage in Stage::ALL {
            match fit_line(&fit_points(&points, stage)) {
                // The engine's bound formula divides by a; a <= 0 means no correlation to use.
                Ok(fit) if fit.a <= 0.0 => {
                    missing.push((pair, stage, FitError::NonPositiveSlope(fit.a)))
                }
                Ok(fit) => rows.push(ParamRow::new(stage, pair, &fit)),
                Err(e) => missing.push((pair, stage, e)),
            }
        }
    }
    (rows, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse_and_reject() {
        let p = parse_pairs("2:6, 3:7,4:8,3:9,4:10,2:6").unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(p[4], DepthPair { shallow: 4, deep: 10 });
        assert_eq!(needed_depths(&p), [2, 3, 4, 6, 7, 8, 9, 10]);
        for bad in ["", "4", "4:4", "5:3", "0:2", "a:3", "3:x"] {
            assert!(parse_pairs(bad).is_err(), "{bad}");
        }
    }

    fn rec(index: usize, stage: Stage, scores: &[(u32, Eval)]) -> PositionRecord {
        PositionRecord {
            index,
            fen: String::new(),
            stage,
            scores: scores.to_vec(),
            nodes: None,
            wall_ms: 0,
            fault: None,
        }
    }

    #[test]
    fn points_exclude_mates_and_large_shallow_scores() {
        use Eval::{Cp, Mate};
        let recs = vec![
            rec(0, Stage::Middlegame, &[(1, Cp(10)), (2, Cp(20))]),
            rec(1, Stage::Middlegame, &[(1, Cp(400)), (2, Cp(500))]),
            rec(2, Stage::Middlegame, &[(1, Cp(100)), (2, Mate(3))]),
            rec(3, Stage::Endgame, &[(1, Cp(-50)), (2, Cp(-70))]),
            rec(4, Stage::Endgame, &[(1, Cp(-50))]),
        ];
        let pair = DepthPair { shallow: 1, deep: 2 };
        let pts = pair_points(&recs, pair, 300);
        assert_eq!(pts.len(), 4);
        assert_eq!(pts.iter().filter(|p| p.used).count(), 2);
        assert_eq!(fit_points(&pts, Stage::Middlegame), [(10.0, 20.0)]);
        assert_eq!(fit_points(&pts, Stage::Endgame), [(-50.0, -70.0)]);
        let (rows, missing) = fit_all(&recs, &[pair], 300);
        assert!(rows.is_empty());
        assert_eq!(missing.len(), 2);
    }

    #[test]
    fn fits_per_stage_and_refuses_negative_slopes() {
        use Eval::Cp;
        let mut recs: Vec<PositionRecord> = (0..10)
            .map(|i| {
                rec(i, Stage::Middlegame, &[(1, Cp(i as i32 * 10)), (3, Cp(i as i32 * 20 + 5))])
            })
            .collect();
        recs.extend((0..10).map(|i| {
            rec(10 + i, Stage::Endgame, &[(1, Cp(i as i32 * 10)), (3, Cp(-(i as i32) * 10))])
        }));
        let pair = DepthPair { shallow: 1, deep: 3 };
        let (rows, missing) = fit_all(&recs, &[pair], 300);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].stage, rows[0].a, rows[0].b, rows[0].n),
            (Stage::Middlegame, 2.0, 5.0, 10)
        );
        assert!(matches!(missing[..], [(_, Stage::Endgame, FitError::NonPositiveSlope(_))]));
    }

    #[test]
    fn rows_serialize_in_the_engine_format() {
        let fit = LinearFit { a: 1.023456, b: -2.3649, sigma: 81.996, r: 0.8234, n: 1200 };
        let row = ParamRow::new(Stage::Endgame, DepthPair { shallow: 4, deep: 8 }, &fit);
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(
            json,
            r#"{"stage":"endgame","shallow":4,"deep":8,"a":1.0235,"b":-2.36,"sigma":82.0,"r":0.823,"n":1200}"#
        );
        let rec = rec(3, Stage::Middlegame, &[(1, Eval::Cp(5)), (2, Eval::Mate(-2))]);
        let line = serde_json::to_string(&rec).unwrap();
        assert_eq!(serde_json::from_str::<PositionRecord>(&line).unwrap(), rec);
    }
}
