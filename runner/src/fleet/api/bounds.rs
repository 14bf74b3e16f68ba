//! The bounds every worker request is held to, and the checks the requests' `validate()` use.

use std::fmt;

/// Shortest lease a worker may ask for, in seconds.
pub const LEASE_MIN: f64 = 5.0;
/// Longest lease, in seconds (one hour).
pub const LEASE_MAX: f64 = 3600.0;
/// Pairs played (or claimed) at once, at the most.
pub const CONCURRENCY_MAX: i64 = 1024;
/// Leases named in one heartbeat or release, and runs skipped in one claim, at the most.
pub const TOKENS_MAX: usize = 4096;
/// Characters of a name (host, engine, CPU model, commit, version), at the most.
pub const NAME_MAX: usize = 200;
/// Characters of a reason (a refusal, an incident, a build error), at the most.
pub const REASON_MAX: usize = 2000;
/// A tuning run's iterations in flight, at the most (the worker's `--tune-in-flight`).
pub const TUNE_IN_FLIGHT_MAX: i64 = 1000;
/// Seconds a build may have taken, at the most (a week).
pub const BUILD_SECS_MAX: f64 = 7.0 * 86_400.0;

/// A request outside its bounds: which field and why (answered with [`super::Code::Invalid`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

pub type Checked = Result<(), Invalid>;

fn bad(field: &str, why: impl fmt::Display) -> Invalid {
    Invalid(format!("{field}: {why}"))
}

/// An id (run, worker, lease token): positive.
pub fn id(field: &str, v: i64) -> Checked {
    if v > 0 { Ok(()) } else { Err(bad(field, "must be a positive id")) }
}

/// A position (pairing, pair, chunk): from 0 to `i32::MAX`.
pub fn index(field: &str, v: i32) -> Checked {
    if v >= 0 { Ok(()) } else { Err(bad(field, "must not be negative")) }
}

/// A lease in seconds: finite, from [`LEASE_MIN`] to [`LEASE_MAX`].
pub fn lease(v: f64) -> Checked {
    if v.is_finite() && (LEASE_MIN..=LEASE_MAX).contains(&v) {
        Ok(())
    } else {
        Err(bad("lease_secs", format!("must be from {LEASE_MIN} to {LEASE_MAX} seconds")))
    }
}

/// A count from `lo` to `hi`.
pub fn within(field: &str, v: i64, lo: i64, hi: i64) -> Checked {
    if (lo..=hi).contains(&v) { Ok(()) } else { Err(bad(field, format!("must be {lo} to {hi}"))) }
}

/// A finite number from `lo` to `hi`.
pub fn finite(field: &str, v: f64, lo: f64, hi: f64) -> Checked {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(bad(field, format!("must be a finite number from {lo} to {hi}")))
    }
}

/// Text of at most `max` characters with no control characters (a reason may hold tabs, but
/// no line breaks: it is one line).
pub fn text(field: &str, v: &str, max: usize) -> Checked {
    if v.chars().count() > max {
        return Err(bad(field, format!("longer than {max} characters")));
    }
    if v.chars().any(|c| c.is_control() && c != '\t') {
        return Err(bad(field, "holds a control character"));
    }
    Ok(())
}

/// A name: [`text`] of at most [`NAME_MAX`] characters, not empty.
pub fn name(field: &str, v: &str) -> Checked {
    if v.trim().is_empty() {
        return Err(bad(field, "is empty"));
    }
    text(field, v, NAME_MAX)
}

/// A list of ids of at most [`TOKENS_MAX`].
pub fn ids(field: &str, v: &[i64]) -> Checked {
    if v.len() > TOKENS_MAX {
        return Err(bad(field, format!("more than {TOKENS_MAX} entries")));
    }
    v.iter().try_for_each(|t| id(field, *t))
}

/// A SHA-256 in lowercase hex.
pub fn sha256(field: &str, v: &str) -> Checked {
    if v.len() == 64 && v.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(bad(field, "must be a SHA-256 in lowercase hex"))
    }
}
