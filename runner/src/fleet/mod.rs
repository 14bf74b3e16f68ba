//! The fleet: many machines play one run through a shared PostgreSQL database and stop together
//! (issue 26). Above the experiments (it uses `run/`'s rules and plan builders, `store/`,
//! `report/`, `sweep::racing`, `tune::spsa`) and below `cmd/`, which only wires the commands.
//! The queue ([`queue`]) is the only place that writes SQL; [`schema`] holds the tables and their
//! versions; [`connect`] turns `--db URL` into a connection; [`decide`] is what a report
//! transaction decides (SPRT, racing, a tuning step) by the rules a local run uses.
//! [`submission`] is what `runner submit` stores (the plan checked as a local run checks it, its
//! openings, the engines' [`identity`]); [`pull`] writes a run back as an ordinary results
//! folder; [`status`] formats `runner status`.

pub mod connect;
pub mod decide;
pub mod identity;
pub mod link;
pub mod pair;
pub mod pull;
pub mod queue;
pub mod schema;
pub mod status;
pub mod submission;
pub mod worker;
