//! From each point's counts to the sweep's table: a `stats::Summary` per point, significance
//! after Holm's correction across points, the SPRT verdict when asked, racing status, and the best
//! point with its probability of being best (see [`super::best`]).

use serde::{Deserialize, Serialize};

use stats::{Counts, Options, Penta, ScoreMoments, SprtSpec, Summary, Verdict, Wdl};

use super::best::{argmax, prob_best};
use super::racing::Dropped;
use super::values::Point;

/// The counts of one point, from the swept engine's view, over complete game pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointCounts {
    pub wdl: Wdl,
    pub penta: Penta,
}

/// Settings of the analysis.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisOptions {
    /// Family-wise level of the "significant" column (Holm across points).
    pub alpha: f64,
    /// Draws floor of the draw-aware test (the seed assumed 0.3); `None`: the observed ratio.
    pub draws_floor: Option<f64>,
    pub sprt: Option<SprtSpec>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions { alpha: 0.05, draws_floor: None, sprt: None }
    }
}

/// Where a point stands in the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum PointStatus {
    /// Still getting games (or the run ended at its game cap).
    Active,
    /// Dropped by racing (`--adaptive`): `best` is the label of the best point at that time.
    Dropped { after_games: u64, best: String, z: f64 },
    /// Its SPRT reached a decision after this many games.
    Decided { after_games: u64 },
}

impl PointStatus {
    pub fn from_dropped(d: &Dropped, labels: &[String]) -> PointStatus {
        PointStatus::Dropped {
            after_games: d.after_games,
            best: labels.get(d.best).cloned().unwrap_or_default(),
            z: d.z,
        }
    }

    /// Short text for tables: `dropped@48 (vs t_mid=0.9)`, `decided@300`, `active`.
    pub fn short(&self) -> String {
        match self {
            PointStatus::Active => "active".into(),
            PointStatus::Dropped { after_games, best, .. } => {
                format!("dropped@{after_games} (vs {best})")
            }
            PointStatus::Decided { after_games } => format!("decided@{after_games}"),
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct PointRow {
    pub label: String,
    pub assignments: Vec<(String, String)>,
    pub summary: Summary,
    /// One-sided draw-aware test "better than the baseline", after Holm across all points.
    pub significant: bool,
    /// Probability of being the best point (normal approximation, [`super::best`]).
    pub p_best: Option<f64>,
    pub status: PointStatus,
}

/// The best point and how sure we are.
#[derive(Clone, Debug, Serialize)]
pub struct BestPoint {
    pub label: String,
    pub index: usize,
    pub score: f64,
    pub elo: Option<f64>,
    pub p_best: f64,
    pub method: &'static str,
}

/// The whole table.
#[derive(Clone, Debug, Serialize)]
pub struct SweepAnalysis {
    /// Names of the swept parameters (the table's first columns).
    pub params: Vec<String>,
    pub rows: Vec<PointRow>,
    pub best: Option<BestPoint>,
    pub options: AnalysisOptions,
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
    let summaries = counts
        .iter()
        .map(|c| stats::summarize(&Counts::Paired { wdl: c.wdl, penta: c.penta }, &sopts))
        .collect::<Result<Vec<_>, _>>()?;
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
            ScoreMoments::from_penta(&counts[i].penta)
                .map(|m| (m.score, m.std_error))
                .unwrap_or((0.5, 0.0))
        })
        .collect();
    let pb = prob_best(&est);
    let mut p_best = vec![None; counts.len()];
    for (k, &i) in played.iter().enumerate() {
        p_best[i] = Some(pb[k]);
    }
    let best = argmax(&est.iter().map(|e| e.0).collect::<Vec<_>>()).map(|k| {
        let i = played[k];
        BestPoint {
            label: points[i].label(),
            index: i,
            score: est[k].0,
            elo: summaries[i].elo,
            p_best: pb[k],
            method: BEST_METHOD,
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
    Ok(SweepAnalysis { params: params.to_vec(), rows, best, options: *opts })
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
    fn rows_best_and_holm() {
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        assert_eq!(a.rows.len(), 3);
        assert_eq!(a.rows[0].summary.games, 64);
        let best = a.best.as_ref().unwrap();
        assert_eq!(best.label, "t_mid=0.9");
        assert!(best.p_best > 0.9 && best.p_best < 1.0, "{}", best.p_best);
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
}
