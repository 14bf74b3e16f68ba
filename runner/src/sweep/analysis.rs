//! From each point's counts to the sweep's table: a `stats::Summary` per point, significance
//! after Holm's correction across points, the SPRT verdict when asked, racing status, and the best
//! point (the highest estimated score) with its probability of being best
//! (`stats::selection::prob_best`, which says how it is computed and its caveats).

use serde::{Deserialize, Serialize};

use stats::selection::prob_best;
use stats::{Counts, Options, Penta, ScoreMoments, Summary, Verdict, Wdl};

use crate::report::figures::too_few;
use crate::report::summary::summarize_or_na;

use super::racing::Dropped;
use super::surface::Surface;
use super::values::Point;

/// Index of the highest mean (the first one on ties).
fn argmax(means: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &m) in means.iter().enumerate() {
        if best.is_none_or(|b| m > means[b]) {
            best = Some(i);
        }
    }
    best
}

/// The counts of one point, from the swept engine's view, over complete game pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointCounts {
    pub wdl: Wdl,
    pub penta: Penta,
}

/// The analysis settings and each point's status (summary.json `options`, `points[].status`).
pub use crate::store::formats::{AnalysisOptions, PointStatus};

impl PointStatus {
    pub fn from_dropped(d: &Dropped, labels: &[String]) -> PointStatus {
        PointStatus::Dropped {
            after_games: d.after_games,
            best: labels.get(d.best).cloned().unwrap_or_default(),
            z: d.z,
        }
    }

    /// Short text for tables: `dropped@48 (vs t_mid=0.9)`, `decided@300`, `ended@64`, `active`.
    pub fn short(&self) -> String {
        match self {
            PointStatus::Active => "active".into(),
            PointStatus::Ended { after_games } => format!("ended@{after_games}"),
            PointStatus::Dropped { after_games, best, .. } => {
                format!("dropped@{after_games} (vs {best})")
            }
            PointStatus::Decided { after_games } => format!("decided@{after_games}"),
        }
    }

    /// A point's own decision: dropped by racing or decided by its SPRT.
    pub fn is_decision(&self) -> bool {
        matches!(self, PointStatus::Dropped { .. } | PointStatus::Decided { .. })
    }

    /// The status once the run has ended after `games` of this point: an open point is `Ended`.
    pub fn at_end(&self, games: u64) -> PointStatus {
        match self {
            PointStatus::Active => PointStatus::Ended { after_games: games },
            other => other.clone(),
        }
    }
}

/// One row of the table (summary.json `points`, points/<label>/summary.json).
pub use crate::store::formats::PointRow;

/// The best point and how sure we are (summary.json `best`).
pub use crate::store::formats::BestPoint;

/// The whole table.
#[derive(Clone, Debug, Serialize)]
pub struct SweepAnalysis {
    /// Names of the swept parameters (the table's first columns).
    pub params: Vec<String>,
    pub rows: Vec<PointRow>,
    pub best: Option<BestPoint>,
    pub options: AnalysisOptions,
    /// Statistics that could not be computed, one line per point (shown as n/a).
    pub problems: Vec<String>,
    /// The quadratic fitted across the points ([`super::surface`]); set by the report, which
    /// knows the run's seed (`None` straight from [`analyze`]).
    pub surface: Option<Surface>,
}

pub const BEST_METHOD: &str = "normal approximation: P(point has the highest true score), each \
     point's score ~ N(mean, std. error^2) from its pair scores, points treated as independent";

/// Builds the table. `points`, `counts` and `status` are parallel (one entry per point).
pub fn analyze(
    params: &[String],
    points: &[Point],
    counts: &[PointCounts],
    status: &[PointStatus],
    opts: &AnalysisOptions,
) -> Result<SweepAnalysis, stats::StatsError> {
    let sopts = Options { draws_floor: opts.draws_floor, sprt: opts.sprt, alpha: opts.alpha };
    let mut problems = Vec::new();
    let summaries: Vec<Summary> = counts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let counts = Counts::Paired { wdl: c.wdl, penta: c.penta };
            let (s, why) = summarize_or_na(&counts, &sopts, stats::summarize);
            if let Some(why) = why {
                problems.push(format!(
                    "{}: {why}",
                    points.get(i).map(Point::label).unwrap_or_default()
                ));
            }
            s
        })
        .collect();
    // Holm over the points that have a p-value (points without games, or whose variance is
    // zero, are not tests and do not enlarge the family).
    let tested: Vec<usize> =
        (0..summaries.len()).filter(|&i| summaries[i].p_value.is_some()).collect();
    let p_values: Vec<f64> = tested.iter().map(|&i| summaries[i].p_value.unwrap_or(1.0)).collect();
    let mut significant = vec![false; summaries.len()];
    for (k, sig) in stats::holm(&p_values, opts.alpha).into_iter().enumerate() {
        significant[tested[k]] = sig;
    }

    let played: Vec<usize> = (0..counts.len()).filter(|&i| counts[i].penta.pairs() > 0).collect();
    let est: Vec<(f64, f64)> = played
        .iter()
        .map(|&i| {
            let n = counts[i].penta.pairs();
            ScoreMoments::from_penta(&counts[i].penta)
                .map(|m| (m.score, m.std_error.max(min_std_error(n))))
                .unwrap_or((0.5, 0.0))
        })
        .collect();
    // P(best) needs two points and enough pairs at each (see `crate::report::figures`).
    let fewest = played.iter().map(|&i| counts[i].penta.pairs()).min().unwrap_or(0);
    let pb = (played.len() >= 2 && !too_few(fewest)).then(|| prob_best(&est));
    let mut p_best = vec![None; counts.len()];
    if let Some(pb) = &pb {
        for (k, &i) in played.iter().enumerate() {
            p_best[i] = Some(pb[k]);
        }
    }
    let best = argmax(&est.iter().map(|e| e.0).collect::<Vec<_>>()).map(|k| {
        let i = played[k];
        BestPoint {
            label: points[i].label(),
            index: i,
            score: est[k].0,
            elo: summaries[i].elo,
            elo_ci: summaries[i].elo_ci,
            p_best: pb.as_ref().map(|pb| pb[k]),
            fewest_pairs: fewest,
            method: BEST_METHOD.into(),
        }
    });

    let rows = points
        .iter()
        .zip(summaries)
        .enumerate()
        .map(|(i, (pt, summary))| PointRow {
            label: pt.label(),
            assignments: pt.assignments.clone(),
            summary,
            significant: significant[i],
            p_best: p_best[i],
            status: status.get(i).cloned().unwrap_or(PointStatus::Active),
        })
        .collect();
    Ok(SweepAnalysis {
        params: params.to_vec(),
        rows,
        best,
        options: *opts,
        problems,
        surface: None,
    })
}

/// The smallest standard error P(best) gives a point with `n` complete pairs: that of `n` pair
/// scores of which one differs from the others by a quarter point (the smallest step). A point
/// whose pairs all scored the same has an observed error of zero, which would make it "certainly"
/// best or worst; with this floor it is as uncertain as the least spread it could have shown.
pub fn min_std_error(n: u64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let n = n as f64;
    // n values, one of them 0.25 away: variance 0.25^2 (n - 1) / n^2, error sqrt(variance / n).
    0.25 * (n - 1.0).sqrt() / n.powf(1.5)
}

/// The SPRT verdict of a row, if an SPRT was asked for.
pub fn verdict(row: &PointRow) -> Option<Verdict> {
    row.summary.sprt.as_ref().map(|s| s.verdict)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn counts(penta: Penta) -> PointCounts {
        // Spread the pairs into games: ld = one loss one draw, dd = two draws, etc.
        let wdl = Wdl {
            wins: penta.wd + 2 * penta.ww,
            draws: penta.ld + 2 * penta.dd + penta.wd,
            losses: 2 * penta.ll + penta.ld,
        };
        PointCounts { wdl, penta }
    }

    pub fn sample() -> (Vec<String>, Vec<Point>, Vec<PointCounts>) {
        let pt = |v: &str| Point { assignments: vec![("t_mid".into(), v.into())] };
        let points = vec![pt("0.8"), pt("0.9"), pt("1.0")];
        let c = vec![
            counts(Penta { ll: 2, ld: 6, dd: 12, wd: 8, ww: 4 }),
            counts(Penta { ll: 0, ld: 2, dd: 10, wd: 12, ww: 8 }),
            counts(Penta { ll: 0, ld: 0, dd: 0, wd: 0, ww: 0 }),
        ];
        (vec!["t_mid".into()], points, c)
    }

    #[test]
    fn argmax_takes_the_first_of_ties() {
        assert_eq!(argmax(&[0.1, 0.3, 0.3]), Some(1));
        assert_eq!(argmax(&[]), None);
    }

    #[test]
    fn rows_best_and_holm() {
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        assert_eq!(a.rows.len(), 3);
        assert_eq!(a.rows[0].summary.games, 64);
        let best = a.best.as_ref().unwrap();
        assert_eq!(best.label, "t_mid=0.9");
        let pb = best.p_best.unwrap();
        assert!(pb > 0.9 && pb < 1.0, "{pb}");
        // The empty point has no p_best, is not significant, and its figures are n/a.
        assert_eq!(a.rows[2].p_best, None);
        assert!(!a.rows[2].significant);
        assert_eq!(a.rows[2].summary.elo, None);
        // 0.9 scores 47/64 = 73 %: significant even after Holm; p-values are corrected jointly.
        assert!(a.rows[1].significant);
        // Holm runs over the two points with games only.
        let ps: Vec<f64> = a.rows[..2].iter().map(|r| r.summary.p_value.unwrap()).collect();
        let mut want = stats::holm(&ps, 0.05);
        want.push(false);
        assert_eq!(a.rows.iter().map(|r| r.significant).collect::<Vec<_>>(), want);
    }

    #[test]
    fn holm_is_stricter_than_single_tests() {
        // Two identical points each significant alone at 5 % but not after Holm's step-down.
        let pt = |v: &str| Point { assignments: vec![("x".into(), v.into())] };
        let p = Penta { ll: 1, ld: 5, dd: 12, wd: 10, ww: 4 };
        let single =
            stats::summarize(&Counts::Paired { wdl: counts(p).wdl, penta: p }, &Options::default())
                .unwrap()
                .p_value
                .unwrap();
        let n = 4;
        let pts: Vec<Point> = (0..n).map(|i| pt(&i.to_string())).collect();
        let a = analyze(&["x".into()], &pts, &vec![counts(p); n], &[], &AnalysisOptions::default())
            .unwrap();
        assert!(single < 0.05 && single >= 0.05 / n as f64, "pick counts in range: p = {single}");
        assert!(a.rows.iter().all(|r| !r.significant), "p = {single}");
    }

    #[test]
    fn two_games_per_point_are_not_certain() {
        // One pair each: a clear "winner" on two games; P(best) is not given below MIN_PAIRS.
        let pt = |v: &str| Point { assignments: vec![("x".into(), v.into())] };
        let c = vec![
            counts(Penta { ll: 0, ld: 0, dd: 0, wd: 0, ww: 1 }),
            counts(Penta { ll: 1, ld: 0, dd: 0, wd: 0, ww: 0 }),
        ];
        let a = analyze(&["x".into()], &[pt("1"), pt("2")], &c, &[], &AnalysisOptions::default())
            .unwrap();
        assert!(a.rows.iter().all(|r| r.p_best.is_none()));
        let best = a.best.unwrap();
        assert_eq!((best.label.as_str(), best.p_best, best.fewest_pairs), ("x=1", None, 1));
    }

    #[test]
    fn zero_spread_points_are_not_certainly_best() {
        // Ten pairs each, every pair of point 0 drawn both ways (score 50 %, no spread) and
        // point 1 a little better with spread: P(best) stays away from 0 and 1.
        let pt = |v: &str| Point { assignments: vec![("x".into(), v.into())] };
        let c = vec![
            counts(Penta { ll: 0, ld: 0, dd: 10, wd: 0, ww: 0 }),
            counts(Penta { ll: 0, ld: 1, dd: 7, wd: 2, ww: 0 }),
        ];
        let a = analyze(&["x".into()], &[pt("1"), pt("2")], &c, &[], &AnalysisOptions::default())
            .unwrap();
        let p0 = a.rows[0].p_best.unwrap();
        assert!(p0 > 0.05 && p0 < 0.5, "{p0}");
        // The floor: one of n pair scores a quarter point off.
        assert_eq!(min_std_error(1), 0.0);
        let n = 10.0f64;
        let var = (9.0 * (0.025f64).powi(2) + (0.225f64).powi(2)) / n;
        assert!((min_std_error(10) - (var / n).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_statistics_failure_is_n_a_not_an_error() {
        // stats::summarize refuses the options (a draws floor above 1); the analysis
        // still has every row, with the counts kept, the figures n/a and the reason listed.
        let (params, points, c) = sample();
        let opts = AnalysisOptions { draws_floor: Some(1.5), ..AnalysisOptions::default() };
        let a = analyze(&params, &points, &c, &[], &opts).expect("never an error");
        assert_eq!(a.rows.len(), 3);
        assert_eq!(a.rows[0].summary.games, 64);
        assert!(a.rows.iter().all(|r| r.summary.score.is_none() && !r.significant));
        assert_eq!(a.problems.len(), 3, "{:?}", a.problems);
        assert!(a.problems[0].starts_with("t_mid=0.8: statistics n/a: "), "{:?}", a.problems);
    }
}
