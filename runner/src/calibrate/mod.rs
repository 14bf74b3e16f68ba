//! `runner calibrate`: fits the Multi-ProbCut model `v = a * v' + b + e` (seed 000) per depth
//! pair and game stage from an engine's shallow and deep search scores. A tool: it drives engines
//! on positions (`crate::plan::positions`) through the probe driver (`crate::run::probes`) and
//! writes its own files; it uses `plan`, `play`, `report` and `run`.

pub mod pairs;
pub mod plot;
pub mod run;
pub mod table;
