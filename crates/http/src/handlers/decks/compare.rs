use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::decks::diff;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::diff::VersionDiffDto;
use super::export::prefers_text;
use crate::access::{ComparePath, PathAccess, ReadDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct CompareQuery {
    /// `text` answers the changes as deck-list text, as `Accept: text/plain` does.
    #[param(inline)]
    format: Option<CompareFormat>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompareFormat {
    Json,
    Text,
}

/// What changed from deck `{id}` to deck `{other_id}`, each at its current version: the version
/// diff's shape (`from` and `to` are the two decks' versions). With `?format=text`, or an
/// `Accept` that prefers `text/plain`, the card changes as deck-list text: per section in game
/// order a block of the lines to add and one of the lines to remove (a quantity change is the
/// difference), each opened by a `// Add` or `// Remove` comment and headed by the section's
/// label, lines in the export's format, blocks separated by one blank line; each block alone is
/// a deck list the export's `text` reads; two decks with the same cards answer the one line
/// `// No card changes`. Both decks must be readable by the caller.
#[utoipa::path(
    tag = "decks",
    params(ComparePath, CompareQuery),
    responses(
        (status = 200, headers(("Vary" = String, description = "`Accept`")),
            content(
                (VersionDiffDto = "application/json", example = json!({
                    "from": 4, "to": 1,
                    "fields": [{"field": "name", "old": "Mono-Green Stompy", "new": "Stompy (fork)"},
                        {"field": "visibility", "old": ["public"], "new": ["private"]}],
                    "sections": [{
                        "section": "mainboard",
                        "added": [{"cardId": "5f8287b1-5bb6-5f4c-ad17-316a40d5bb0c",
                            "variantId": "b0faa7f2-b547-42c4-a810-839da50dadfe", "name": "Llanowar Elves",
                            "set": "m19", "collector_number": "314", "foil": false,
                            "old_quantity": 0, "new_quantity": 4}],
                        "removed": [],
                        "changed": [{"cardId": "0d5bc4f7-2b5f-5bd3-a2e4-3d18e6e49c2b",
                            "variantId": "1a1c3a5e-52bd-4d3b-8f5f-b1d3b9b3c2a1", "name": "Siege Wurm",
                            "set": "m19", "collector_number": "202", "foil": false,
                            "old_quantity": 4, "new_quantity": 2}]
                    }]
                })),
                (String = "text/plain", example = "// Add\nDeck\n4 Llanowar Elves (M19) 314\n\n// Remove\nDeck\n2 Siege Wurm (M19) 202\n"),
            )),
        (status = 400, description = "`format` is neither `json` nor `text`", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Either deck does not exist, is of another game, or is hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}/compare/{other_id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %path.id, other = %path.other_id))]
pub async fn compare_decks(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<ReadDecks, ComparePath>,
    query: crate::query::Query<CompareQuery>,
) -> Result<HttpResponse, ApiError> {
    let diff = state
        .services
        .decks
        .compare(&principal, &game, path.id, path.other_id)
        .await?;
    let as_text = match query.format {
        Some(CompareFormat::Text) => true,
        Some(CompareFormat::Json) => false,
        None => prefers_text(&request),
    };
    let mut response = HttpResponse::Ok();
    response.insert_header((header::VARY, "Accept"));
    Ok(if as_text {
        response
            .content_type("text/plain; charset=utf-8")
            .body(diff::as_text(&game, &diff))
    } else {
        response.json(VersionDiffDto::from(diff))
    })
}
