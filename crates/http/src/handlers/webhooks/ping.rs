use actix_web::{HttpResponse, post, web};
use deckhand_domain::webhooks::WebhookId;

use super::{DeliveryDto, WebhookPath, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// Queue a `webhook.ping` event for the endpoint (not in the feed); the answer is the
/// delivery, to follow in the log.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath),
    responses(
        (status = 202, body = DeliveryDto),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[post("/webhooks/{id}/ping")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn ping_webhook(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    let delivery = state
        .services
        .webhooks
        .ping(partner(&principal)?, WebhookId(path.id))
        .await?;
    Ok(HttpResponse::Accepted().json(DeliveryDto::from(&delivery)))
}
