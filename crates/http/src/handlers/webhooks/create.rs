use actix_web::{HttpResponse, post, web};

use super::{NewWebhookBody, WebhookWithSecret, partner};
use crate::auth::Caller;
use crate::body::Body;
use crate::created::created;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// Register a webhook endpoint (at most 16 per partner); its secret is shown only now.
#[utoipa::path(
    tag = "webhooks",
    request_body = NewWebhookBody,
    responses(
        (status = 201, body = WebhookWithSecret, headers(
            ("Location" = String, description = "The new endpoint's URL"),
        )),
        (status = 400, description = "Fields are invalid: a URL that is not `https://` or reaches a non-public address, unknown types, games outside the partner's scopes; or the partner has 16 endpoints", body = ErrorEnvelope),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[post("/webhooks")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn create_webhook(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    Body(body): Body<NewWebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let partner = partner(&principal)?;
    let (endpoint, secret) = state.services.webhooks.create(partner, body.into()).await?;
    Ok(created(&state, &format!("/webhooks/{}", endpoint.id.0))
        .json(WebhookWithSecret::new(&endpoint, secret)))
}
