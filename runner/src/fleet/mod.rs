//! The fleet: many machines play one run through PostgreSQL and stop together. A run is
//! submitted once (`runner submit`: the plan checked as a local run checks it, then stored with
//! its openings and the engines' identities), its game pairs are claimed, played and reported by
//! workers on any machine (`runner worker`), and pulled back into an ordinary results folder
//! (`runner pull`).
//!
//! Layer: above the experiments (`sweep`, `gauntlet`, `tune`) and the run core, whose plan
//! builders, statistics, rules and writers it reuses, and below `cmd/`, which only wires the
//! commands. [`queue`] is the only place that sends SQL; [`schema`] holds the tables, their versions
//! and the database functions through which workers write (`sql/`); [`connect`] turns `--db URL` into a connection and [`link`] keeps a worker's one
//! connection alive; [`decide`] is what a report transaction decides (SPRT, racing, a tuning
//! step) by the rules a local run uses; [`submission`] is what a run stores, [`identity`] tells
//! the engines' binaries apart and decides which a worker trusts, [`load`] loads a run on a
//! worker, [`pair`] plays one game pair, [`worker`] is the worker's loop, [`pull`] writes the
//! results folder, [`tablebase`] the runs that need Syzygy tables, [`status`] formats `runner status`, [`share`] words a run's share of the fleet
//! and its time left, [`workers`] `runner workers`, [`worker_stats`] the per-worker lines of a
//! run's status (residuals, flags), [`source`] engines built from source at a commit (the
//! submitter's archive and bench, the workers' builds).

pub mod api;
pub mod artifacts;
pub mod bounded;
pub mod boxing;
pub mod client;
pub mod connect;
pub mod credentials;
pub mod decide;
pub mod door;
pub mod identity;
pub mod link;
pub mod load;
pub mod pair;
pub mod pull;
pub mod queue;
pub mod rights;
pub mod schema;
pub mod share;
pub mod source;
pub mod status;
pub mod submission;
pub mod tablebase;
pub mod what_runs;
pub mod worker;
pub mod worker_stats;
pub mod workers;
