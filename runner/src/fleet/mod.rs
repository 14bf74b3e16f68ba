//! The fleet: many machines play one run through a shared PostgreSQL database. Above the
//! experiments (it uses `run/`'s rules, `store/`, `report/`, `sweep::racing`, `tune::spsa`) and
//! below `cmd/`. The queue ([`queue`]) is the only place that writes SQL; [`schema`] holds the
//! tables and their versions; [`connect`] turns `--db URL` into a connection; [`decide`] is what a
//! report transaction decides (SPRT, racing, a tuning step) by the rules a local run uses.

pub mod connect;
pub mod decide;
pub mod link;
pub mod pair;
pub mod queue;
pub mod schema;
pub mod worker;
