use actix_web::{HttpResponse, get, web};

use super::GameDto;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::HttpState;

/// Every game with its deck sections and colours.
#[utoipa::path(
    tag = "games",
    responses((status = 200, body = Vec<GameDto>)),
    security((), ("OAuth2" = []))
)]
#[get("/games")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn list_games(
    state: web::Data<HttpState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let services = state.services_on(state.route_read(&caller.0));
    let games = services.catalog.games().await?;
    Ok(HttpResponse::Ok().json(games.into_iter().map(GameDto::from).collect::<Vec<_>>()))
}
