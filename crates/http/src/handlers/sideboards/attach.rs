use actix_web::{HttpResponse, post, web};

use super::AttachBody;
use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::error::ApiError;
use crate::state::HttpState;

/// Attach a deck of this game the caller can read (extension; owner only). Attaching an
/// attached deck changes nothing.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    request_body = AttachBody,
    responses(
        (status = 204, description = "Attached"),
        (status = 400, description = "`deck_id` is malformed or names no deck the caller can read"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide, or not the caller's"),
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[post("/games/{game}/sideboard-guides/{id}/decks")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn attach_deck(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuidePath>,
    Body(body): Body<AttachBody>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .sideboard_guides
        .attach(&principal, &game, path.id, &body.deck_id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
