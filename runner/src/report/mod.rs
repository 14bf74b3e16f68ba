//! The report layer: what a run's stored games say, for people (per-pairing summaries and
//! summary.json, the runner's overhead figures, progress displays, a match's table and plot, the
//! run's HTML page). Uses `plan`, `play` (game facts such as results and terminations) and
//! `store` (the records).

pub mod figures;
pub mod html;
pub mod match_files;
pub mod match_plot;
pub mod match_table;
pub mod overhead;
pub mod progress;
pub mod same_moves;
pub mod script_lines;
pub mod summary;
pub mod warnings;
