//! The match runner: plays timed games between UCI engines from an opening book, keeps every
//! finished game on disk, and computes match statistics with the `stats` crate.
//!
//! The folders are the layers of a run, lowest first, data flowing one way (the diagram in
//! runner/README.md, the `LAYERS` table of runner/tests/layers.rs): [`out`] (printing that
//! never panics), [`exit`] (the exit codes) and [`state`] (a run's state in people's words) -> [`plan`] (what to play) -> [`play`] (engines and games) -> [`cli`]
//! (argument groups) -> [`store`] (the results directory) -> [`report`] (summaries for people)
//! -> [`run`] (the core that executes a plan through them) -> experiments ([`sweep`],
//! [`gauntlet`], [`tune`]) and tools ([`calibrate`], [`searchtest`], [`book`], [`fastchess`]) -> [`fleet`] (one
//! run played by many machines through PostgreSQL) -> [`serve`] (the HTTP server of every
//! run's page) -> [`cmd`] (one file per subcommand). A layer
//! may use any layer before it, never one after it.

#[macro_use]
pub mod out;

pub mod book;
pub mod calibrate;
pub mod cli;
pub mod cmd;
pub mod exit;
pub mod fastchess;
pub mod fleet;
pub mod gauntlet;
pub mod hex;
pub mod plan;
pub mod play;
pub mod report;
pub mod run;
pub mod searchtest;
pub mod serve;
pub mod state;
pub mod store;
pub mod sweep;
pub mod tune;
