use actix_web::{HttpResponse, get};
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::ApiError;

#[derive(Debug, Serialize, ToSchema)]
pub struct PartnerProbe {
    /// `partner:<slug>`.
    caller: String,
    scopes: Vec<String>,
    /// Game slugs, or `["*"]` for every game.
    game_scopes: Vec<String>,
    /// The partner's rate-limit tier.
    tier: String,
}

/// The partner behind a signature (without a PAT) or an API key.
#[utoipa::path(
    tag = "probes",
    responses(
        (status = 200, body = PartnerProbe),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key"),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[get("/_probe/partner")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn probe_partner(Caller(principal): Caller) -> Result<HttpResponse, ApiError> {
    let partner = crate::auth::partner_alone(&principal)?;
    Ok(HttpResponse::Ok().json(PartnerProbe {
        caller: principal.caller(),
        scopes: principal.scopes.names(),
        game_scopes: partner.game_scopes.names(),
        tier: partner.tier.as_str().to_owned(),
    }))
}
