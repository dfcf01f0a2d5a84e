use actix_web::{HttpResponse, get};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::ApiError;

#[derive(Debug, Serialize, ToSchema)]
pub struct PublicProbe {
    /// `anonymous`, or the caller string of the credentials sent.
    caller: String,
    scopes: Vec<String>,
}

/// Anonymous probe: needs no credentials; reports the caller if some were sent.
#[utoipa::path(
    tag = "probes",
    responses(
        (status = 200, body = PublicProbe),
        (status = 401, description = "Credentials were sent and refused"),
    ),
    security((), ("OAuth2" = []))
)]
#[get("/_probe/public")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn probe_public(Caller(principal): Caller) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(PublicProbe {
        caller: principal.caller(),
        scopes: principal.scopes.names(),
    }))
}
