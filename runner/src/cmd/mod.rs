//! Subcommands.

pub mod book;
pub mod calibrate;
pub mod match_cmd;
pub mod merge;
pub mod report;
pub mod searchtest;
pub mod stats;
pub mod sweep;
pub mod tune;
pub mod worker;
