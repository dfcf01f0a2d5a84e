use actix_web::{HttpResponse, put, web};
use deckhand_domain::decks::{DeckId, GuideInput, GuideView};
use deckhand_domain::identity::{AccessRule, Scope};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::GuideDto;
use crate::auth::Caller;
use crate::body::Body;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GuideBody {
    /// `markdown` or `text`.
    content_type: String,
    /// At most 200000 characters.
    content: String,
    #[serde(default)]
    is_premium: bool,
}

/// Create or replace the deck's strategy guide (extension; owner only).
#[utoipa::path(
    tag = "decks",
    request_body = GuideBody,
    responses(
        (status = 201, body = GuideDto, description = "Created"),
        (status = 200, body = GuideDto, description = "Replaced"),
        (status = 400), (status = 401), (status = 403),
        (status = 404, description = "No such deck, or not the caller's"),
    )
)]
#[put("/games/{game}/decks/{id}/guide")]
pub async fn put_guide(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    path: web::Path<(String, Uuid)>,
    Body(body): Body<GuideBody>,
) -> Result<HttpResponse, ApiError> {
    let (game, id) = path.into_inner();
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::Authenticated(Scope::DecksWrite),
    )
    .await?;
    let input = GuideInput {
        content_type: body.content_type,
        content: body.content,
        is_premium: body.is_premium,
    };
    let (guide, created) = state
        .services
        .decks
        .put_guide(&principal, &game, DeckId(id), input)
        .await?;
    let body = GuideDto::from(GuideView {
        guide,
        is_truncated: false,
    });
    Ok(if created {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    }
    .json(body))
}
