//! Subcommands.

pub mod match_cmd;
pub mod stats;
