use actix_web::{HttpResponse, post, web};
use deckhand_domain::decks::export::PayloadContent;
use serde::Deserialize;
use utoipa::ToSchema;

use super::CardLineDto;
use super::check::as_of;
use crate::access::{GamePath, PathAccess, ReadDecks};
use crate::body::{Body, json_or_text};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::dto::formats::CheckReportDto;
use crate::error::{ApiError, FieldError};
use crate::state::HttpState;

/// A deck list to check: `format` and exactly one of `cards` and `text`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"format": "modern", "text": "4 Ponder\n56 Island\n\nSideboard\n2 Tarmogoyf"}))]
pub struct CheckListBody {
    /// A format of the game by slug or id.
    format: Option<String>,
    /// Deck card entries, as a deck write takes them (at most 500); JSON text in form and
    /// multipart bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false)]
    cards: Option<Vec<CardLineDto>>,
    /// A deck list in any form `docs/deck-text-format.md` reads.
    text: Option<String>,
    /// RFC 3339, or a date (`2019-03-01`: the start of that day, UTC); the legalities in
    /// force then apply. Default now.
    as_of: Option<String>,
}

fn invalid(field: &str, code: &str, message: &str) -> ApiError {
    ApiError::validation(vec![FieldError {
        field: field.into(),
        code: code.into(),
        message: message.into(),
    }])
}

/// Whether a deck list is legal in a format at a time, and every reason it is not. Nothing
/// is stored; entries that do not resolve are `unresolved` problems.
#[utoipa::path(
    tag = "decks",
    params(GamePath),
    request_body = CheckListBody,
    responses(
        (status = 200, body = CheckReportDto),
        (status = 400, description = "No format, an unknown format, a format without rules, both or neither of cards and text, or an invalid entry or `as_of`", body = ErrorEnvelope),
        (status = 403, description = "An authenticated caller without decks:read", body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[post("/games/{game}/decks/check")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn check_list(
    state: web::Data<HttpState>,
    PathAccess { game, .. }: PathAccess<ReadDecks, GamePath>,
    Body(body): Body<CheckListBody>,
) -> Result<HttpResponse, ApiError> {
    let Some(format) = body.format else {
        return Err(invalid("format", "required", "name a format of the game"));
    };
    let content = match (body.cards, body.text) {
        (Some(cards), None) => PayloadContent::Cards(cards.into_iter().map(Into::into).collect()),
        (None, Some(text)) => PayloadContent::Text(text),
        _ => {
            return Err(invalid(
                "body",
                "one_of",
                "send exactly one of cards and text",
            ));
        }
    };
    let as_of = as_of(&body.as_of)?;
    let report = state
        .services
        .formats
        .check_list(&game, &format, content, as_of)
        .await?;
    Ok(HttpResponse::Ok().json(CheckReportDto::from(report)))
}
