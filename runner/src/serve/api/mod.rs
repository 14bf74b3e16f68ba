//! The server's JSON APIs for machines: [`worker`], the worker API (`/api/v1/worker/...`, the
//! types of `fleet::api`), with its own limits, apart from the pages': a body limit, a cap on
//! requests in flight (past it, 503 with `Retry-After`), a budget per secret ([`budget`]), and
//! a deadline per request.

pub mod budget;
pub mod closing;
pub mod judges;
pub mod reply;
pub mod worker;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::{Next, from_fn, map_response};
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use self::reply::{ApiError, mark};
use super::App;

/// Largest body of a worker request: a report's two game records, with room to spare.
pub const WORKER_BODY_MAX: usize = 4 << 20;

/// Worker requests served at once, at the most.
pub const WORKER_IN_FLIGHT: usize = 512;

/// The longest a worker request may take (its database call included).
pub const WORKER_DEADLINE: Duration = Duration::from_secs(30);

fn in_flight() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| Semaphore::new(WORKER_IN_FLIGHT))
}

fn budgets() -> &'static budget::Budgets {
    static B: OnceLock<budget::Budgets> = OnceLock::new();
    B.get_or_init(budget::Budgets::default)
}

/// The worker API's routes with their limits.
pub fn routes() -> Router<Arc<App>> {
    worker::routes().layer(DefaultBodyLimit::max(WORKER_BODY_MAX)).layer(from_fn(guard)).layer(
        map_response(|mut res: Response| async move {
            mark(res.headers_mut());
            res
        }),
    )
}

/// Each secret within its budget; at most [`WORKER_IN_FLIGHT`] requests at once, each within
/// [`WORKER_DEADLINE`].
async fn guard(req: Request, next: Next) -> Response {
    let secret = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(s) = secret
        && let Err(wait) = budgets().take(s.get(..200).unwrap_or(s), std::time::Instant::now())
    {
        return ApiError::unavailable(
            format!("this worker is over its request budget ({} a second)", budget::RATE),
            wait.max(Duration::from_secs(1)),
        )
        .into_response();
    }
    let Ok(_permit) = in_flight().try_acquire() else {
        return ApiError::unavailable("the server is busy", Duration::from_secs(1)).into_response();
    };
    match tokio::time::timeout(WORKER_DEADLINE, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::unavailable(
            format!("the request took over {} s", WORKER_DEADLINE.as_secs()),
            Duration::from_secs(1),
        )
        .into_response(),
    }
}
