use actix_web::{HttpResponse, get, web};
use deckhand_domain::collections::{NeedItem, shopping_list};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::access::{DeckNeeds, DeckPath, PathAccess};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct NeedsQuery {
    /// `true` answers the missing cards as deck text (`text/plain`): a shopping list.
    text: Option<bool>,
}

/// One card of one counted section of the deck.
#[derive(Debug, Serialize, ToSchema)]
pub struct NeedItemDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    name: String,
    section: String,
    quantity: u32,
    /// Copies of the collection covering this item.
    owned: u32,
    missing: u32,
}

impl From<NeedItem> for NeedItemDto {
    fn from(item: NeedItem) -> Self {
        Self {
            card_id: item.card_id,
            name: item.name,
            section: item.section,
            quantity: item.quantity,
            owned: item.owned,
            missing: item.missing,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeckNeedsDto {
    deck_id: Uuid,
    version: i32,
    /// Copies of the deck's counted cards the collection covers.
    have: u32,
    /// Copies missing.
    need: u32,
    cards: Vec<NeedItemDto>,
}

/// What a deck the caller can read still needs from the caller's collection: one item per
/// card and counted section, owned or not, sorted by name then section in game order. Any
/// printing and finish of a card counts; each owned copy covers one deck copy, the sections
/// taking copies in game order. `?text=true` answers the missing cards as deck text.
#[utoipa::path(
    tag = "collections",
    params(DeckPath, NeedsQuery),
    responses(
        (status = 200, content(
            (DeckNeedsDto = "application/json", example = json!({
                "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "version": 1, "have": 4, "need": 2,
                "cards": [{"cardId": "5f8287b1-5bb6-5f4c-ad17-316a40d5bb0c", "name": "Llanowar Elves",
                    "section": "mainboard", "quantity": 4, "owned": 4, "missing": 0},
                    {"cardId": "0d5bc4f7-2b5f-5bd3-a2e4-3d18e6e49c2b", "name": "Siege Wurm",
                    "section": "mainboard", "quantity": 2, "owned": 0, "missing": 2}]})),
            (String = "text/plain", example = "Deck\n2 Siege Wurm\n"),
        )),
        (status = 401, description = "No user identity (a partner alone has no collection)", body = ErrorEnvelope),
        (status = 403, description = "Lacking `decks:read` or `collection:read`: both are named", body = ErrorEnvelope),
        (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["collection:read", "decks:read"]))
)]
#[get("/games/{game}/decks/{id}/needs")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn deck_needs(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<DeckNeeds, DeckPath>,
    query: crate::query::Query<NeedsQuery>,
) -> Result<HttpResponse, ApiError> {
    let (version, needs) = state
        .services
        .collections
        .needs(&principal, &game, deck)
        .await?;
    if query.text.unwrap_or(false) {
        return Ok(HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(shopping_list(&game, &needs)));
    }
    Ok(HttpResponse::Ok().json(DeckNeedsDto {
        deck_id: deck.0,
        version,
        have: needs.have,
        need: needs.need,
        cards: needs.items.into_iter().map(NeedItemDto::from).collect(),
    }))
}
