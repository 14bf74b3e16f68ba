//! The bundled UCI chess engine of the tuning harness: alpha-beta search with
//! Multi-ProbCut (Buro; Jiang & Buro's Crafty experiments) on top of cozy-chess.
//!
//! Files are named for what they hold: `search` (the tree search), `movepick`
//! (staged move ordering), `see` (static exchange), `eval` (evaluation),
//! `tt` (transposition table), `timeman` (clock), `mpc` and `mpc_params`
//! (Multi-ProbCut and its parameter files), `mpc_diag` (the arithmetic of its
//! diagnostic counters), `options` (every UCI knob),
//! `uci` (protocol loop), `bench` and `perft` (fixed workloads).

pub mod bench;
pub mod eval;
pub mod history;
pub mod movepick;
pub mod mpc;
pub mod mpc_diag;
pub mod mpc_params;
pub mod mpc_variant;
pub mod options;
pub mod perft;
pub mod position;
pub mod score;
pub mod search;
pub mod see;
pub mod timeman;
pub mod tt;
pub mod uci;
