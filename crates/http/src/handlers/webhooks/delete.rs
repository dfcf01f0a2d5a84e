use actix_web::{HttpResponse, delete, web};
use deckhand_domain::webhooks::WebhookId;

use super::{WebhookPath, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// Delete a webhook endpoint and its delivery log.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[delete("/webhooks/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn delete_webhook(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .webhooks
        .delete(partner(&principal)?, WebhookId(path.id))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
