use actix_web::{HttpResponse, patch, web};
use deckhand_domain::webhooks::WebhookId;

use super::{WebhookDto, WebhookPatchBody, WebhookPath, partner};
use crate::auth::Caller;
use crate::body::Body;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// Change a webhook endpoint; `enabled: true` enables one the service disabled.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath),
    request_body = WebhookPatchBody,
    responses(
        (status = 200, body = WebhookDto),
        (status = 400, description = "Fields are invalid (`details.fields`)", body = ErrorEnvelope),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[patch("/webhooks/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn update_webhook(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
    Body(body): Body<WebhookPatchBody>,
) -> Result<HttpResponse, ApiError> {
    let endpoint = state
        .services
        .webhooks
        .update(partner(&principal)?, WebhookId(path.id), body.into())
        .await?;
    Ok(HttpResponse::Ok().json(WebhookDto::from(&endpoint)))
}
