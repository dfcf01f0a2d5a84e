//! Cross-cutting request handling: request ids, the request log and metrics, and the envelope
//! for failures that never reached a handler.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, Next};
use actix_web::web::{Bytes, BytesMut};
use actix_web::{HttpMessage as _, ResponseError as _, web};
use deckhand_domain::identity::Tier;
use futures_util::{FutureExt as _, StreamExt as _};
use tracing::Instrument as _;

use crate::auth::{BodyDigest, CallerName, X_SIGNATURE};
use crate::body::MAX_BODY_BYTES;
use crate::client_ip::client_key;
use crate::error::ApiError;
use crate::head;
use crate::nul;
use crate::rate_limit::{Decision, LimitKey};
use crate::route_index::RouteIndex;
use crate::state::HttpState;
use crate::{API_BASE, OAUTH_BASE};

pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A caller-supplied id is echoed only when it is short and plain, so that it can neither
/// break a log line nor smuggle anything into a header.
fn is_sane_request_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=".contains(&b))
}

/// Outermost middleware: assigns the request id, answers a HEAD as its GET, catches panics,
/// and after the response is final sets `X-Request-Id`, writes the one log line of the request
/// and records its metrics.
pub async fn request_context(
    mut request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let request_id = request
        .headers()
        .get(X_REQUEST_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| is_sane_request_id(id))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let method = request.method().as_str().to_owned();
    head::answer_as_get(&mut request);
    let state = request.app_data::<web::Data<HttpState>>().cloned();

    // The parent of the handler's, services' and adapters' spans (all at debug level: see
    // docs/operations.md for how to see where a slow request's time went).
    let span = tracing::debug_span!("request", request_id, method, path = request.path());
    let outcome = AssertUnwindSafe(next.call(request))
        .catch_unwind()
        .instrument(span)
        .await;
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
                    status,
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
    let status = response.status();
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
        status = status.as_u16(),
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

/// The gate of the public API: authenticates the request once (reading and hashing the body
/// first when it is signed), counts it against the caller's rate limit, and puts the
/// `RateLimit-*` headers on the response. Requests whose credentials fail are counted against
/// the client IP's anonymous quota, so guessing credentials is limited too. Paths outside the
/// API pass untouched.
pub async fn api_gate(
    mut request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let state = request.app_data::<web::Data<HttpState>>().cloned();
    let Some(state) = state.filter(|_| is_resource_path(routed_path(&request))) else {
        return next
            .call(request)
            .await
            .map(ServiceResponse::map_into_left_body);
    };
    // Before anything reads the URL: no path segment or query parameter may hold a NUL.
    if nul::path_has_nul(request.path()) {
        return Ok(request
            .error_response(ApiError::not_found())
            .map_into_right_body());
    }
    if let Some(field) =
        nul::field_with_nul(form_urlencoded::parse(request.query_string().as_bytes()))
    {
        return Ok(request
            .error_response(nul::refused(field))
            .map_into_right_body());
    }
    if request.headers().contains_key(X_SIGNATURE) {
        let http_request = request.request().clone();
        let read = crate::body::within_body_timeout(&http_request, read_body(&mut request)).await;
        match read {
            Ok(bytes) => {
                request
                    .extensions_mut()
                    .insert(BodyDigest(deckhand_auth::sha256(&bytes)));
                request.set_payload(Payload::from(bytes));
            }
            Err(error) => return Ok(request.error_response(error).map_into_right_body()),
        }
    }
    let ip = client_key(request.request(), &state.config.trusted_proxies);
    if let Some(left) = state.revoked_uses.blocked(ip, Instant::now()) {
        return Ok(request
            .error_response(revoked_token_abuse(left))
            .map_into_right_body());
    }
    let caller = crate::auth::authenticate(request.request(), &state).await;
    if let Err(error) = &caller
        && error.code() == REVOKED_TOKEN_CODE
        && let Some(left) = state.revoked_uses.record(ip, Instant::now())
    {
        return Ok(request
            .error_response(revoked_token_abuse(left))
            .map_into_right_body());
    }
    let (tier, key) = match &caller {
        Ok(caller) if !caller.0.is_anonymous() => {
            (caller.0.tier(), LimitKey::Caller(caller.0.caller()))
        }
        _ => (Tier::anonymous(), LimitKey::Client(ip)),
    };
    let decision = state.rate_limits.check(tier.as_str(), &key);
    let mut response = match (decision, caller) {
        (
            Decision::Limited {
                limit,
                retry_after_seconds,
                ..
            },
            _,
        ) => request
            .error_response(ApiError::rate_limited(
                limit,
                crate::rate_limit::WINDOW_SECONDS,
                retry_after_seconds,
            ))
            .map_into_right_body(),
        (_, Err(error)) => request.error_response(error).map_into_right_body(),
        (_, Ok(_)) => match refused_method(&request) {
            Some(refusal) => request.error_response(refusal).map_into_right_body(),
            None => next.call(request).await?.map_into_left_body(),
        },
    };
    rate_limit_headers(response.headers_mut(), decision);
    Ok(response)
}

/// 405 with `Allow` for a method the request's path does not take, before the router could
/// hand it to a `{parameter}` pattern beside the path (see `RouteIndex::refuses`).
fn refused_method(request: &ServiceRequest) -> Option<ApiError> {
    let routes = request.app_data::<web::Data<RouteIndex>>()?;
    let allowed = routes.refuses(routed_path(request), request.method().as_str())?;
    Some(ApiError::method_not_allowed(&allowed))
}

/// The path the router matches, which is what decides where a request goes: the request
/// line's path with every percent-encoded byte decoded except `%`, `/` and `+` (actix's
/// requoting). `/%61pi/public/v1/games/mtg/decks` is routed to the deck list, so it must be
/// gated as `/api/public/v1/games/mtg/decks`; deciding on the raw path would let an encoded
/// spelling walk around the gate. (What a signature covers stays the raw path: see
/// `auth::request_facts`.)
pub(crate) fn routed_path(request: &ServiceRequest) -> &str {
    request.match_info().as_str()
}

/// Whether `path` (as routed) is the resource server's: under the API base, outside the OAuth
/// endpoints, which authenticate clients their own way (RFC 6749) and answer in their own
/// formats, so the lanes, quotas and envelope do not apply to them. Prefixes end at a segment
/// boundary, as the router's scopes do.
fn is_resource_path(path: &str) -> bool {
    let under = |base: &str| {
        path.strip_prefix(base)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    under(API_BASE) && !under(OAUTH_BASE)
}

/// The envelope code of a revoked OAuth token, whose repeated use closes the API to an IP.
const REVOKED_TOKEN_CODE: &str = "SERVICE_OAUTH2_TOKEN_REVOKED";

/// 429 for an IP that used revoked tokens too often.
fn revoked_token_abuse(left: std::time::Duration) -> ApiError {
    ApiError::rate_limited(
        crate::revoked_uses::THRESHOLD as u32,
        crate::revoked_uses::WINDOW.as_secs(),
        left.as_secs().max(1),
    )
}

/// The whole body, within the API's size limit.
pub(crate) async fn read_body(request: &mut ServiceRequest) -> Result<Bytes, ApiError> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES) {
        return Err(ApiError::payload_too_large());
    }
    let mut payload = request.take_payload();
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|_| ApiError::bad_request("the request body could not be read"))?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::payload_too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

fn rate_limit_headers(headers: &mut HeaderMap, decision: Decision) {
    let (limit, remaining, reset) = match decision {
        Decision::Unlimited => return,
        Decision::Allowed {
            limit,
            remaining,
            reset_seconds,
        } => (limit, remaining, reset_seconds),
        Decision::Limited {
            limit,
            reset_seconds,
            ..
        } => (limit, 0, reset_seconds),
    };
    headers.insert(
        HeaderName::from_static("ratelimit-limit"),
        HeaderValue::from(limit),
    );
    headers.insert(
        HeaderName::from_static("ratelimit-remaining"),
        HeaderValue::from(remaining),
    );
    headers.insert(
        HeaderName::from_static("ratelimit-reset"),
        HeaderValue::from(reset),
    );
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
    // JSON is already an envelope (or an OAuth error body); HTML is an OAuth page.
    let is_own_format = is_json
        || response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/html"));
    if is_own_format {
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
    fn resource_paths_end_their_prefixes_at_a_segment() {
        assert!(is_resource_path("/api/public/v1/games/mtg/decks"));
        assert!(is_resource_path("/api/public/v1"));
        assert!(is_resource_path("/api/public/v1/oauthx"));
        assert!(!is_resource_path("/api/public/v1/oauth/token"));
        assert!(!is_resource_path("/api/public/v1x/games"));
        assert!(!is_resource_path("/healthz"));
    }

    #[test]
    fn request_ids_are_echoed_only_when_plain() {
        assert!(is_sane_request_id("3f2c-abc_1.2:trace/x+y="));
        assert!(!is_sane_request_id(""));
        assert!(!is_sane_request_id("has space"));
        assert!(!is_sane_request_id("line\nbreak"));
        assert!(!is_sane_request_id(&"a".repeat(129)));
    }
}
