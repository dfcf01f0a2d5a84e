use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::collections::{CollectionFilter, CollectionQuery};
use deckhand_domain::decks::PageRequest;
use serde::Deserialize;
use utoipa::IntoParams;

use super::{CollectionEntryDto, CollectionPage};
use crate::access::{GamePath, PathAccess, ReadCollection};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::pagination::Pagination;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct CollectionListQuery {
    /// A part of the card's name, any case.
    q: Option<String>,
    /// A set code.
    set: Option<String>,
    /// 1-based; `page * limit` at most 10000.
    page: Option<u32>,
    /// 1 to 100, default 20.
    limit: Option<u32>,
}

/// The caller's collection of a game, sorted by card name, then set, then collector number
/// (then the plain finish before foil), with the whole collection's totals.
#[utoipa::path(
    tag = "collections",
    params(GamePath, CollectionListQuery),
    responses(
        (status = 200, description = "A page of the collection", body = CollectionPage, example = json!({
            "data": [{"cardId": "5f8287b1-5bb6-5f4c-ad17-316a40d5bb0c", "variantId": "b0faa7f2-b547-42c4-a810-839da50dadfe",
                "name": "Llanowar Elves", "set": "m19", "collector_number": "314", "foil": false,
                "quantity": 4, "trade_quantity": 1}],
            "pagination": {"page": 1, "limit": 20, "total": 1, "total_exact": true, "total_pages": 1, "next": null, "previous": null},
            "totals": {"entries": 1, "cards": 4, "version": 3}})),
        (status = 400, description = "A query parameter is invalid", body = ErrorEnvelope),
        (status = 401, description = "No user identity (a partner alone has no collection)", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["collection:read"]))
)]
#[get("/games/{game}/collection")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn list_collection(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<ReadCollection, GamePath>,
    query: crate::query::Query<CollectionListQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let page = PageRequest::new(query.page, query.limit)?;
    let owner = principal
        .user
        .as_ref()
        .map(|user| user.id)
        .ok_or_else(ApiError::authentication_required)?;
    let asked = CollectionQuery {
        owner,
        game: game.slug.clone(),
        filter: CollectionFilter::new(query.q.as_deref(), query.set.as_deref()),
        page,
    };
    let (found, totals) = state.services.collections.list(&asked).await?;
    let pagination = Pagination::new(&request, &state.config.public_url, &found, page);
    Ok(HttpResponse::Ok().json(CollectionPage {
        data: found
            .items
            .into_iter()
            .map(CollectionEntryDto::from)
            .collect(),
        pagination,
        totals: totals.into(),
    }))
}
