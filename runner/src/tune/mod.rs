//! SPSA tuning (`runner tune`): UCI options tuned by simultaneous perturbation, with fishtest's
//! gains and parameter format. Each iteration plays one game pair (one opening, colours reversed)
//! between the engine at theta + c_k*Delta and at theta - c_k*Delta, and moves theta by
//! a_k/c_k * result * Delta.
//!
//! [`params`] reads `--param name,start,min,max,c_end,r_end` and checks it against the engine's
//! declarations; [`spsa`] holds the arithmetic (gains, perturbation, stochastic rounding,
//! update, replay of the stored games), pure and unit-tested; [`log`] is `tune.jsonl`, what each
//! iteration played, written before its games; [`run`] plays the iterations with the game loop
//! of `play` and records every game in `store`; [`files`] and [`plot`] write tune.json,
//! tune.csv, tune.md and tune.svg. Uses `plan`, `play`, `store`, `report` and `run`'s argument
//! helpers; `cmd/tune.rs` uses it.
//!
//! theta is never kept only in memory: it is replayed from games.jsonl (results, in the order
//! the pairs finished) and tune.jsonl (each iteration's perturbation and gains), so a run killed
//! at any moment resumes where it stood.

pub mod args;
pub mod files;
pub mod log;
pub mod params;
pub mod plot;
pub mod run;
pub mod spsa;
