//! Deck endpoints: one file per operation (likes are `handlers::likes`, shared with guides);
//! the wire shapes live here.

pub(crate) mod check;
pub(crate) mod check_list;
pub(crate) mod compare;
pub(crate) mod create;
pub(crate) mod detail;
pub(crate) mod diff;
pub(crate) mod export;
pub(crate) mod fork;
pub(crate) mod guide;
pub(crate) mod list;
pub(crate) mod needs;
pub(crate) mod rollback;
pub(crate) mod update;
pub(crate) mod versions;
pub(crate) mod views;

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::http::header::{self, ETag, EntityTag};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use deckhand_domain::catalog::{CardIdentifier, Format, Game};
use deckhand_domain::decks::{
    CardLineInput, Deck, DeckChanges, DeckListing, DeckVersion, FeaturedInput, FeaturedSlot,
    ForkedFrom, HistoryType,
};
use deckhand_domain::identity::UserId;
use deckhand_domain::{Patch, Services};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::body::{json_or_text, nullable};
use crate::dto::cards::{identifier_fields, with_card_identifier};
use crate::dto::decks::{AuthorDto, FeaturedCardDto};
use crate::dto::games::FormatDto;
use crate::error::ApiError;
use crate::pagination::Pagination;

/// A deck in a list; the summary fields only with `include=summary`.
// It borrows the listing's text: a page is written without a copy of each deck's strings.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeckListItem<'a> {
    id: Uuid,
    name: &'a str,
    author: AuthorDto,
    game: &'a str,
    #[schema(value_type = Vec<String>)]
    visibility: [&'static str; 1],
    format: Option<FormatDto>,
    archetype: Option<&'a str>,
    views: i64,
    likes: i64,
    #[serde(rename = "hasGuide")]
    has_guide: bool,
    #[serde(rename = "hasSideboardGuide")]
    has_sideboard_guide: bool,
    #[serde(rename = "hasVideo")]
    has_video: bool,
    #[serde(rename = "editedAt", with = "time::serde::rfc3339")]
    edited_at: OffsetDateTime,
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(rename = "sourceProvider")]
    source_provider: &'a str,
    /// The deck and version this deck was forked from; `null` when it is no fork or when the
    /// caller cannot read that deck now.
    forked_from: Option<ForkedFromDto>,
    /// How many forks were made of this deck.
    forks: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<FeaturedCardDto>, required = false)]
    featured_cards: Option<Vec<FeaturedCardDto>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = BTreeMap<String, u32>, required = false)]
    section_counts: Option<BTreeMap<String, u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<String>, required = false)]
    colors: Option<Vec<String>>,
}

/// The deck a fork was copied from, and at which version.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "version": 4}))]
pub struct ForkedFromDto {
    deck_id: Uuid,
    version: i32,
}

impl From<ForkedFrom> for ForkedFromDto {
    fn from(source: ForkedFrom) -> Self {
        Self {
            deck_id: source.deck_id.0,
            version: source.version,
        }
    }
}

impl<'a> DeckListItem<'a> {
    /// `deck` as `viewer` sees it in a list or a detail.
    pub fn new(
        deck: &'a DeckListing,
        formats: &[Format],
        with_summary: bool,
        viewer: Option<UserId>,
    ) -> Self {
        let summary = &deck.facts.summary;
        Self {
            id: deck.facts.id.0,
            name: &deck.name,
            author: AuthorDto::from(&deck.facts.author),
            game: &deck.facts.game,
            visibility: [deck.visibility.as_str()],
            format: deck
                .format_id
                .and_then(|id| formats.iter().find(|format| format.id == id))
                .map(FormatDto::from),
            archetype: deck.archetype.as_deref(),
            views: deck.facts.pageviews,
            likes: deck.facts.likes,
            has_guide: deck.facts.has_guide,
            has_sideboard_guide: deck.facts.has_sideboard_guide,
            has_video: deck.has_video,
            edited_at: deck.facts.updated_at,
            created_at: deck.facts.created_at,
            source_provider: &deck.source_provider,
            forked_from: deck.forked_from(viewer).map(ForkedFromDto::from),
            forks: deck.facts.forks,
            featured_cards: with_summary.then(|| {
                summary
                    .featured_cards
                    .iter()
                    .map(FeaturedCardDto::from)
                    .collect()
            }),
            section_counts: with_summary.then(|| summary.section_counts.clone()),
            colors: with_summary.then(|| summary.colors.clone()),
        }
    }
}

/// A page of the deck list.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"data": [{"id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "name": "Mono-Green Stompy",
    "author": {"id": "01a1fd7f-5b1e-7c2a-9d3e-4f5a6b7c8d9e", "username": "demo"}, "game": "mtg",
    "visibility": ["public"], "format": null, "archetype": "Aggro", "views": 12, "likes": 3,
    "hasGuide": true, "hasSideboardGuide": true, "hasVideo": false,
    "editedAt": "2026-11-21T09:50:02.120044Z", "createdAt": "2026-11-21T09:46:30.758347Z",
    "sourceProvider": "manual", "forked_from": null, "forks": 2}],
    "pagination": {"page": 1, "limit": 20, "total": 1, "total_exact": true, "total_pages": 1,
    "next": null, "previous": null}}))]
pub struct DeckPage<'a> {
    data: Vec<DeckListItem<'a>>,
    pagination: Pagination,
}

/// The deck write record: the answer of create, PATCH and rollback.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "name": "Mono-Green Stompy", "notes": "",
    "visibility": ["public"], "format": null, "youtube_url": null, "thumbnail": null,
    "legal": true, "archetype": null, "is_archived": false, "likes": 0, "pageviews": 0,
    "version": 1, "source_provider": "manual", "source_external_id": null,
    "source_external_version": null, "source_external_url": null, "source_imported_at": null,
    "forked_from": null, "forks": 0,
    "created_at": "2026-11-21T09:46:30.758347Z", "updated_at": "2026-11-21T09:46:30.758347Z"
}))]
pub struct DeckWriteRecord {
    id: Uuid,
    name: String,
    notes: String,
    visibility: Vec<String>,
    format: Option<Uuid>,
    youtube_url: Option<String>,
    thumbnail: Option<String>,
    legal: bool,
    archetype: Option<String>,
    is_archived: bool,
    likes: i64,
    pageviews: i64,
    version: i32,
    source_provider: String,
    source_external_id: Option<String>,
    source_external_version: Option<String>,
    source_external_url: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    source_imported_at: Option<OffsetDateTime>,
    /// The deck and version this deck was forked from; `null` when it is no fork or when the
    /// caller cannot read that deck now.
    forked_from: Option<ForkedFromDto>,
    /// How many forks were made of this deck.
    forks: i64,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    updated_at: OffsetDateTime,
}

impl DeckWriteRecord {
    /// `deck` as its writer `viewer` sees it.
    fn new(deck: &Deck, viewer: Option<UserId>) -> Self {
        let content = &deck.content;
        let provenance = &deck.provenance;
        Self {
            id: deck.facts.id.0,
            name: content.name.clone(),
            notes: content.notes.clone(),
            visibility: vec![content.visibility.as_str().to_owned()],
            format: content.format_id,
            youtube_url: content.youtube_url.clone(),
            thumbnail: content.thumbnail.clone(),
            legal: content.legal,
            archetype: content.archetype.clone(),
            is_archived: deck.is_archived,
            likes: deck.facts.likes,
            pageviews: deck.facts.pageviews,
            version: deck.version,
            source_provider: provenance.source_provider.clone(),
            source_external_id: provenance.source_external_id.clone(),
            source_external_version: provenance.source_external_version.clone(),
            source_external_url: provenance.source_external_url.clone(),
            source_imported_at: provenance.source_imported_at,
            forked_from: deck.forked_from(viewer).map(ForkedFromDto::from),
            forks: deck.facts.forks,
            created_at: deck.facts.created_at,
            updated_at: deck.facts.updated_at,
        }
    }
}

/// One history record of a deck.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"version_number": 2, "name_at_version": "Stompy", "edited_at": "2026-11-21T09:50:02.120044Z",
    "history_type": "update", "visibility": ["public"]}))]
pub struct DeckVersionDto {
    version_number: i32,
    name_at_version: String,
    #[serde(with = "time::serde::rfc3339")]
    edited_at: OffsetDateTime,
    /// `create`, `update` or `rollback`.
    history_type: String,
    visibility: Vec<String>,
    /// The version a rollback restored; only on rollback records.
    #[serde(skip_serializing_if = "Option::is_none")]
    restored_from: Option<i32>,
    /// Only on the create record: the deck and version it was forked from, `null` when it is no
    /// fork or when the caller cannot read that deck now.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ForkedFromDto>, required = false)]
    forked_from: Option<Option<ForkedFromDto>>,
}

impl DeckVersionDto {
    /// `version` of a deck forked from `forked_from`, as its reader may see that source.
    pub fn new(version: &DeckVersion, forked_from: Option<ForkedFrom>) -> Self {
        Self {
            forked_from: match version.history_type {
                HistoryType::Create => Some(forked_from.map(ForkedFromDto::from)),
                HistoryType::Update | HistoryType::Rollback { .. } => None,
            },
            version_number: version.version_number,
            name_at_version: version.content.name.clone(),
            edited_at: version.edited_at,
            history_type: version.history_type.as_str().to_owned(),
            visibility: vec![version.content.visibility.as_str().to_owned()],
            restored_from: match version.history_type {
                HistoryType::Rollback { restored_from } => Some(restored_from),
                HistoryType::Create | HistoryType::Update => None,
            },
        }
    }
}

with_card_identifier! {
    /// A card line of a deck write (the contract's "Cards on decks").
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CardLineDto {
        /// A section key of the game (`mainboard`, `sideboard`, ...).
        section: String,
        /// 1 to 999.
        #[schema(minimum = 1, maximum = 999)]
        quantity: u32,
        #[serde(default)]
        foil: bool,
    }
}

with_card_identifier! {
    /// A featured card of a deck write.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct FeaturedDto {
        /// `commander`, `companion`, `cover` or `hero`.
        #[schema(value_type = String)]
        slot: FeaturedSlot,
        #[serde(default)]
        foil: bool,
    }
}

/// The one conversion of a card line: deck writes and export payloads take the same shape.
impl From<CardLineDto> for CardLineInput {
    fn from(line: CardLineDto) -> Self {
        Self {
            section: line.section.clone(),
            quantity: line.quantity,
            foil: line.foil,
            identifier: identifier_fields!(CardIdentifier, line),
        }
    }
}

impl From<FeaturedDto> for FeaturedInput {
    fn from(choice: FeaturedDto) -> Self {
        Self {
            slot: choice.slot,
            foil: choice.foil,
            identifier: identifier_fields!(CardIdentifier, choice),
        }
    }
}

/// The body of a deck create or PATCH; the same DTO from JSON, form and multipart.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeckBody {
    /// 1 to 255 characters; required on create.
    #[schema(min_length = 1, max_length = 255)]
    name: Option<String>,
    /// At most 50000 characters.
    #[schema(max_length = 50000)]
    notes: Option<String>,
    /// Exactly one of `public`, `unlisted`, `private` (default `private`).
    #[schema(value_type = Option<Vec<crate::dto::names::VisibilityName>>, min_items = 1, max_items = 1)]
    visibility: Option<Vec<String>>,
    /// A format of the deck's game, by slug or id (the deck answers its id), or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    format: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    youtube_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    thumbnail: Option<Option<String>>,
    legal: Option<bool>,
    /// Free text, at most 100 characters (extension).
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    archetype: Option<Option<String>>,
    /// `manual` (default) or an operator-configured deck site code.
    source_provider: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    source_external_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    source_external_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    source_external_url: Option<Option<String>>,
    /// Card lines; JSON text in form and multipart bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false)]
    cards: Option<Vec<CardLineDto>>,
    /// Featured cards; `null` returns to the derived ones. JSON text in form bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(value_type = Option<Vec<FeaturedDto>>)]
    featured: Option<Option<Vec<FeaturedDto>>>,
    /// PATCH only.
    is_archived: Option<bool>,
}

impl From<DeckBody> for DeckChanges {
    fn from(body: DeckBody) -> Self {
        Self {
            name: body.name,
            notes: body.notes,
            visibility: body.visibility,
            format: body.format.into(),
            youtube_url: body.youtube_url.into(),
            thumbnail: body.thumbnail.into(),
            legal: body.legal,
            archetype: body.archetype.into(),
            source_provider: body.source_provider,
            source_external_id: body.source_external_id.into(),
            source_external_version: body.source_external_version.into(),
            source_external_url: body.source_external_url.into(),
            cards: body
                .cards
                .map(|lines| lines.into_iter().map(CardLineInput::from).collect()),
            featured: Patch::from(body.featured)
                .map(|choices| choices.into_iter().map(FeaturedInput::from).collect()),
            is_archived: body.is_archived,
        }
    }
}

/// `"<version>"`: the tag of the deck's detail and write record, and what a later `If-Match`
/// names. It versions the content; counters (views, likes) move without it.
pub fn etag(version: i32) -> EntityTag {
    EntityTag::new_strong(version.to_string())
}

/// A deck write's answer (create, fork, PATCH, rollback): the write record as the writer
/// `viewer` sees it, tagged with the version the write made.
pub fn write_record(
    mut response: HttpResponseBuilder,
    deck: &Deck,
    viewer: Option<UserId>,
) -> HttpResponse {
    response
        .insert_header(ETag(etag(deck.version)))
        .json(DeckWriteRecord::new(deck, viewer))
}

/// The version an `If-Match` header requires: `None` without one (or with `*`); a value that
/// names no version can never match, and neither can several `If-Match` headers (a list of
/// versions, of which only one can be current: the deck is never changed on half a condition).
pub fn if_match(request: &HttpRequest) -> Result<Option<i32>, ApiError> {
    let mut values = request.headers().get_all(header::IF_MATCH);
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(ApiError::precondition_failed(None));
    }
    let text = value.to_str().unwrap_or_default().trim();
    if text == "*" {
        return Ok(None);
    }
    text.strip_prefix("W/")
        .unwrap_or(text)
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .and_then(|version| version.parse().ok())
        .map(Some)
        .ok_or_else(|| ApiError::precondition_failed(None))
}

/// The game's formats, for rendering `format` objects of many decks with one lookup.
pub async fn formats_of(services: &Services, game: &Game) -> Result<Arc<[Format]>, ApiError> {
    Ok(services.catalog.formats(game).await?)
}
