//! `runner calibrate`: fits the Multi-ProbCut model `v = a * v' + b + e` (seed 000) per depth
//! pair and game stage from an engine's shallow and deep search scores, and draws test positions
//! from self-play games. The driver, probe and pool modules are shared with `runner searchtest`.

pub mod fit;
pub mod pairs;
pub mod plot;
pub mod pool;
pub mod positions;
pub mod probe;
pub mod progress;
pub mod run;
pub mod table;
pub mod uci_child;
