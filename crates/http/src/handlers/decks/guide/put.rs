use actix_web::{HttpResponse, put, web};
use deckhand_domain::decks::{GuideInput, GuideView};
use serde::Deserialize;
use utoipa::ToSchema;

use super::GuideDto;
use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StrategyGuideBody {
    /// `markdown` or `text`.
    #[schema(value_type = crate::dto::names::GuideContentTypeName)]
    content_type: String,
    /// At most 200000 characters.
    content: String,
    #[serde(default)]
    is_premium: bool,
}

/// Create or replace the deck's strategy guide (extension; owner only).
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    request_body = StrategyGuideBody,
    responses(
        (status = 201, body = GuideDto, description = "Created", headers(
            ("Location" = String, description = "The guide's URL"),
        )),
        (status = 200, body = GuideDto, description = "Replaced"),
        (status = 400), (status = 401), (status = 403),
        (status = 404, description = "No such deck, or not the caller's"),
    ),
    security(("OAuth2" = ["decks:write"]))
)]
#[put("/games/{game}/decks/{id}/guide")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn put_guide(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<WriteDecks, DeckPath>,
    Body(body): Body<StrategyGuideBody>,
) -> Result<HttpResponse, ApiError> {
    let input = GuideInput {
        content_type: body.content_type,
        content: body.content,
        is_premium: body.is_premium,
    };
    let (guide, created) = state
        .services
        .decks
        .put_guide(&principal, &game, deck, input)
        .await?;
    let body = GuideDto::from(GuideView {
        guide,
        is_truncated: false,
    });
    Ok(if created {
        crate::created::created(
            &state,
            &format!("/games/{}/decks/{}/guide", game.slug, deck.0),
        )
    } else {
        HttpResponse::Ok()
    }
    .json(body))
}
