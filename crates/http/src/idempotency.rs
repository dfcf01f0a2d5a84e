//! `Idempotency-Key` on the creating POSTs: one route middleware, [`idempotent`], wrapped
//! around each of those operations (`wrap = "..."` on their route), so no handler knows of
//! it. It reads the key and the body, asks the domain whether to run or replay
//! (`deckhand_domain::idempotency`, where the rules live), and hands the response the handler
//! made back to the domain to keep or to release the key.

use actix_web::body::{BoxBody, MessageBody, to_bytes};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderMap, HeaderName};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use deckhand_domain::idempotency::{
    Begin, Claim, Fingerprint, IdempotencyKey, KEPT_HEADERS, StoredResponse,
};
use utoipa::IntoParams;

use crate::auth::authenticate;
use crate::error::{ApiError, IDEMPOTENCY_KEY};
use crate::middleware::read_body;
use crate::state::HttpState;

/// Set to `true` on a response that replays the stored one.
pub(crate) const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The `Idempotency-Key` request header, as the OpenAPI document describes it.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(
    dead_code,
    reason = "read by the `idempotent` middleware from the request, never deserialised"
)]
pub(crate) struct IdempotencyKeyHeader {
    /// 1 to 255 printable ASCII characters, unique per intended operation (a UUID is a good
    /// key). A repeat within 24 hours with the same method, path and body gets the first
    /// response again (with `Idempotent-Replayed: true`) and changes nothing; with another
    /// body it is a 422; while the first still runs, a 409 (`details.reason` `in_progress`).
    #[param(
        rename = "Idempotency-Key",
        example = "5f0c7c1e-3d8a-4f5e-9a51-2b7f3c9d0e11",
        // As it arrives: HTTP drops spaces around a header value.
        min_length = 1,
        max_length = 255,
        pattern = "^[!-~]([ -~]*[!-~])?$"
    )]
    idempotency_key: Option<String>,
}

/// Runs the wrapped operation once per key: see the module docs and docs/api.md.
pub(crate) async fn idempotent(
    mut request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(raw_key) = request
        .headers()
        .get(IDEMPOTENCY_KEY)
        .map(|value| value.as_bytes().to_vec())
    else {
        return Ok(next.call(request).await?.map_into_boxed_body());
    };
    let Some(state) = request.app_data::<web::Data<HttpState>>().cloned() else {
        let error = ApiError::unexpected(anyhow::anyhow!("HttpState is not registered"));
        return Ok(request.error_response(error));
    };
    // The API gate authenticated the request already; this reuses its result.
    let principal = match authenticate(request.request(), &state).await {
        Ok(caller) => caller.0,
        Err(error) => return Ok(request.error_response(error)),
    };
    if principal.is_anonymous() {
        // Nothing to scope a key to; every wrapped operation answers 401 anyway.
        return Ok(next.call(request).await?.map_into_boxed_body());
    }
    let key = match IdempotencyKey::parse(&raw_key) {
        Ok(key) => key,
        Err(invalid) => return Ok(request.error_response(ApiError::from(invalid))),
    };
    let body = match read_body(&mut request).await {
        Ok(body) => body,
        Err(error) => return Ok(request.error_response(error)),
    };
    let target = request.uri().path_and_query().map_or_else(
        || request.path().to_owned(),
        |target| target.as_str().to_owned(),
    );
    let fingerprint = Fingerprint::of(request.method().as_str(), &target, &body);
    request.set_payload(Payload::from(body));

    // Errors become responses here: an `Err` would reach the outermost middleware, which
    // answers with a generic envelope for the status.
    let claim = match state
        .services
        .idempotency
        .begin(&principal, key, fingerprint)
        .await
    {
        Ok(Begin::Replay(stored)) => return Ok(request.into_response(replay(stored))),
        Ok(Begin::Run(claim)) => claim,
        Err(error) => return Ok(request.error_response(ApiError::from(error))),
    };
    let response = match next.call(request).await {
        Ok(response) => response,
        Err(error) => {
            abandon(&state, claim).await;
            return Err(error);
        }
    };
    let (request, response) = response.into_parts();
    let (head, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body).await else {
        abandon(&state, claim).await;
        return Ok(ServiceResponse::new(
            request,
            HttpResponse::from_error(ApiError::internal()),
        ));
    };
    let stored = StoredResponse {
        status: head.status().as_u16(),
        headers: kept_headers(head.headers()),
        body: bytes.to_vec(),
    };
    if let Err(error) = state.services.idempotency.finish(claim, &stored).await {
        // The operation is done and its answer goes out; the key stays claimed until it is
        // taken as abandoned, so a retry meanwhile gets a 409, never a second create.
        tracing::error!(
            error = format!("{error:#}"),
            "could not keep an idempotent response"
        );
    }
    Ok(ServiceResponse::new(
        request,
        head.set_body(bytes).map_into_boxed_body(),
    ))
}

/// Frees the key of a request that produced no response to keep.
async fn abandon(state: &HttpState, claim: Claim) {
    if let Err(error) = state.services.idempotency.abandon(claim).await {
        tracing::error!(
            error = format!("{error:#}"),
            "could not release an idempotency key"
        );
    }
}

fn kept_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    KEPT_HEADERS
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?.to_str().ok()?;
            Some(((*name).to_owned(), value.to_owned()))
        })
        .collect()
}

/// The stored response again, marked as a replay.
fn replay(stored: StoredResponse) -> HttpResponse {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    for header in stored.headers {
        response.insert_header(header);
    }
    response
        .insert_header((IDEMPOTENT_REPLAYED, "true"))
        .body(stored.body)
}
