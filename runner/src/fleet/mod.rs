//! The fleet: many machines play one run through PostgreSQL and stop together (issue 26). A run
//! is submitted once (`runner submit`: the plan checked as a local run checks it, then stored
//! with its openings and the engines' identities), its game pairs are claimed, played and
//! reported by workers on any machine (`runner worker`), and pulled back into an ordinary
//! results folder (`runner pull`).
//!
//! Layer: above the experiments (`sweep`, `gauntlet`, `tune`) and the run core, whose plan
//! builders, statistics and writers it reuses, and below `cmd/`, which only wires the commands.
//! [`submission`] is what a run stores, [`identity`] tells the engines' binaries apart, [`pull`]
//! writes the results folder.

pub mod identity;
pub mod pull;
pub mod submission;
