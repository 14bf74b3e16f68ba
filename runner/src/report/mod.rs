//! The report layer: what a run's stored games say, for people (per-pairing summaries and
//! summary.json, the runner's overhead figures, progress displays, the run's HTML page). Uses `plan`, `play` (game
//! facts such as results and terminations) and `store` (the records).

pub mod counter;
pub mod html;
pub mod overhead;
pub mod progress;
pub mod summary;
pub mod warnings;
