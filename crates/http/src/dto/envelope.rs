//! The error envelope and the failures every operation of a kind may answer, as the OpenAPI
//! document shows them (the envelope itself is built by `ApiError`).

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::{IntoResponses, ToSchema};

/// Every failure: `{error, message, details}`; `details` is `{}` when empty.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Error, example = json!({"error": "SERVICE_NOT_FOUND", "message": "not found", "details": {}}))]
pub struct ErrorEnvelope {
    /// A stable code, e.g. `SERVICE_VALIDATION_ERROR`.
    error: String,
    /// A sentence for people; never internals.
    message: String,
    /// Machine-readable specifics: `fields`, `required`/`granted`, `reason`, ...
    details: Map<String, Value>,
}

/// What a request with `Idempotency-Key` may also answer.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "a description for the OpenAPI document, never built"
)]
pub enum IdempotencyFailures {
    /// The first request with this key is still running; retry after `Retry-After` seconds.
    #[response(
        status = 409,
        headers(("Retry-After" = u32, description = "Seconds to wait: 1")),
        example = json!({"error": "SERVICE_VALIDATION_ERROR",
            "message": "a request with this Idempotency-Key is still being processed; retry shortly",
            "details": {"reason": "in_progress", "header": "Idempotency-Key"}})
    )]
    InProgress(ErrorEnvelope),
    /// The key was used with another method, path or body within 24 hours.
    #[response(
        status = 422,
        example = json!({"error": "SERVICE_VALIDATION_ERROR",
            "message": "this Idempotency-Key was used for another request; use a new key",
            "details": {"reason": "key_reused", "fields": [{"field": "Idempotency-Key",
                "code": "reused", "message": "was used with another method, path or body"}]}})
    )]
    KeyReused(ErrorEnvelope),
}

/// What any API operation may answer besides its own outcomes.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "a description for the OpenAPI document, never built"
)]
pub enum ServiceFailures {
    /// Past the caller's quota (`details.limit`, `window_seconds`, `retry_after_seconds`).
    #[response(
        status = 429,
        headers(("Retry-After" = u64)),
        example = json!({"error": "SERVICE_RATE_LIMITED", "message": "rate limit exceeded; retry in 12 s",
            "details": {"limit": 1200, "window_seconds": 60, "retry_after_seconds": 12}})
    )]
    RateLimited(ErrorEnvelope),
    /// An unexpected failure, without internals.
    #[response(
        status = 500,
        example = json!({"error": "SERVICE_INTERNAL_ERROR", "message": "internal error", "details": {}})
    )]
    Internal(ErrorEnvelope),
    /// The database cannot be reached; retry after `Retry-After` seconds.
    #[response(
        status = 503,
        headers(("Retry-After" = u32)),
        example = json!({"error": "SERVICE_UNAVAILABLE",
            "message": "the service is temporarily unavailable; retry later", "details": {}})
    )]
    Unavailable(ErrorEnvelope),
}
