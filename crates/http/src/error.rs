//! `ApiError`: the one place where outcomes become HTTP statuses and the contract's envelope
//! `{error, message, details}`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use deckhand_domain::catalog::Unresolved;
use deckhand_domain::collections::{ImportError, NeedsError, PatchCollectionError};
use deckhand_domain::decks::{
    CardStatsError, CreateDeckError, ExportPayloadError, FindDeckError, ForkError, ListDecksError,
    PutGuideError, RollbackError, SaveDeckError,
};
use deckhand_domain::error::is_store_unavailable;
use deckhand_domain::events::EventError;
use deckhand_domain::formats::CheckError;
use deckhand_domain::idempotency::{IdempotencyError, InvalidKey};
use deckhand_domain::identity::{AccessDenied, AuthError};
use deckhand_domain::likes::LikeError;
use deckhand_domain::sideboards::GuideError;
use deckhand_domain::validation::Violations;
use deckhand_domain::webhooks::WebhookError;
use serde::Serialize;
use serde_json::{Value, json};

use crate::dto::cards::UnresolvedDto;

/// Seconds a client should wait before retrying when the store is down.
const RETRY_AFTER_UNAVAILABLE_SECS: u32 = 5;

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    details: Value,
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// One invalid field of a request, in `details.fields`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: json!({}),
            headers: Vec::new(),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "SERVICE_NOT_FOUND", "not found")
    }

    pub fn authentication_required() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "SERVICE_AUTHENTICATION_REQUIRED",
            "this endpoint needs credentials",
        )
    }

    pub fn authentication_failed() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "SERVICE_AUTHENTICATION_FAILED",
            "the credentials were not accepted",
        )
    }

    /// 401 for a user's credentials (a PAT, an OAuth token, a signature with a PAT) where only
    /// a partner acting alone is taken.
    pub fn partner_lane_required() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "SERVICE_AUTHENTICATION_FAILED",
            "this endpoint takes a partner acting alone: send one of the partner's API keys \
             (X-Api-Key) or its signature without a user's token (X-Partner-Id and X-Signature); \
             a personal access token or an OAuth token acts for a user and is not taken here",
        )
        .with_details(json!({
            "reason": "partner_lane_required",
            "accepted": ["X-Api-Key", "X-Partner-Id + X-Signature"],
        }))
    }

    /// 400 with one entry per invalid field.
    pub fn validation(fields: Vec<FieldError>) -> Self {
        let message = match fields.as_slice() {
            [only] => format!("{}: {}", only.field, only.message),
            _ => format!("{} fields are invalid", fields.len()),
        };
        Self::new(StatusCode::BAD_REQUEST, "SERVICE_VALIDATION_ERROR", message)
            .with_details(json!({ "fields": fields }))
    }

    /// 400 for a request that is malformed as a whole (not one field).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "SERVICE_VALIDATION_ERROR", message)
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "SERVICE_VALIDATION_ERROR",
            "send application/json, application/x-www-form-urlencoded or multipart/form-data",
        )
    }

    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "SERVICE_PAYLOAD_TOO_LARGE",
            "request bodies are limited to 4 MiB",
        )
    }

    /// 408: the client took longer than the server allows to send its request.
    pub fn request_timeout() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "SERVICE_REQUEST_TIMEOUT",
            "the request did not arrive in time; send it again without pausing",
        )
    }

    /// 431: the request line and headers are over the server's limit.
    pub fn headers_too_large() -> Self {
        Self::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "SERVICE_VALIDATION_ERROR",
            "the request line and headers are too large",
        )
    }

    /// 400 for a request that is not valid HTTP/1.1 (a raw non-ASCII byte in the request line,
    /// a control character in a header, ...), which the server refuses before routing it.
    pub fn malformed_http() -> Self {
        Self::bad_request(
            "the request is not valid HTTP: its request line or a header holds bytes HTTP does not allow (percent-encode them)",
        )
    }

    pub fn method_not_allowed(allowed: &str) -> Self {
        let error = Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "SERVICE_METHOD_NOT_ALLOWED",
            "this method is not allowed on this path",
        );
        match HeaderValue::from_str(allowed) {
            Ok(value) => error.with_header(header::ALLOW, value),
            Err(_) => error,
        }
    }

    /// 422 for card entries that did not resolve; `unresolved` is the list of unresolved items
    /// as the resolve endpoint renders them.
    pub fn card_resolution_failed(count: usize, unresolved: Value) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "SERVICE_CARD_RESOLUTION_FAILED",
            format!("{count} card identifier(s) could not be resolved"),
        )
        .with_details(json!({ "unresolved": unresolved }))
    }

    /// 429 past the caller's quota, with `Retry-After`.
    pub fn rate_limited(limit: u32, window_seconds: u64, retry_after_seconds: u64) -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "SERVICE_RATE_LIMITED",
            format!("rate limit exceeded; retry in {retry_after_seconds} s"),
        )
        .with_details(json!({
            "limit": limit,
            "window_seconds": window_seconds,
            "retry_after_seconds": retry_after_seconds,
        }))
        .with_header(header::RETRY_AFTER, HeaderValue::from(retry_after_seconds))
    }

    /// 412: `If-Match` names another version than the current one.
    pub fn precondition_failed(current_version: Option<i32>) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "SERVICE_PRECONDITION_FAILED",
            "the deck has changed since the version in If-Match",
        )
        .with_details(match current_version {
            Some(version) => json!({ "current_version": version }),
            None => json!({}),
        })
    }

    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "SERVICE_INTERNAL_ERROR",
            "internal error",
        )
    }

    pub fn unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            "the service is temporarily unavailable; retry later",
        )
        .with_header(
            header::RETRY_AFTER,
            HeaderValue::from(RETRY_AFTER_UNAVAILABLE_SECS),
        )
    }

    /// 503 for a store that answers but is set up otherwise than the service's settings say;
    /// the message is the problem and its fix, for the operator who reads readiness.
    pub fn store_misconfigured(problem: &str) -> Self {
        let mut error = Self::unavailable();
        error.message = format!("the database is misconfigured: {problem}");
        error
    }

    /// An error nobody planned for: logged with its cause, answered without internals. A store
    /// that cannot be reached is a 503 instead, so clients retry.
    pub fn unexpected(error: anyhow::Error) -> Self {
        if is_store_unavailable(&error) {
            tracing::warn!(error = format!("{error:#}"), "store unavailable");
            Self::unavailable()
        } else {
            tracing::error!(error = format!("{error:#}"), "unexpected error");
            Self::internal()
        }
    }

    /// The envelope for a response that failed before any handler could shape it (unknown
    /// route, panic, ...): chosen by status alone.
    pub fn for_status(status: StatusCode) -> Self {
        match status {
            StatusCode::NOT_FOUND => Self::not_found(),
            StatusCode::PAYLOAD_TOO_LARGE => Self::payload_too_large(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::unsupported_media_type(),
            StatusCode::SERVICE_UNAVAILABLE => Self::unavailable(),
            StatusCode::REQUEST_TIMEOUT => Self::request_timeout(),
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Self::headers_too_large(),
            StatusCode::METHOD_NOT_ALLOWED => Self::new(
                status,
                "SERVICE_METHOD_NOT_ALLOWED",
                "this method is not allowed on this path",
            ),
            status if status.is_client_error() => Self::bad_request("the request is invalid"),
            _ => Self::internal(),
        }
    }

    pub fn body(&self) -> Value {
        json!({ "error": self.code, "message": self.message, "details": self.details })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        for (name, value) in &self.headers {
            response.insert_header((name.clone(), value.clone()));
        }
        response.json(self.body())
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> Self {
        Self::unexpected(error)
    }
}

impl From<AccessDenied> for ApiError {
    fn from(denied: AccessDenied) -> Self {
        match denied {
            AccessDenied::AuthenticationRequired => Self::authentication_required(),
            AccessDenied::LaneNotAccepted => Self::authentication_failed(),
            AccessDenied::InsufficientScope { required, granted } => Self::new(
                StatusCode::FORBIDDEN,
                "SERVICE_INSUFFICIENT_SCOPE",
                format!("this request needs {}", required.join(" ")),
            )
            .with_details(json!({ "required": required, "granted": granted })),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Failed => Self::authentication_failed(),
            AuthError::TokenExpired => Self::new(
                StatusCode::UNAUTHORIZED,
                "SERVICE_OAUTH2_TOKEN_EXPIRED",
                "the access token has expired",
            ),
            AuthError::TokenRevoked => Self::new(
                StatusCode::UNAUTHORIZED,
                "SERVICE_OAUTH2_TOKEN_REVOKED",
                "the token has been revoked",
            ),
            AuthError::InvalidDpopProof(reason) => {
                let challenge = format!(
                    "DPoP error=\"invalid_dpop_proof\", error_description=\"{}\", algs=\"{}\"",
                    reason.replace(['"', '\\'], "'"),
                    deckhand_auth::DPOP_ALGS,
                );
                let error = Self::authentication_failed();
                match HeaderValue::from_str(&challenge) {
                    Ok(value) => error.with_header(header::WWW_AUTHENTICATE, value),
                    Err(_) => error,
                }
            }
            AuthError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

/// The request header that carries an idempotency key, as errors name it.
pub(crate) const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

impl From<InvalidKey> for ApiError {
    fn from(invalid: InvalidKey) -> Self {
        Self::validation(vec![FieldError {
            field: IDEMPOTENCY_KEY.to_owned(),
            code: invalid.code().to_owned(),
            message: invalid.to_string(),
        }])
    }
}

impl From<IdempotencyError> for ApiError {
    fn from(error: IdempotencyError) -> Self {
        match error {
            IdempotencyError::InProgress => Self::new(
                StatusCode::CONFLICT,
                "SERVICE_VALIDATION_ERROR",
                format!(
                    "a request with this {IDEMPOTENCY_KEY} is still being processed; retry shortly"
                ),
            )
            .with_details(json!({ "reason": "in_progress", "header": IDEMPOTENCY_KEY }))
            .with_header(header::RETRY_AFTER, HeaderValue::from(1)),
            IdempotencyError::KeyReused => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "SERVICE_VALIDATION_ERROR",
                format!("this {IDEMPOTENCY_KEY} was used for another request; use a new key"),
            )
            .with_details(json!({
                "reason": "key_reused",
                "fields": [{
                    "field": IDEMPOTENCY_KEY,
                    "code": "reused",
                    "message": "was used with another method, path or body",
                }],
            })),
            IdempotencyError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<LikeError> for ApiError {
    fn from(error: LikeError) -> Self {
        match error {
            LikeError::NoUser => Self::new(
                StatusCode::UNAUTHORIZED,
                "SERVICE_AUTHENTICATION_FAILED",
                "likes are a user's: send credentials that carry a user (a PAT, an OAuth token, or a signature with a PAT)",
            ),
            LikeError::NotFound => Self::not_found(),
            LikeError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<Violations> for ApiError {
    fn from(violations: Violations) -> Self {
        Self::validation(
            violations
                .0
                .into_iter()
                .map(|violation| FieldError {
                    field: violation.field,
                    code: violation.code.to_owned(),
                    message: violation.message,
                })
                .collect(),
        )
    }
}

impl ApiError {
    /// Cards of `field` that match nothing in the catalog.
    fn unresolved(field: &'static str, items: Vec<Unresolved>) -> Self {
        let count = items.len();
        let items: Vec<UnresolvedDto> = items.into_iter().map(UnresolvedDto::from).collect();
        let mut error = Self::card_resolution_failed(count, json!(items));
        error.details["field"] = json!(field);
        error
    }

    /// The owner already has a deck with the provenance a write asks for.
    fn duplicate_provenance() -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "SERVICE_VALIDATION_ERROR",
            "you already have a deck with this source_provider, source_external_id and source_external_version",
        )
        .with_details(json!({"fields": [{
            "field": "source_external_id",
            "code": "duplicate",
            "message": "taken by another of your decks with the same provider and version",
        }]}))
    }
}

impl From<FindDeckError> for ApiError {
    fn from(error: FindDeckError) -> Self {
        match error {
            FindDeckError::NotFound => Self::not_found(),
            FindDeckError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<CreateDeckError> for ApiError {
    fn from(error: CreateDeckError) -> Self {
        match error {
            CreateDeckError::Invalid(violations) => violations.into(),
            CreateDeckError::Unresolved { field, items } => Self::unresolved(field, items),
            CreateDeckError::DuplicateProvenance => Self::duplicate_provenance(),
            CreateDeckError::NoUser => Self::new(
                StatusCode::UNAUTHORIZED,
                "SERVICE_AUTHENTICATION_FAILED",
                "creating a deck needs credentials",
            ),
            CreateDeckError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<ForkError> for ApiError {
    fn from(error: ForkError) -> Self {
        match error {
            ForkError::Invalid(violations) => violations.into(),
            ForkError::NotFound => Self::not_found(),
            ForkError::NoUser => Self::new(
                StatusCode::UNAUTHORIZED,
                "SERVICE_AUTHENTICATION_FAILED",
                "a fork is a user's deck: send credentials that carry a user (a PAT, an OAuth token, or a signature with a PAT)",
            ),
            ForkError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<SaveDeckError> for ApiError {
    fn from(error: SaveDeckError) -> Self {
        match error {
            SaveDeckError::Invalid(violations) => violations.into(),
            SaveDeckError::Unresolved { field, items } => Self::unresolved(field, items),
            SaveDeckError::NotFound => Self::not_found(),
            SaveDeckError::PreconditionFailed { current_version } => {
                Self::precondition_failed(Some(current_version))
            }
            SaveDeckError::DuplicateProvenance => Self::duplicate_provenance(),
            SaveDeckError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<RollbackError> for ApiError {
    fn from(error: RollbackError) -> Self {
        match error {
            RollbackError::NotFound => Self::not_found(),
            RollbackError::PreconditionFailed { current_version } => {
                Self::precondition_failed(Some(current_version))
            }
            RollbackError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<PutGuideError> for ApiError {
    fn from(error: PutGuideError) -> Self {
        match error {
            PutGuideError::Invalid(violations) => violations.into(),
            PutGuideError::NotFound => Self::not_found(),
            PutGuideError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<ExportPayloadError> for ApiError {
    fn from(error: ExportPayloadError) -> Self {
        match error {
            ExportPayloadError::Invalid(violations) => violations.into(),
            ExportPayloadError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<ListDecksError> for ApiError {
    fn from(error: ListDecksError) -> Self {
        match error {
            ListDecksError::Invalid(violations) => violations.into(),
            ListDecksError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<CardStatsError> for ApiError {
    fn from(error: CardStatsError) -> Self {
        match error {
            CardStatsError::NotFound => Self::not_found(),
            CardStatsError::Invalid(violations) => violations.into(),
            CardStatsError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<CheckError> for ApiError {
    fn from(error: CheckError) -> Self {
        let format = |code: &str, message: String| {
            Self::validation(vec![FieldError {
                field: "format".into(),
                code: code.into(),
                message,
            }])
        };
        match error {
            CheckError::Invalid(violations) => violations.into(),
            CheckError::UnknownFormat(_) => format(
                "unknown",
                "must be a format of this game, by slug or id".into(),
            ),
            CheckError::NoFormat => format(
                "required",
                "the deck has no format: name one with ?format=<slug or id>".into(),
            ),
            CheckError::NoRules(ref rules_less) => {
                let message = format!(
                    "the format {} ({}) has no deck rules to check against",
                    rules_less.name, rules_less.slug
                );
                format("no_rules", message)
            }
            CheckError::NotFound => Self::not_found(),
            CheckError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<PatchCollectionError> for ApiError {
    fn from(error: PatchCollectionError) -> Self {
        match error {
            PatchCollectionError::Invalid(violations) => violations.into(),
            PatchCollectionError::Unresolved(items) => Self::unresolved("changes", items),
            PatchCollectionError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<ImportError> for ApiError {
    fn from(error: ImportError) -> Self {
        match error {
            ImportError::Invalid(violations) => violations.into(),
            ImportError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<NeedsError> for ApiError {
    fn from(error: NeedsError) -> Self {
        match error {
            NeedsError::NotFound => Self::not_found(),
            NeedsError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<EventError> for ApiError {
    fn from(error: EventError) -> Self {
        match error {
            EventError::CursorExpired => Self::new(
                StatusCode::GONE,
                "SERVICE_CURSOR_EXPIRED",
                "the cursor points before the oldest retained event; start again without `after`",
            ),
            EventError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<GuideError> for ApiError {
    fn from(error: GuideError) -> Self {
        match error {
            GuideError::Invalid(violations) => violations.into(),
            GuideError::NotFound => Self::not_found(),
            GuideError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::NotFound => Self::not_found(),
            WebhookError::TooMany => Self::bad_request(error.to_string())
                .with_details(json!({ "reason": "too_many_endpoints" })),
            WebhookError::Invalid(violations) => violations.into(),
            WebhookError::Unexpected(error) => Self::unexpected(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deckhand_domain::StoreUnavailable;

    #[test]
    fn store_unavailability_is_a_503_with_retry_after() {
        let error = ApiError::unexpected(anyhow::Error::new(StoreUnavailable).context("query"));
        assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
        let response = error.error_response();
        assert!(response.headers().contains_key(header::RETRY_AFTER));
    }

    #[test]
    fn other_unexpected_errors_reveal_nothing() {
        let error = ApiError::unexpected(anyhow::anyhow!("relation \"users\" does not exist"));
        assert_eq!(error.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            error.body(),
            json!({"error": "SERVICE_INTERNAL_ERROR", "message": "internal error", "details": {}})
        );
    }

    #[test]
    fn insufficient_scope_lists_required_and_granted() {
        let error: ApiError = AccessDenied::InsufficientScope {
            required: vec!["decks:read".into()],
            granted: vec!["decks:write".into()],
        }
        .into();
        assert_eq!(error.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            error.body()["details"],
            json!({"required": ["decks:read"], "granted": ["decks:write"]})
        );
    }
}
