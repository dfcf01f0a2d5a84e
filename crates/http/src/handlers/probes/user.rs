use actix_web::{HttpResponse, get};
use deckhand_domain::identity::Lane;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::ApiError;

#[derive(Debug, Serialize, ToSchema)]
pub struct UserProbe {
    /// Opaque principal (`user:<id>` or `partner:<slug>+user:<id>`), for audit, not display.
    caller: String,
    user: ProbeUser,
    scopes: Vec<String>,
    tier: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProbeUser {
    /// The bare user id: stable, equal to `author.id` on the user's decks.
    id: String,
    /// The mutable display handle.
    username: String,
}

/// The user behind a PAT or an OAuth token; also the OAuth userinfo endpoint.
#[utoipa::path(
    tag = "probes",
    responses(
        (status = 200, body = UserProbe),
        (status = 401, description = "Missing, refused, or partner-only credentials"),
    ),
    security(("PersonalAccessToken" = []), ("OAuth2" = []), ("OAuth2" = [], "DPoP" = []))
)]
#[get("/_probe/user")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn probe_user(Caller(principal): Caller) -> Result<HttpResponse, ApiError> {
    principal.require_lane(&[
        Lane::PersonalAccessToken,
        Lane::OAuthBearer,
        Lane::OAuthDpop,
    ])?;
    let user = principal
        .user
        .as_ref()
        .ok_or_else(ApiError::authentication_failed)?;
    Ok(HttpResponse::Ok().json(UserProbe {
        caller: principal.caller(),
        user: ProbeUser {
            id: user.id.to_string(),
            username: user.username.as_str().to_owned(),
        },
        scopes: principal.scopes.names(),
        tier: principal.tier().as_str().to_owned(),
    }))
}
