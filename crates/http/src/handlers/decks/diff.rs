use actix_web::{HttpResponse, get, web};
use deckhand_domain::decks::diff::{CardChange, FieldChange, FieldValue, SectionDiff, VersionDiff};
use deckhand_domain::decks::{FeaturedChoice, Visibility};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::access::{DeckPath, PathAccess, ReadDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The two versions of the path; anything but an integer names no version (404).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DiffPath {
    /// The version to compare from (1-based).
    from: i64,
    /// The version to compare to; may be older than `from`.
    to: i64,
}

/// What changed from version `from` to version `to`.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionDiffDto {
    from: i32,
    to: i32,
    /// The top-level fields that differ, in a fixed order.
    fields: Vec<FieldChangeDto>,
    /// Sections with changes, in the game's order.
    sections: Vec<SectionDiffDto>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FieldChangeDto {
    /// `name`, `notes`, `visibility`, `format`, `youtube_url`, `thumbnail`, `legal`,
    /// `archetype` or `featured`.
    field: String,
    /// The value at `from`, in the write record's form (`featured`: the chosen cards, or
    /// `null` while they are derived).
    old: Value,
    /// The value at `to`.
    new: Value,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SectionDiffDto {
    section: String,
    /// Lines present at `to` only (`old_quantity` 0).
    added: Vec<CardChangeDto>,
    /// Lines present at `from` only (`new_quantity` 0).
    removed: Vec<CardChangeDto>,
    /// Lines present at both with another quantity.
    changed: Vec<CardChangeDto>,
}

/// A deck line: one printing, foil or not.
#[derive(Debug, Serialize, ToSchema)]
pub struct CardChangeDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    #[serde(rename = "variantId")]
    variant_id: Uuid,
    name: String,
    set: String,
    collector_number: String,
    foil: bool,
    old_quantity: u32,
    new_quantity: u32,
}

fn field_value(value: FieldValue) -> Value {
    match value {
        FieldValue::Text(text) => json!(text),
        FieldValue::Flag(flag) => json!(flag),
        FieldValue::Visibility(visibility) => json!([Visibility::as_str(visibility)]),
        FieldValue::Format(format) => json!(format),
        FieldValue::Featured(choices) => json!(choices.map(|choices| {
            choices
                .iter()
                .map(|FeaturedChoice { slot, foil, card }| {
                    json!({
                        "slot": slot.as_str(),
                        "foil": foil,
                        "cardId": card.card_id,
                        "variantId": card.variant_id,
                        "name": card.name,
                    })
                })
                .collect::<Vec<_>>()
        })),
    }
}

fn card_change(change: CardChange) -> CardChangeDto {
    CardChangeDto {
        card_id: change.card.card_id,
        variant_id: change.card.variant_id,
        name: change.card.name,
        set: change.card.set,
        collector_number: change.card.collector_number,
        foil: change.foil,
        old_quantity: change.old_quantity,
        new_quantity: change.new_quantity,
    }
}

impl From<VersionDiff> for VersionDiffDto {
    fn from(diff: VersionDiff) -> Self {
        let cards = |changes: Vec<CardChange>| changes.into_iter().map(card_change).collect();
        Self {
            from: diff.from,
            to: diff.to,
            fields: diff
                .fields
                .into_iter()
                .map(|FieldChange { field, old, new }| FieldChangeDto {
                    field: field.to_owned(),
                    old: field_value(old),
                    new: field_value(new),
                })
                .collect(),
            sections: diff
                .sections
                .into_iter()
                .map(|section: SectionDiff| SectionDiffDto {
                    section: section.section,
                    added: cards(section.added),
                    removed: cards(section.removed),
                    changed: cards(section.changed),
                })
                .collect(),
        }
    }
}

/// What changed between two versions of a deck: per section the cards added, removed and
/// changed in quantity, and the top-level fields with their old and new values. `from` may be
/// greater than `to`. Deck visibility rules apply.
#[utoipa::path(
    tag = "decks",
    params(DeckPath, DiffPath),
    responses(
        (status = 200, body = VersionDiffDto, example = json!({
            "from": 1, "to": 3,
            "fields": [{"field": "name", "old": "Burn", "new": "Big Burn"}],
            "sections": [{
                "section": "mainboard",
                "added": [{"cardId": "5f8287b1-5bb6-5f4c-ad17-316a40d5bb0c",
                    "variantId": "b0faa7f2-b547-42c4-a810-839da50dadfe", "name": "Truefire Captain",
                    "set": "m19", "collector_number": "209", "foil": false,
                    "old_quantity": 0, "new_quantity": 1}],
                "removed": [],
                "changed": [{"cardId": "0d5bc4f7-2b5f-5bd3-a2e4-3d18e6e49c2b",
                    "variantId": "1a1c3a5e-52bd-4d3b-8f5f-b1d3b9b3c2a1", "name": "Siege Wurm",
                    "set": "m19", "collector_number": "202", "foil": false,
                    "old_quantity": 4, "new_quantity": 3}]
            }]
        })),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "No such deck, hidden from the caller, or no such version", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}/versions/{from}/diff/{to}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn version_diff(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<ReadDecks, DeckPath>,
    versions: web::Path<DiffPath>,
) -> Result<HttpResponse, ApiError> {
    // A number no version can have is simply out of range.
    let number = |n: i64| i32::try_from(n).unwrap_or(0);
    let diff = state
        .services
        .decks
        .diff(
            &principal,
            &game,
            deck,
            number(versions.from),
            number(versions.to),
        )
        .await?;
    Ok(HttpResponse::Ok().json(VersionDiffDto::from(diff)))
}
