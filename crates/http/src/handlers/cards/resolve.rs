use actix_web::{HttpResponse, post, web};
use deckhand_domain::catalog::{CardIdentifier, MAX_IDENTIFIERS};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::access::{GamePath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::body::{Body, json_or_text};
use crate::dto::cards::{CardIdentifierDto, ResolvedDto, UnresolvedDto};
use crate::error::{ApiError, FieldError};
use crate::state::HttpState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// At most 1000. JSON text in form and multipart bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false)]
    identifiers: Option<Vec<CardIdentifierDto>>,
    /// A format of the game, by slug or id: keeps only printings legal or restricted there.
    #[serde(default)]
    format: Option<String>,
    /// 422 instead of 200 when any identifier is unresolved.
    #[serde(default)]
    strict: Option<bool>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ResolveQuery {
    /// Strict mode, as the body's `strict` (either turns it on).
    strict: Option<bool>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResolveResponse {
    resolved: Vec<ResolvedDto>,
    unresolved: Vec<UnresolvedDto>,
}

fn field(field: &str, code: &str, message: String) -> ApiError {
    ApiError::validation(vec![FieldError {
        field: field.into(),
        code: code.into(),
        message,
    }])
}

/// Resolves partner-supplied card identifiers to printings.
#[utoipa::path(
    tag = "cards",
    params(GamePath, ResolveQuery),
    request_body(content = ResolveBody, content_type = "application/json"),
    responses(
        (status = 200, body = ResolveResponse),
        (status = 400, description = "Invalid body, more than 1000 identifiers, or an unknown format"),
        (status = 404, description = "Unknown game"),
        (status = 422, description = "Strict mode with an unresolved identifier; `details.unresolved` lists them"),
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[post("/games/{game}/cards/resolve")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn resolve_cards(
    state: web::Data<HttpState>,
    PathAccess { game, database, .. }: PathAccess<ReadDecks, GamePath, ReplicaMayServe>,
    query: crate::query::Query<ResolveQuery>,
    Body(body): Body<ResolveBody>,
) -> Result<HttpResponse, ApiError> {
    let identifiers: Vec<CardIdentifier> = body
        .identifiers
        .ok_or_else(|| field("identifiers", "required", "identifiers is required".into()))?
        .into_iter()
        .map(CardIdentifier::from)
        .collect();
    if identifiers.len() > MAX_IDENTIFIERS {
        return Err(field(
            "identifiers",
            "too_many",
            format!("at most {MAX_IDENTIFIERS} identifiers per request"),
        ));
    }
    let format = match body.format.as_deref() {
        None => None,
        Some(wanted) => Some(
            state
                .services_on(database)
                .catalog
                .format(&game, wanted)
                .await?
                .ok_or_else(|| {
                    field(
                        "format",
                        "unknown",
                        format!("{} has no format {wanted:?}", game.slug),
                    )
                })?,
        ),
    };

    let resolution = state
        .services_on(database)
        .catalog
        .resolve(&game, &identifiers, format.as_ref())
        .await?;
    let strict = query.strict.unwrap_or(false) || body.strict.unwrap_or(false);
    if strict && !resolution.unresolved.is_empty() {
        return Err(ApiError::card_resolution_failed(
            resolution.unresolved.len(),
            serde_json::to_value(
                resolution
                    .unresolved
                    .into_iter()
                    .map(UnresolvedDto::from)
                    .collect::<Vec<_>>(),
            )
            .map_err(anyhow::Error::from)?,
        ));
    }
    Ok(HttpResponse::Ok().json(ResolveResponse {
        resolved: resolution.resolved.into_iter().map(Into::into).collect(),
        unresolved: resolution.unresolved.into_iter().map(Into::into).collect(),
    }))
}
