//! The worker API's wire types, shared by the server (`serve::api`) and the worker's HTTP client
//! ([`super::client`]): every request and answer of `/api/v1/worker/...` as a serde type, each
//! request with a `validate()` that bounds it before anything reaches the database (a lease of
//! 5 s to 1 h, a concurrency of 1 to 1,024, finite numbers only, names and reasons capped in
//! length, no control characters, ids positive), the error body with its typed refusal code,
//! and the protocol version every worker request carries in [`VERSION_HEADER`].
//!
//! A worker authenticates its registration with its key (`Authorization: Bearer KEY`); every
//! later request names the worker in [`WORKER_HEADER`] and carries its per-process secret as the
//! bearer token. Nothing secret is ever in a body or a URL.

pub mod bounds;
pub mod types;

pub use bounds::Invalid;
pub use types::*;

/// The worker protocol this build speaks (sent in [`VERSION_HEADER`]).
pub const PROTOCOL: u32 = 1;

/// The oldest worker protocol this build's server hands work to: an older worker's claims are
/// refused ([`Code::UpgradeWorker`]) while its heartbeats and reports for the leases it holds
/// are still taken.
pub const MIN_PROTOCOL: u32 = 1;

/// The header naming the worker protocol of every worker request.
pub const VERSION_HEADER: &str = "x-runner-worker-version";

/// The header naming the registered worker (its id) on every request after registering.
pub const WORKER_HEADER: &str = "x-runner-worker";

/// The header every answer of the worker API carries: a refusal is typed only when it comes
/// with it (a proxy's error page does not).
pub const SERVER_HEADER: &str = "x-runner-api";

/// The routes' prefix.
pub const PREFIX: &str = "/api/v1/worker";

/// Bytes of one artifact chunk (`fleet::artifacts::CHUNK_SIZE`).
pub const CHUNK_SIZE: usize = 1 << 20;

mod convert;
