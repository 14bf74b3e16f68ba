//! The one error type of the crate.

use thiserror::Error;

/// Everything that can go wrong in this crate: invalid user input (counts, SPRT specifications,
/// options) or, in theory, a numerical problem. Every message is one line and says what to fix.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// An SPRT specification string could not be parsed or is out of range.
    #[error("invalid SPRT specification: {0}")]
    InvalidSprt(String),
    /// A statistics option (draws floor, alpha) is out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// Counts that do not fit the computation (too large to be represented exactly, or
    /// trinomial and pentanomial counts that describe different numbers of games).
    #[error("invalid counts: {0}")]
    InvalidCounts(String),
    /// A constrained maximum-likelihood problem has no solution (cannot happen for valid
    /// bounds on regularized counts; reported instead of returning NaN).
    #[error("numerical failure: {0}")]
    Numerical(String),
}
