//! The fleet's tests against a real PostgreSQL (each starts a throwaway cluster), in one test
//! binary: one link of the runner's library instead of seven. Each file is a module:
//! [`queue`] (leases, fencing, decisions, schema versions), [`api`] (the worker API of
//! `runner serve`), [`roles`] and [`share`] (who may do what, and sharing the fleet),
//! [`workers`] (machines, keys, `runner workers`), [`commands`] (the commands end to end),
//! [`contract`] (schema version 7: the functions dropped) and
//! [`judge_sql`] (the SQL decisions against the `stats` crate's).

mod common;

mod api;
mod commands;
mod contract;
mod judge_sql;
mod queue;
mod roles;
mod share;
mod workers;
