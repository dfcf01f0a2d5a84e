//! Cross-cutting request handling: request ids, the request log and metrics, and the envelope
//! for failures that never reached a handler.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, Next};
use actix_web::{HttpMessage as _, ResponseError as _, web};
use futures_util::FutureExt as _;

use crate::auth::CallerName;
use crate::error::ApiError;
use crate::state::HttpState;

pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The id of the current request, in its extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// A caller-supplied id is echoed only when it is short and plain, so that it can neither
/// break a log line nor smuggle anything into a header.
fn is_sane_request_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=".contains(&b))
}

/// Outermost middleware: assigns the request id, catches panics, and after the response is
/// final sets `X-Request-Id`, writes the one log line of the request and records its metrics.
pub async fn request_context(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let request_id = request
        .headers()
        .get(X_REQUEST_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| is_sane_request_id(id))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    request
        .extensions_mut()
        .insert(RequestId(request_id.clone()));
    let method = request.method().as_str().to_owned();
    let state = request.app_data::<web::Data<HttpState>>().cloned();

    let outcome = AssertUnwindSafe(next.call(request)).catch_unwind().await;
    let mut response = match outcome {
        Ok(Ok(response)) => response,
        // A panic, or an error no inner layer turned into a response. The request went down
        // with it, so answer with an error that carries its own envelope and request id.
        failed => {
            let status = match &failed {
                Ok(Err(error)) => error.as_response_error().status_code(),
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            tracing::error!(
                request_id,
                method,
                status = status.as_u16(),
                "request failed outside any handler (a panic?)"
            );
            if let Some(state) = &state {
                state.metrics.observe(
                    "unmatched",
                    &method,
                    status.as_u16(),
                    started.elapsed().as_secs_f64(),
                );
            }
            let error = ApiError::for_status(status);
            return Err(match HeaderValue::from_str(&request_id) {
                Ok(value) => error.with_header(X_REQUEST_ID, value),
                Err(_) => error,
            }
            .into());
        }
    };

    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert(X_REQUEST_ID, value);
    }
    let elapsed = started.elapsed();
    let request = response.request();
    let route = request
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let status = response.status().as_u16();
    let caller = request
        .extensions()
        .get::<CallerName>()
        .map_or_else(|| "-".to_owned(), |name| name.0.clone());
    tracing::info!(
        target: "deckhand::request",
        request_id,
        caller,
        method,
        route,
        status,
        latency_ms = elapsed.as_secs_f64() * 1000.0,
        "request"
    );
    if let Some(state) = &state {
        state
            .metrics
            .observe(&route, &method, status, elapsed.as_secs_f64());
    }
    Ok(response)
}

/// Error responses that are not already an envelope (actix's own 404/413/500, a caught panic)
/// get the envelope for their status.
pub fn envelope_bare_errors<B>(
    response: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if is_json {
        return Ok(ErrorHandlerResponse::Response(
            response.map_into_left_body(),
        ));
    }
    let enveloped = ApiError::for_status(response.status()).error_response();
    let (request, _) = response.into_parts();
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(request, enveloped).map_into_right_body(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_echoed_only_when_plain() {
        assert!(is_sane_request_id("3f2c-abc_1.2:trace/x+y="));
        assert!(!is_sane_request_id(""));
        assert!(!is_sane_request_id("has space"));
        assert!(!is_sane_request_id("line\nbreak"));
        assert!(!is_sane_request_id(&"a".repeat(129)));
    }
}
