use actix_web::{HttpResponse, get, web};

use crate::access::known_game;
use crate::auth::Caller;
use crate::dto::games::FormatListItem;
use crate::error::ApiError;
use crate::state::HttpState;

/// The formats of a game, with their deck rules (`null` for a format without rules).
#[utoipa::path(
    tag = "games",
    params(("game" = String, Path, description = "Game slug")),
    responses(
        (status = 200, body = Vec<FormatListItem>),
        (status = 404, description = "Unknown game"),
    ),
    security((), ("OAuth2" = []))
)]
#[get("/games/{game}/formats")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game))]
pub async fn list_formats(
    state: web::Data<HttpState>,
    game: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let services = state.services_on(state.route_read(&caller.0));
    let game = known_game(services, &game).await?;
    let formats = services.catalog.formats(&game).await?;
    Ok(HttpResponse::Ok().json(
        formats
            .iter()
            .cloned()
            .map(FormatListItem::from)
            .collect::<Vec<_>>(),
    ))
}
