//! The files of a sweep: `sweep.json` ([`SweepPlan`]), its `summary.json` ([`SweepSummary`]:
//! the runner's keys and the analysis, the fitted [`Surface`] included) and each point's
//! `points/<label>/summary.json` ([`PointRow`]). The work on these types (building the plan,
//! analysing, fitting) is in `sweep/`, in `impl` blocks beside that work.

use serde::{Deserialize, Serialize};
use stats::{SprtSpec, Summary};

use super::run::RunSummary;
use crate::plan::engine_spec::EngineSpec;
use crate::plan::openings::BookOrder;
use crate::plan::run_plan::BookInfo;

/// File name of the sweep plan in the results directory.
pub const SWEEP_FILE: &str = "sweep.json";

/// `sweep.json`: everything specific to a sweep (the runner's `run.json` holds the rest).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    pub params: Vec<SweptParam>,
    /// `--fixed NAME=VALUE`, applied to the swept engine at every point (not to the baseline).
    pub fixed: Vec<(String, String)>,
    pub points: Vec<Point>,
    /// The swept engine before `--fixed` and the point's values.
    pub engine: EngineSpec,
    pub baseline: EngineSpec,
    /// `--adaptive` racing settings.
    pub race: Option<RaceConfig>,
    /// Family-wise level of the table's "significant" column.
    pub alpha: f64,
    pub draws_floor: Option<f64>,
    pub sprt: Option<SprtSpec>,
}

impl SweepPlan {
    /// The fields of `other` that differ from this plan's, by name (what a resume or a merge
    /// that refuses a different sweep says). A new field is a compile error here until listed.
    pub fn changed_fields(&self, other: &SweepPlan) -> Vec<&'static str> {
        let SweepPlan { params, fixed, points, engine, baseline, race, alpha, draws_floor, sprt } =
            self;
        let changed = [
            ("params", *params != other.params),
            ("fixed", *fixed != other.fixed),
            ("points", *points != other.points),
            ("engine", *engine != other.engine),
            ("baseline", *baseline != other.baseline),
            ("race", *race != other.race),
            ("alpha", *alpha != other.alpha),
            ("draws_floor", *draws_floor != other.draws_floor),
            ("sprt", *sprt != other.sprt),
        ];
        changed.into_iter().filter(|(_, c)| *c).map(|(name, _)| name).collect()
    }
}

/// One swept parameter and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweptParam {
    pub name: String,
    pub values: Vec<String>,
}

/// One point of the sweep: a value for every swept parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// `(parameter, value)` in the order of the `--param` flags.
    pub assignments: Vec<(String, String)>,
}

/// Racing settings (`--adaptive`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaceConfig {
    /// Family-wise level of each look's comparisons.
    pub alpha: f64,
    /// Pairs a point needs before it is compared.
    pub min_pairs: u64,
}

/// `summary.json` of a sweep: the runner's keys ([`RunSummary`], at the top level so tools
/// reading a match summary read a sweep's too) and the sweep's analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// Always `sweep`.
    pub kind: String,
    /// What was compared.
    pub context: SweepContext,
    /// The swept parameters' names.
    pub params: Vec<String>,
    pub options: AnalysisOptions,
    pub best: Option<BestPoint>,
    /// One row per point.
    pub points: Vec<PointRow>,
    /// The fitted quadratic (`null` when not fitted).
    pub surface: Option<Surface>,
    #[serde(flatten)]
    pub run: RunSummary,
}

/// A sweep summary's `context`: the engines, what every point shares, and the run's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepContext {
    pub engine: EngineSpec,
    pub baseline: EngineSpec,
    pub fixed: Vec<(String, String)>,
    /// The time control as written on the command line (`nodes=2000`, `tc=10+0.1`).
    pub tc: String,
    pub book: BookInfo,
    pub book_order: BookOrder,
    pub seed: u64,
    pub games_per_point: usize,
    pub sprt: Option<SprtSpec>,
    /// The racing settings (`--adaptive`).
    pub adaptive: Option<RaceConfig>,
    pub draws_floor: Option<f64>,
}

/// Settings of a sweep's analysis.
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
    /// Still getting games.
    Active,
    /// Had no decision of its own when the run ended (every scheduled game played, the run's
    /// SPRT decided, or the run was cancelled) after this many games.
    Ended { after_games: u64 },
    /// Dropped by racing (`--adaptive`): `best` is the label of the best point at that time.
    Dropped { after_games: u64, best: String, z: f64 },
    /// Its SPRT reached a decision after this many games.
    Decided { after_games: u64 },
}

/// One point of a sweep: a row of its table, an entry of summary.json's `points`, and the whole
/// of `points/<label>/summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    pub label: String,
    pub assignments: Vec<(String, String)>,
    pub summary: Summary,
    /// One-sided draw-aware test "better than the baseline", after Holm across all points.
    pub significant: bool,
    /// Probability of being the best point (normal approximation, `sweep::best`).
    pub p_best: Option<f64>,
    pub status: PointStatus,
}

/// A sweep's best point and how sure the sweep is of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestPoint {
    pub label: String,
    pub index: usize,
    pub score: f64,
    pub elo: Option<f64>,
    pub elo_ci: Option<[f64; 2]>,
    /// `None` while a point has fewer than `crate::report::figures::MIN_PAIRS` pairs, or with one
    /// point.
    pub p_best: Option<f64>,
    /// The fewest complete pairs of any point played.
    pub fewest_pairs: u64,
    pub method: String,
}

/// A location: one value, or a pair for a grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Loc {
    One(f64),
    Two([f64; 2]),
}

/// An interval: two numbers, or one pair per coordinate for a grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Interval {
    One([f64; 2]),
    Two([[f64; 2]; 2]),
}

/// What came of the fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// An optimum inside the range, with its interval.
    Ok,
    /// No fit: too few points, values not numbers, more than two parameters...
    Absent,
    /// The points scatter about the quadratic more than their errors allow.
    PoorFit,
    /// The fitted curve has no maximum (convex, flat, or a saddle).
    NoMaximum,
    /// The optimum or its interval leaves the swept range.
    NotBracketed,
}

/// Goodness of fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitQuality {
    pub points: usize,
    pub chi2: f64,
    pub dof: usize,
    /// `None` with zero degrees of freedom (the curve passes through every point).
    pub p_value: Option<f64>,
}

/// The `surface` entry of a sweep's summary.json (`sweep::surface` fits it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    pub model: String,
    pub status: Status,
    /// The optimum inside the swept range, or null (see `note`).
    pub optimum: Option<Loc>,
    /// Its 95 % interval, or null.
    pub ci: Option<Interval>,
    /// One sentence: the result or why there is none.
    pub note: String,
    /// How `ci` is computed.
    pub interval_method: String,
    /// The parameters, in the order of `optimum`'s coordinates.
    pub params: Vec<String>,
    /// `[centre, half_width]` per parameter (the scaled variables of the coefficients).
    pub scaling: Vec<[f64; 2]>,
    /// b0, b1, ... in the scaled variables.
    pub coefficients: Option<Vec<f64>>,
    pub fit: Option<FitQuality>,
    /// The fit's stationary maximum even when not reported as the optimum (null if none).
    pub estimate: Option<Loc>,
    /// The bootstrap quantiles as computed, null for an infinite end.
    pub draw_interval: Option<Vec<[Option<f64>; 2]>>,
    /// Fitted Elo at the optimum.
    pub elo_at_optimum: Option<f64>,
    pub draws: usize,
    /// Draws whose curve had no maximum.
    pub draws_without_maximum: usize,
    /// The optimum and interval in a few words, for the plot (empty unless `Ok`; not stored).
    #[serde(skip)]
    pub brief: String,
}
