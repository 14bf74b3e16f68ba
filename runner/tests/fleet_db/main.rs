//! The fleet's tests against a real PostgreSQL (each starts a throwaway cluster), in one test
//! binary: one link of the runner's library instead of seven. Each file is a module:
//! [`queue`] (leases, fencing, decisions, schema versions), [`api`] (the worker API of
//! `runner serve`), [`roles`] and [`share`] (who may do what, and sharing the fleet),
//! [`workers`] (machines, keys, `runner workers`), [`commands`] (the commands end to end) and
//! [`contract`] (schema version 7: the functions dropped).

mod common;

mod api;
mod commands;
mod contract;
mod queue;
mod roles;
mod share;
mod workers;
