//! Gauntlets and round-robins: `runner match` with more than two engines or several time
//! controls. The pairings (`crate::plan::tournament`) go through the generic run core like any
//! match; the tables ([`tables`]) and ratings (`stats::bradley_terry`) are computed from the stored
//! games and written next to them ([`files`]). An experiment: uses `plan`, `store` and `report`.

pub mod files;
pub mod tables;
