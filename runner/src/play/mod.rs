//! The play layer: engines as UCI processes and what happens over the board (one UCI driver,
//! clocks, the game loop, adjudication (tablebases too), terminations, the worker pools for games and for
//! position probes, cancellation). Uses `plan` only.

pub mod adjudication;
pub mod affinity;
pub mod cancel;
pub mod clock;
pub mod game;
pub mod orphans;
pub mod pause;
pub mod probe;
pub mod probe_pool;
pub mod sandbox;
pub mod tablebase;
pub mod termination;
pub mod uci;
#[cfg(test)]
mod uci_fuzz;
pub mod uci_info;
pub mod uci_lines;
pub mod worker;
