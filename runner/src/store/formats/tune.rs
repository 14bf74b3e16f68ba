//! The files of a tuning run (`runner tune`): `tune.jsonl` (one [`TuneLogLine`] a line: the
//! settings, then each iteration as it starts) and `tune.json` ([`TuneFile`]: the final values
//! and every applied update). The SPSA arithmetic on these types is in `tune/spsa.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One tuned parameter (`--param name,start,min,max,c_end,r_end`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneParam {
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// Perturbation size at the last iteration.
    pub c_end: f64,
    /// Learning rate at the last iteration (fishtest: a_end = r_end * c_end^2).
    pub r_end: f64,
}

/// A tuning run's fixed settings (the first line of tune.jsonl; resume checks it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spsa {
    pub params: Vec<TuneParam>,
    /// Per parameter: an integer option (`type spin`), rounded stochastically when played.
    pub integer: Vec<bool>,
    /// Planned iterations N (game pairs).
    pub iterations: u64,
    /// fishtest's A.
    pub big_a: f64,
    pub seed: u64,
}

/// What iteration `k` plays: fixed when it starts, logged before its games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub k: u64,
    /// theta when the iteration started.
    pub theta: Vec<f64>,
    /// +1 or -1 per parameter.
    pub delta: Vec<i8>,
    /// The values the plus and the minus engine play with (clamped, integers rounded).
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
    pub c_k: Vec<f64>,
    pub a_k: Vec<f64>,
}

/// One line of `tune.jsonl`: `{"plan": ...}` first, then `{"start": ...}` per iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TuneLogLine {
    Plan(Spsa),
    Start(Iteration),
}

/// Values by parameter name (JSON objects keep their keys sorted).
pub type ByName = BTreeMap<String, f64>;

/// `tune.json`: where the tuning ended and how it got there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneFile {
    /// theta at the end.
    pub values: ByName,
    /// Updates applied.
    pub iterations: usize,
    pub planned_iterations: u64,
    pub games: usize,
    pub stopped_by: String,
    pub spsa: Spsa,
    /// Every applied update, in order.
    pub history: Vec<TuneStep>,
}

/// One applied update of [`TuneFile`]'s history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneStep {
    pub k: u64,
    /// Games of the run once this pair was finished.
    pub games: u64,
    /// theta after the update.
    pub theta: ByName,
    pub c_k: ByName,
    pub a_k: ByName,
    pub result: f64,
}
