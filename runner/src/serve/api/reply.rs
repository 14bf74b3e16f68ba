//! What the worker API's handlers share: the typed refusal ([`ApiError`], answered with the
//! API's header so that a worker tells it from a proxy's page), the request's worker and
//! protocol read from its headers, a JSON body parsed and bounded before a handler sees it, and
//! a database error sorted into a refusal code by its SQLSTATE.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::fleet::api::{self, Code, ErrorBody, Invalid};
use crate::fleet::link::is_transient;
use crate::fleet::queue::WorkerId;
use crate::fleet::queue::lease::{NotAuthorized, Refused};
use crate::serve::App;

/// The longest key or secret taken from a header.
const SECRET_MAX: usize = 200;

/// A refusal of the worker API.
#[derive(Debug)]
pub struct ApiError {
    pub body: ErrorBody,
    pub retry_after: Option<Duration>,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError { body: ErrorBody { code, message: message.into() }, retry_after: None }
    }

    /// Busy or away: try again after `after`.
    pub fn unavailable(message: impl Into<String>, after: Duration) -> ApiError {
        ApiError { retry_after: Some(after), ..ApiError::new(Code::Unavailable, message) }
    }
}

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> ApiError {
        ApiError::new(Code::Invalid, e.0)
    }
}

/// The API's marker on every answer (a typed refusal is one that carries it).
pub fn mark(h: &mut HeaderMap) {
    h.insert(api::SERVER_HEADER, HeaderValue::from_static("1"));
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.body.code.status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut res = (status, axum::Json(&self.body)).into_response();
        mark(res.headers_mut());
        if let Some(after) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&after.as_secs().max(1).to_string())
        {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        res
    }
}

/// A queue call's error as a refusal: a worker's check that failed ([`NotAuthorized`]) or a
/// call refused as the database function refused it ([`Refused`]) is typed as the function's
/// exception was, with its message; a passing fault (the database away, busy, a deadlock)
/// is 503 with `Retry-After`; an exception a database function raised is typed by its
/// SQLSTATE class, with its message; anything else is the server's own failure.
impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        if let Some(n) = e.chain().find_map(|c| c.downcast_ref::<NotAuthorized>()) {
            return ApiError::new(Code::Unauthorized, n.to_string());
        }
        if let Some(r) = e.chain().find_map(|c| c.downcast_ref::<Refused>()) {
            let code = match r {
                Refused::Key(_) => Code::Unauthorized,
                Refused::NoRun(_) | Refused::NoChunk(..) => Code::NotFound,
                Refused::NotNamed(_) => Code::Forbidden,
                Refused::Record(_) | Refused::NoDraws(..) => Code::Invalid,
            };
            return ApiError::new(code, r.to_string());
        }
        if is_transient(&e) {
            return ApiError::unavailable(
                format!("the fleet's database is unavailable ({e:#})"),
                Duration::from_secs(1),
            );
        }
        let db = e
            .chain()
            .find_map(|c| c.downcast_ref::<tokio_postgres::Error>().and_then(|p| p.as_db_error()));
        let Some(db) = db else {
            return ApiError::new(Code::Internal, format!("{e:#}"));
        };
        let sqlstate = db.code().code();
        let code = match sqlstate {
            s if s.starts_with("28") => Code::Unauthorized,
            "42501" => Code::Forbidden,
            s if s.starts_with("P0002") || s.starts_with("02") => Code::NotFound,
            s if s.starts_with("22") => Code::Invalid,
            s if s.starts_with("23") || s.starts_with("55") || s.starts_with("0A") => {
                Code::Conflict
            }
            _ => Code::Internal,
        };
        ApiError::new(code, db.message().replace(['\n', '\r'], " "))
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> ApiError {
        ApiError::unavailable(
            format!("the server's database connections are busy or away ({e})"),
            Duration::from_secs(1),
        )
    }
}

/// The pool's connection for one request, or the refusal of a server without a database.
pub async fn conn(app: &App) -> Result<deadpool_postgres::Object, ApiError> {
    match &app.pool {
        Some(p) => Ok(p.get().await?),
        None => Err(ApiError::new(
            Code::NotFound,
            "this server has no fleet database (runner serve --db URL)",
        )),
    }
}

/// The bearer token of `Authorization`, bounded.
fn bearer(parts: &Parts) -> Result<String, ApiError> {
    let v = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::new(Code::Unauthorized, "no bearer token"))?;
    if v.len() > SECRET_MAX || !v.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::new(Code::Unauthorized, "a malformed bearer token"));
    }
    Ok(v.to_string())
}

/// The worker key of a registration (`Authorization: Bearer KEY`).
pub struct Key(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Key {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Key, ApiError> {
        bearer(parts).map(Key)
    }
}

/// A registered worker: its id ([`api::WORKER_HEADER`]) and secret (the bearer token),
/// checked at each call by the call's statement.
pub struct Worker(pub WorkerId);

impl<S: Send + Sync> FromRequestParts<S> for Worker {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Worker, ApiError> {
        let id = parts
            .headers
            .get(api::WORKER_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|id| *id > 0)
            .ok_or_else(|| {
                ApiError::new(Code::Unauthorized, format!("no worker id in {}", api::WORKER_HEADER))
            })?;
        let secret = bearer(parts)?;
        Ok(Worker(WorkerId::new(id, secret, String::new())))
    }
}

/// The worker protocol a request names (0 when it names none: a worker older than the header).
pub struct Protocol(pub u32);

impl<S: Send + Sync> FromRequestParts<S> for Protocol {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Protocol, ApiError> {
        let v = parts
            .headers
            .get(api::VERSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0);
        Ok(Protocol(v))
    }
}

/// A JSON body of `T`, refused with a typed answer when it does not parse (a missing field, an
/// unknown one, a wrong type), is over the limit, or is outside its bounds ([`Bounded`]).
pub struct Body<T>(pub T);

/// A request type with bounds.
pub trait Bounded {
    fn check(&self) -> Result<(), Invalid>;
}

impl<T, S> FromRequest<S> for Body<T>
where
    T: DeserializeOwned + Bounded,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Body<T>, ApiError> {
        let axum::Json(v) = axum::Json::<T>::from_request(req, state).await.map_err(|r| {
            let too_large = r.status() == StatusCode::PAYLOAD_TOO_LARGE;
            let code = if too_large { Code::TooLarge } else { Code::Invalid };
            ApiError::new(code, r.body_text().replace(['\n', '\r'], " "))
        })?;
        v.check()?;
        Ok(Body(v))
    }
}

macro_rules! bounded {
    ($($t:ty),* $(,)?) => {
        $(impl Bounded for $t {
            fn check(&self) -> Result<(), Invalid> {
                self.validate()
            }
        })*
    };
}

bounded!(
    api::RegisterRequest,
    api::ClaimRequest,
    api::HeartbeatRequest,
    api::ReleaseRequest,
    api::RefuseRequest,
    api::IncidentRequest,
    api::ReportRequest,
    api::SettleRequest,
    api::IterationRequest,
    api::EngineLoadedRequest,
    api::OutstandingRequest,
);

impl Bounded for api::Done {
    fn check(&self) -> Result<(), Invalid> {
        Ok(())
    }
}

/// The server's state as the handlers take it.
pub type AppState = axum::extract::State<Arc<App>>;
