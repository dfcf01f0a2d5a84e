use actix_web::{HttpResponse, post, web};
use deckhand_domain::webhooks::WebhookId;

use super::{WebhookPath, WebhookWithSecret, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// A new signing secret, shown this once; for 24 hours deliveries carry signatures by the old
/// and the new secret.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath),
    responses(
        (status = 200, body = WebhookWithSecret),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[post("/webhooks/{id}/secret")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn rotate_webhook_secret(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    let (endpoint, secret) = state
        .services
        .webhooks
        .rotate_secret(partner(&principal)?, WebhookId(path.id))
        .await?;
    Ok(HttpResponse::Ok().json(WebhookWithSecret::new(&endpoint, secret)))
}
