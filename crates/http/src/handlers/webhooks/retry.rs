use actix_web::{HttpResponse, post, web};
use deckhand_domain::webhooks::{DeliveryId, WebhookId};

use super::{DeliveryPath, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// Attempt a delivery again now. A pending one is attempted early; one that had ended gets
/// one more attempt (with the same `webhook-id`).
#[utoipa::path(
    tag = "webhooks",
    params(DeliveryPath),
    responses(
        (status = 202, description = "Queued"),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner, or no such delivery of it", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[post("/webhooks/{id}/deliveries/{delivery_id}/retry")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id, delivery = %path.delivery_id))]
pub async fn retry_delivery(
    state: web::Data<HttpState>,
    path: web::Path<DeliveryPath>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .webhooks
        .retry(
            partner(&principal)?,
            WebhookId(path.id),
            DeliveryId(path.delivery_id),
        )
        .await?;
    Ok(HttpResponse::Accepted().finish())
}
