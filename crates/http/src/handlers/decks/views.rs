use actix_web::{HttpRequest, HttpResponse, post, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Scope};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::auth::Caller;
use crate::client_ip::client_ip;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

#[derive(Debug, Serialize, ToSchema)]
pub struct PageviewResult {
    pageviews: i64,
    /// Whether this view counted (a visitor counts once an hour).
    incremented: bool,
}

/// Register a pageview: counted once per visitor (user id, else client IP) per hour.
#[utoipa::path(
    tag = "decks",
    responses(
        (status = 200, body = PageviewResult),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    )
)]
#[post("/games/{game}/decks/{id}/views")]
pub async fn register_view(
    request: HttpRequest,
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    path: web::Path<(String, Uuid)>,
) -> Result<HttpResponse, ApiError> {
    let (game, id) = path.into_inner();
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::AnonymousOr(Scope::DecksRead),
    )
    .await?;
    let ip = client_ip(&request, &state.config.trusted_proxies);
    let count = state
        .services
        .decks
        .register_view(&principal, &game, DeckId(id), ip)
        .await?;
    Ok(HttpResponse::Ok().json(PageviewResult {
        pageviews: count.pageviews,
        incremented: count.incremented,
    }))
}
