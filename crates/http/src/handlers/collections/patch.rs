use actix_web::{HttpResponse, patch, web};
use deckhand_domain::catalog::CardIdentifier;
use deckhand_domain::collections::CollectionChange;
use serde::Deserialize;
use utoipa::ToSchema;

use super::CollectionTotalsDto;
use crate::access::{GamePath, PathAccess, WriteCollection};
use crate::body::Body;
use crate::dto::cards::{identifier_fields, with_card_identifier};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

with_card_identifier! {
    /// One change: a signed delta of a card's printing (and finish), identified as deck cards are.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CollectionChangeDto {
        /// Copies to add (positive) or remove (negative).
        #[schema(minimum = -1_000_000, maximum = 1_000_000)]
        quantity: i64,
        #[serde(default)]
        foil: bool,
    }
}

/// The body of a collection PATCH.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectionPatchBody {
    /// 1 to 5000 changes, applied all or none.
    #[schema(min_items = 1, max_items = 5000)]
    changes: Vec<CollectionChangeDto>,
}

impl From<CollectionChangeDto> for CollectionChange {
    fn from(change: CollectionChangeDto) -> Self {
        Self {
            quantity: change.quantity,
            foil: change.foil,
            identifier: identifier_fields!(CardIdentifier, change),
        }
    }
}

/// Changes the caller's collection by signed deltas, all or nothing: a change that matches no
/// card (422, `details.unresolved`) or would take a quantity below zero (400 naming
/// `changes[<index>]`) changes nothing. Each successful PATCH moves `version` by one and makes
/// a `collection.updated` event; concurrent PATCHes lose no delta.
#[utoipa::path(
    tag = "collections",
    params(GamePath),
    request_body = CollectionPatchBody,
    responses(
        (status = 200, description = "The totals after the change", body = CollectionTotalsDto,
            example = json!({"entries": 2, "cards": 6, "version": 4})),
        (status = 400, description = "Invalid body, or a quantity would go below zero", body = ErrorEnvelope),
        (status = 401, description = "No user identity (a partner alone has no collection)", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        (status = 422, description = "Some changes match no card", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["collection:write"]))
)]
#[patch("/games/{game}/collection")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn patch_collection(
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<WriteCollection, GamePath>,
    Body(body): Body<CollectionPatchBody>,
) -> Result<HttpResponse, ApiError> {
    let changes: Vec<CollectionChange> = body.changes.into_iter().map(Into::into).collect();
    let totals = state
        .services
        .collections
        .patch(&principal, &game, &changes)
        .await?;
    Ok(HttpResponse::Ok().json(CollectionTotalsDto::from(totals)))
}
