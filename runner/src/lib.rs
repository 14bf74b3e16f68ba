//! The match runner: plays timed games between UCI engines from an opening book, keeps every
//! finished game on disk, and computes match statistics with the `stats` crate.
//!
//! The core is a generic run: a list of [`schedule::Pairing`]s, a deterministic schedule of game
//! pairs ([`schedule::Schedule`]), a worker pool that plays them ([`worker`]) with per-engine
//! process pools, and a store keyed by pairing ([`store`]). `runner match` is one pairing.

pub mod adjudication;
pub mod book_gen;
pub mod calibrate;
pub mod cancel;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod engine_spec;
pub mod game;
pub mod gauntlet;
pub mod merge;
pub mod openings;
pub mod overhead;
pub mod pgn;
pub mod progress;
pub mod run;
pub mod schedule;
pub mod searchtest;
pub mod store;
pub mod summary;
pub mod sweep;
pub mod termination;
pub mod uci_info;
pub mod uci_process;
pub mod worker;
