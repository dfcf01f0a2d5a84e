//! `OAuthError`: where the outcomes of the OAuth endpoints (token, introspection, revocation)
//! become statuses and RFC 6749 §5.2 bodies `{error, error_description}`. These endpoints are
//! outside the resource server, so they never answer with its envelope.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, HttpResponseBuilder, ResponseError};
use deckhand_domain::oauth::TokenError;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug)]
pub struct OAuthError {
    status: StatusCode,
    error: &'static str,
    description: String,
}

/// The body of every OAuth endpoint error (RFC 6749 §5.2).
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope`, `invalid_dpop_proof` or `server_error`.
    pub error: &'static str,
    pub error_description: String,
}

impl OAuthError {
    pub fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status,
            error,
            description: description.into(),
        }
    }

    pub fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", description)
    }

    /// RFC 9449 §5: a bad proof at the token endpoint is a 400, never the resource server's 401.
    pub fn invalid_dpop_proof(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_dpop_proof", description)
    }
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.error,
            self.description
        )
    }
}

/// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1): responses of the OAuth
/// endpoints carry credentials or say something about them.
pub fn no_store(mut builder: HttpResponseBuilder) -> HttpResponseBuilder {
    builder
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")));
    builder
}

impl ResponseError for OAuthError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    // `invalid_client` carries no `WWW-Authenticate`: public-api.md §7.2 says so explicitly,
    // and it stands over RFC 6749's suggestion (see docs/oauth.md).
    fn error_response(&self) -> HttpResponse {
        no_store(HttpResponse::build(self.status)).json(OAuthErrorBody {
            error: self.error,
            error_description: self.description.clone(),
        })
    }
}

impl From<TokenError> for OAuthError {
    fn from(error: TokenError) -> Self {
        let bad = StatusCode::BAD_REQUEST;
        match error {
            TokenError::InvalidRequest(reason) => Self::new(bad, "invalid_request", reason),
            TokenError::InvalidClient(reason) => {
                Self::new(StatusCode::UNAUTHORIZED, "invalid_client", reason)
            }
            TokenError::InvalidGrant(reason) => Self::new(bad, "invalid_grant", reason),
            TokenError::UnauthorizedClient => Self::new(
                bad,
                "unauthorized_client",
                error_text(&TokenError::UnauthorizedClient),
            ),
            TokenError::UnsupportedGrantType => Self::new(
                bad,
                "unsupported_grant_type",
                error_text(&TokenError::UnsupportedGrantType),
            ),
            TokenError::InvalidScope(reason) => Self::new(bad, "invalid_scope", reason),
            TokenError::InvalidDpopProof(reason) => Self::invalid_dpop_proof(reason),
            TokenError::Unexpected(error) => {
                // Logged like every unexpected error, answered without internals; a store that
                // cannot be reached is a 503 so clients retry.
                let api = crate::error::ApiError::unexpected(error);
                if api.status() == StatusCode::SERVICE_UNAVAILABLE {
                    Self::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "temporarily_unavailable",
                        "the service is temporarily unavailable; retry later",
                    )
                } else {
                    Self::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "internal error",
                    )
                }
            }
        }
    }
}

fn error_text(error: &TokenError) -> String {
    error.to_string()
}
