//! The files a run or a tool writes, as types: every writer serializes these and every reader
//! (`--resume`, `runner report`, the run's page, `runner merge`, `runner pull`) deserializes
//! them, so renaming or retyping a field is a compile error in every place that uses it, never a
//! silent `n/a` on a page. Nothing here reads or writes a file; the methods of the types that do
//! work (a record's PGN, a summary's figures, a sweep's analysis, an SPSA step) live with that
//! work (`store`, `report`, `sweep`, `tune`, ...), in `impl` blocks of those layers.
//!
//! - [`run`]: `run.json` ([`RunFile`]), `games.jsonl` (one [`GameRecord`] a line), and
//!   `summary.json` of a match, tournament, tune, merge or pulled fleet run ([`RunSummary`]).
//! - [`sweep`]: `sweep.json` ([`SweepPlan`]), a sweep's `summary.json` ([`SweepSummary`], the
//!   same keys plus the sweep's) and `points/<label>/summary.json` ([`PointRow`]).
//! - [`tune`]: `tune.jsonl` ([`TuneLogLine`]) and `tune.json` ([`TuneFile`]).
//! - [`tools`]: `plan.json` and `summary.json` of `runner calibrate` and `runner searchtest`,
//!   and the search test's `oracle.json`.
//!
//! Optional keys are left out when absent, as the writers always did, so a file read and written
//! back is the file it was (the round trip `runner/tests/formats.rs` checks on real runs).

pub mod run;
pub mod sweep;
pub mod tools;
pub mod tune;

pub use run::*;
pub use sweep::*;
pub use tools::*;
pub use tune::*;
