//! Subcommands.

pub mod approve;
pub mod book;
pub mod calibrate;
pub mod cancel;
pub mod db;
pub mod fastchess;
pub mod match_cmd;
pub mod merge;
pub mod pull;
pub mod purge;
pub mod report;
pub mod searchtest;
pub mod stats;
pub mod status;
pub mod submit;
pub mod sweep;
pub mod tune;
pub mod worker;
pub mod worker_key;
