use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::decks::card_search::parse_card_ids;
use deckhand_domain::decks::{DeckFilters, DeckId, DeckSort, ListRequest};
use deckhand_domain::identity::UserId;
use deckhand_domain::validation::Violations;
use serde::Deserialize;
use utoipa::IntoParams;

use super::{DeckListItem, DeckPage, formats_of};
use crate::access::{GamePath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::conditional::{IfNoneMatchHeader, json_page};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::pagination::{ListOptions, Pagination, instant, uuid};
use crate::state::HttpState;

/// The deck list's query. Unknown parameters are ignored.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct DeckListQuery {
    /// Author user id.
    author_id: Option<String>,
    /// Decks holding every one of these cards (card ids, comma-separated, at most 10) in a
    /// counted section, any printing.
    cards: Option<String>,
    /// Decks holding none of these cards (card ids, comma-separated, at most 10) in a counted
    /// section.
    exclude_cards: Option<String>,
    /// Inclusive bounds, RFC 3339 with any offset.
    created_after: Option<String>,
    created_before: Option<String>,
    edited_after: Option<String>,
    edited_before: Option<String>,
    format_id: Option<String>,
    /// Forks of this deck id only (none when the caller cannot read that deck).
    forked_from: Option<String>,
    has_guide: Option<bool>,
    has_sideboard_guide: Option<bool>,
    has_video: Option<bool>,
    /// `summary` adds featured_cards, section_counts and colors.
    include: Option<String>,
    is_legal: Option<bool>,
    /// 1 to 100, default 20.
    limit: Option<i64>,
    /// `asc` or `desc` (default).
    order: Option<String>,
    /// 1-based; `page * limit` at most 10000.
    page: Option<i64>,
    /// Case-insensitive substring of the name.
    q: Option<String>,
    /// `createdAt`, `editedAt` (default), `likes`, `trending` or `views`.
    sort: Option<String>,
}

impl DeckListQuery {
    /// The validated request.
    fn into_request(self) -> Result<ListRequest, Violations> {
        let mut v = Violations::default();
        let filters = DeckFilters {
            author: uuid("authorId", &self.author_id, &mut v).map(UserId),
            created_after: instant("createdAfter", &self.created_after, &mut v),
            created_before: instant("createdBefore", &self.created_before, &mut v),
            edited_after: instant("editedAfter", &self.edited_after, &mut v),
            edited_before: instant("editedBefore", &self.edited_before, &mut v),
            format_id: uuid("formatId", &self.format_id, &mut v),
            has_guide: self.has_guide,
            has_sideboard_guide: self.has_sideboard_guide,
            has_video: self.has_video,
            is_legal: self.is_legal,
            name_contains: self.q.filter(|q| !q.is_empty()),
            forked_from: uuid("forkedFrom", &self.forked_from, &mut v).map(DeckId),
            cards: parse_card_ids("cards", self.cards.as_deref(), &mut v),
            exclude_cards: parse_card_ids("excludeCards", self.exclude_cards.as_deref(), &mut v),
        };
        let options = ListOptions::parse(
            self.sort.as_deref(),
            DeckSort::parse,
            self.order.as_deref(),
            self.include.as_deref(),
            self.page,
            self.limit,
            v,
        )?;
        let list = ListRequest {
            filters,
            sort: options.sort,
            order: options.order,
            page: options.page,
            with_summary: options.with_summary,
        };
        Ok(list)
    }
}

/// Decks of a game: public ones, plus the caller's own unlisted and private ones; never
/// archived ones.
#[utoipa::path(
    tag = "decks",
    params(GamePath, DeckListQuery, IfNoneMatchHeader),
    responses(
        (status = 200, description = "A page of decks", body = DeckPage,
            headers(("ETag" = String, description = "A weak tag over the page"))),
        (status = 304, description = "`If-None-Match` names the page as it is"),
        (status = 400, description = "A query parameter is invalid", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope), (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn list_decks(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        database,
        ..
    }: PathAccess<ReadDecks, GamePath, ReplicaMayServe>,
    query: crate::query::Query<DeckListQuery>,
) -> Result<HttpResponse, ApiError> {
    let list = query.into_inner().into_request()?;
    let (asked, summary) = (list.page, list.with_summary);
    let page = state
        .services_on(database)
        .decks
        .list(&principal, &game, list)
        .await?;
    let formats = formats_of(state.services_on(database), &game).await?;
    let data = page
        .items
        .iter()
        .map(|deck| DeckListItem::new(deck, &formats, summary, principal.acting_user()))
        .collect();
    let pagination = Pagination::new(&request, &state.config.public_url, &page, asked);
    json_page(&request, &DeckPage { data, pagination })
}
