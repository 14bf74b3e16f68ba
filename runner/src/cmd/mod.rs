//! Subcommands.

pub mod book;
pub mod match_cmd;
pub mod report;
pub mod stats;
pub mod sweep;
