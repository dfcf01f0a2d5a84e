use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::access::{DeckPath, PathAccess, ReadDecks};
use crate::client_ip::client_key;
use crate::error::ApiError;
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
    params(DeckPath),
    responses(
        (status = 200, body = PageviewResult),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[post("/games/{game}/decks/{id}/views")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn register_view(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<ReadDecks, DeckPath>,
) -> Result<HttpResponse, ApiError> {
    // Deduped per client as every per-IP rule counts it (an IPv6 client by its /64).
    let ip = client_key(&request, &state.config.trusted_proxies).addr();
    let count = state
        .services
        .decks
        .register_view(&principal, &game, deck, ip)
        .await?;
    Ok(HttpResponse::Ok().json(PageviewResult {
        pageviews: count.pageviews,
        incremented: count.incremented,
    }))
}
