//! The report layer: what a run's stored games say, for people (per-pairing summaries and
//! summary.json, the runner's overhead figures, progress displays). Uses `plan`, `play` (game
//! facts such as results and terminations) and `store` (the records).

pub mod counter;
pub mod overhead;
pub mod progress;
pub mod summary;
pub mod warnings;
