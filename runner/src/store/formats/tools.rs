//! The files of the tools that search positions: `runner calibrate` (`plan.json`:
//! [`CalibratePlanFile`], `summary.json`: [`CalibrateSummary`]) and `runner searchtest`
//! (`plan.json`: [`SearchtestPlanFile`], `summary.json`: [`SearchtestSummary`], `oracle.json`:
//! [`OracleFile`]). The work that fills them is in `calibrate/` and `searchtest/`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use stats::sample::{MeanInterval, PairedTest, Proportion};

use crate::plan::engine_spec::EngineSpec;
use crate::plan::positions::Stage;
use crate::play::probe::{Limit, ScoreMode};

/// `plan.json` of `runner calibrate`: what is compared on resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibratePlanFile {
    pub engine: EngineSpec,
    pub positions_file: String,
    pub positions: usize,
    pub positions_sha256: String,
    pub depths: Vec<u32>,
    pub mode: ScoreMode,
}

/// `plan.json` of `runner searchtest`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchtestPlanFile {
    pub engine: EngineSpec,
    pub variants: Vec<SearchVariant>,
    pub positions_file: String,
    pub positions: usize,
    pub limit: Limit,
    pub concurrency: usize,
    /// The oracle, if one scores the moves.
    pub oracle: Option<OracleSpec>,
}

/// A search test's variant: a named set of UCI option values (`searchtest::variant`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchVariant {
    pub name: String,
    pub options: Vec<(String, String)>,
    /// This variant's own limit instead of the test's (e.g. half the node budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

/// `summary.json` of `runner calibrate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrateSummary {
    pub engine: EngineSpec,
    pub positions_file: String,
    pub positions: usize,
    pub searched: usize,
    pub searched_middlegame: usize,
    pub searched_endgame: usize,
    pub faults: usize,
    /// Stopped before every position was searched.
    pub partial: bool,
    pub mode: ScoreMode,
    /// What each depth pair's fit used.
    pub pairs: Vec<CalibratePair>,
    pub max_abs: i32,
    pub elapsed_s: f64,
    /// The fitted parameters.
    pub rows: Vec<ParamRow>,
    /// `pair stage: why`, per fit that failed.
    pub not_fitted: Vec<String>,
}

/// `summary.json` of `runner searchtest`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchtestSummary {
    pub engine: EngineSpec,
    pub limit: Limit,
    pub positions_file: String,
    pub positions: usize,
    pub searches: usize,
    pub faults: usize,
    /// Stopped before every position was searched by every variant.
    pub partial: bool,
    /// Per variant, over every position searched by all of them.
    pub variants: Vec<VariantSummary>,
    /// The same per stage of the positions (`middlegame`, `endgame`).
    pub by_stage: BTreeMap<String, Vec<VariantSummary>>,
    /// The oracle's figures, as in oracle.json (`null` without an oracle).
    pub oracle: Option<OracleFile>,
    /// Solve rates of EPD `bm`/`am` (`null` without them).
    pub suite: Option<Vec<SolveRow>>,
}

/// The summary of one variant of a search test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantSummary {
    pub name: String,
    pub options: Vec<(String, String)>,
    /// Positions in the summary: those every variant searched without a fault.
    pub positions: usize,
    pub faults: usize,
    pub depth_mean: Option<f64>,
    pub depth_median: Option<f64>,
    pub nodes_mean: Option<f64>,
    pub nodes_median: Option<f64>,
    pub nodes_sd: Option<f64>,
    pub time_ms_mean: Option<f64>,
    /// Total nodes / total wall time.
    pub nps: Option<f64>,
    /// Positions compared with the first variant (equal to `positions`).
    pub paired: usize,
    /// Mean depth minus the first variant's, over paired positions.
    pub depth_gain: Option<f64>,
    /// First variant's total nodes / this variant's, over paired positions.
    pub speedup: Option<f64>,
    pub same_move_pct: Option<f64>,
    pub same_value_pct: Option<f64>,
    /// Sums of the `info string mpc` counters.
    pub mpc: BTreeMap<String, u64>,
}

/// One depth pair of [`CalibrateSummary`]: the observations it had and how many the fit used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibratePair {
    /// `shallow->deep`.
    pub pair: String,
    pub observations: usize,
    pub used: usize,
    pub mate_scores: usize,
    pub beyond_max_abs: usize,
}

/// A row of params.json, as the engine's `MPCParams` loader reads it (also calibrate's
/// summary.json `rows`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamRow {
    pub stage: Stage,
    pub shallow: u32,
    pub deep: u32,
    pub a: f64,
    pub b: f64,
    pub sigma: f64,
    pub r: f64,
    pub n: usize,
}

/// The oracle of a search test: an engine and its limit (`--oracle`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OracleSpec {
    pub engine: EngineSpec,
    pub limit: Limit,
}

/// `oracle.json` of a search test (also its summary.json's `oracle`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OracleFile {
    pub oracle: OracleSpec,
    pub run: OracleRun,
    /// How the oracle's scores map to bounded centipawns, in words.
    pub mate_mapping: String,
    pub summary: LossSummary,
    /// The same per stage (`middlegame`, `endgame`).
    pub by_stage: BTreeMap<String, LossSummary>,
}

/// What the oracle phase did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OracleRun {
    pub oracle: String,
    pub id_name: Option<String>,
    pub cache_file: String,
    /// Searches the run needed, found in the cache, and run now.
    pub needed: usize,
    pub cached: usize,
    pub searched: usize,
    pub faults: usize,
    /// Chosen moves left unscored: illegal or missing moves, or an oracle fault.
    pub unscored: usize,
    pub wall_ms: u64,
}

/// The oracle figures of one set of scored moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossSummary {
    pub variants: Vec<LossRow>,
    pub pairs: Vec<PairRow>,
}

/// One variant's oracle figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossRow {
    pub name: String,
    pub scored: usize,
    /// Mean loss in centipawns.
    pub loss: Option<MeanInterval>,
    /// Mean loss in expected score (percentage points).
    pub es_loss: Option<MeanInterval>,
    /// Share of positions where the variant chose the oracle's best move.
    pub best_move: Option<Proportion>,
    /// One-move searches that scored the chosen move above the oracle's best (loss set to 0).
    pub negative_raw: usize,
}

/// The paired difference `loss(a) - loss(b)` over the positions both were scored on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairRow {
    pub a: String,
    pub b: String,
    pub positions: usize,
    pub test: Option<PairedTest>,
    /// The same in expected score (percentage points).
    pub es_test: Option<PairedTest>,
}

/// One variant's solve rate over the suite positions it searched (EPD `bm`/`am`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolveRow {
    pub name: String,
    pub positions: usize,
    pub solved: usize,
    pub rate: Option<Proportion>,
}
