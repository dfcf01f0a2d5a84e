use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::catalog::Game;
use deckhand_domain::decks::{Deck, DeckCard};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::{DeckListItem, etag, formats_of};
use crate::access::{DeckPath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::conditional::{IfNoneMatchHeader, json_tagged};
use crate::dto::decks::FeaturedCardDto;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct DetailQuery {
    /// `cards` adds `expanded_cards`.
    expand: Option<Expand>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Expand {
    Cards,
}

/// The deck detail: the deck with its cards, summary and provenance.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "name": "Mono-Green Stompy",
    "author": {"id": "01a1fd7f-5b1e-7c2a-9d3e-4f5a6b7c8d9e", "username": "demo"}, "game": "mtg",
    "visibility": ["public"], "format": null, "archetype": "Aggro", "views": 12, "likes": 3,
    "hasGuide": true, "hasSideboardGuide": true, "hasVideo": false,
    "editedAt": "2026-11-21T09:50:02.120044Z", "createdAt": "2026-11-21T09:46:30.758347Z",
    "sourceProvider": "manual", "notes": "", "featured_cards": [],
    "sourceExternalId": null, "sourceExternalUrl": null
}))]
pub struct DeckDetail<'a> {
    #[serde(flatten)]
    item: DeckListItem<'a>,
    notes: String,
    featured_cards: Vec<FeaturedCardDto>,
    #[serde(rename = "sourceExternalId")]
    source_external_id: Option<String>,
    #[serde(rename = "sourceExternalUrl")]
    source_external_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expanded_cards: Option<Vec<ExpandedSection>>,
}

/// One non-empty section of `expanded_cards`, in the game's order.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExpandedSection {
    section: String,
    label: String,
    count: u32,
    cards: Vec<ExpandedCard>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ExpandedCard {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    #[serde(rename = "variantId")]
    variant_id: Uuid,
    name: String,
    quantity: u32,
    foil: bool,
    set: String,
    collector_number: String,
    type_line: String,
    #[serde(rename = "imageUrl")]
    image_url: Option<String>,
    colors: Vec<String>,
}

/// The deck's cards by section, sections in game order, cards by name, set and number.
fn expanded_cards(game: &Game, deck: &Deck) -> Vec<ExpandedSection> {
    game.sections
        .iter()
        .filter_map(|section| {
            let mut cards: Vec<&DeckCard> = deck
                .content
                .cards
                .iter()
                .filter(|card| card.section == section.key)
                .collect();
            if cards.is_empty() {
                return None;
            }
            cards.sort_by(|a, b| {
                (&a.card.name, &a.card.set, &a.card.collector_number).cmp(&(
                    &b.card.name,
                    &b.card.set,
                    &b.card.collector_number,
                ))
            });
            Some(ExpandedSection {
                section: section.key.clone(),
                label: section.label.clone(),
                count: cards.iter().map(|card| card.quantity).sum(),
                cards: cards
                    .into_iter()
                    .map(|line| ExpandedCard {
                        card_id: line.card.card_id,
                        variant_id: line.card.variant_id,
                        name: line.card.name.clone(),
                        quantity: line.quantity,
                        foil: line.foil,
                        set: line.card.set.clone(),
                        collector_number: line.card.collector_number.clone(),
                        type_line: line.card.type_line.clone(),
                        image_url: line.card.image_url.clone(),
                        colors: line.card.colors.clone(),
                    })
                    .collect(),
            })
        })
        .collect()
}

/// One deck. Non-public decks are visible to their owner only (404 for others).
#[utoipa::path(
    tag = "decks",
    params(DeckPath, DetailQuery, IfNoneMatchHeader),
    responses(
        (status = 200, body = DeckDetail, headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 304, description = "`If-None-Match` names the current version"),
        (status = 403, body = ErrorEnvelope), (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn deck_detail(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        database,
        ..
    }: PathAccess<ReadDecks, DeckPath, ReplicaMayServe>,
    query: crate::query::Query<DetailQuery>,
) -> Result<HttpResponse, ApiError> {
    let decks = &state.services_on(database).decks;
    // Only an expansion needs the card lines; without one they stay unread.
    let (overview, expanded_cards) = match &query.expand {
        Some(Expand::Cards) => {
            let deck = decks.get(&principal, &game, deck).await?;
            (deck.overview(), Some(expanded_cards(&game, &deck)))
        }
        None => (decks.overview(&principal, &game, deck).await?, None),
    };
    let formats = formats_of(state.services_on(database), &game).await?;
    let detail = DeckDetail {
        item: DeckListItem::new(&overview.listing, &formats, false, principal.acting_user()),
        notes: overview.notes,
        featured_cards: overview
            .listing
            .facts
            .summary
            .featured_cards
            .iter()
            .map(FeaturedCardDto::from)
            .collect(),
        source_external_id: overview.source_external_id,
        source_external_url: overview.source_external_url,
        expanded_cards,
    };
    json_tagged(&request, etag(overview.version), &detail)
}
