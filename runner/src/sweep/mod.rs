//! Parameter sweeps (`runner sweep`): one engine, many values of one or more UCI options, each
//! point playing the same baseline over the same openings, points interleaved pair by pair.
//!
//! A sweep is a thin layer over the runner core: [`plan`] turns the points into engines and one
//! pairing per point, `crate::run` plays them (with a game hook under `--adaptive`), and the outputs
//! are computed from the store alone: [`tracker`] replays the stored games (counts per point,
//! racing and SPRT stops), [`analysis`] summarises every point with the `stats` crate and applies
//! Holm's correction and says which point is best and how sure we are, [`surface`] fits one
//! quadratic (in Elo) across the points and gives its optimum with a bootstrap interval, [`table`]
//! and [`plot`] render, [`report`] writes the files. `runner report DIR` runs the same path again.
//!
//! Files in the results directory, besides the runner's run.json, games.jsonl, games.pgn, logs/:
//! sweep.json (this plan), table.md, table.csv, summary.json (the runner's summary keys plus the
//! sweep's), plot.svg, points/<label>/summary.json.

pub mod analysis;
pub mod args;
pub mod plan;
pub mod plot;
pub mod racing;
pub mod report;
pub mod surface;
pub mod table;
pub mod tracker;
pub mod values;
