//! The plan layer: what a run or a tool will do, decided before any engine starts (engine specs
//! and engines.toml, time controls, openings and test positions, schedule, shards, tournaments,
//! adjudication rules, the RunPlan and its hash). Pure data and parsing: uses no other layer.

pub mod adjudication;
pub mod engine_spec;
pub mod engines;
pub mod epd_ops;
pub mod limits;
pub mod names;
pub mod openings;
pub mod pgn_book;
pub mod positions;
pub mod run_plan;
pub mod schedule;
pub mod time_control;
pub mod tournament;
pub mod variant;
