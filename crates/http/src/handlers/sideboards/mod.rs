//! Sideboard guide endpoints (public spec 4.5 and the contract's extensions): one file per
//! operation (likes are `handlers::likes`, shared with decks); the wire shapes live here.

pub(crate) mod attach;
pub(crate) mod create;
pub(crate) mod detach;
pub(crate) mod detail;
pub(crate) mod list;
pub(crate) mod matchups;
pub(crate) mod my;
pub(crate) mod update;

use actix_web::{HttpRequest, HttpResponse};
use deckhand_domain::decks::{DeckId, Page};
use deckhand_domain::identity::UserId;
use deckhand_domain::sideboards::{
    CardOverride, GuideChanges, GuideDetail, GuideFilters, GuideListRequest, GuideSort, Matchup,
    MatchupChanges, NewGuideInput, OverrideInput, SideboardGuide,
};
use deckhand_domain::validation::{FieldViolation, Violations};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::body::{json_or_text, nullable, present};
use crate::conditional::json_page;
use crate::dto::decks::{AuthorDto, FeaturedCardDto};
use crate::error::ApiError;
use crate::pagination::{ListOptions, Pagination, instant, uuid};
use crate::state::HttpState;

/// Guides carry no provenance yet: every one is written here.
const SOURCE_PROVIDER: &str = "manual";

/// A guide in a list (public spec 2.5); the summary fields only with `include=summary`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GuideListItem {
    id: Uuid,
    name: String,
    author: AuthorDto,
    game: String,
    visibility: Vec<String>,
    /// The primary deck.
    deck_id: Uuid,
    /// A plain string, not a reference.
    format: Option<String>,
    views: i64,
    likes: i64,
    #[serde(rename = "hasMatchups")]
    has_matchups: bool,
    thumbnail: Option<String>,
    #[serde(rename = "editedAt", with = "time::serde::rfc3339")]
    edited_at: OffsetDateTime,
    #[serde(rename = "createdAt", with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    /// Always `manual` for now: guides are written here, not imported.
    #[serde(rename = "sourceProvider")]
    source_provider: String,
    /// The primary deck's (empty when the caller may not see that deck).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<FeaturedCardDto>, required = false)]
    featured_cards: Option<Vec<FeaturedCardDto>>,
    /// The primary deck's, in the game's colour order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<String>, required = false)]
    colors: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = u32, required = false)]
    matchup_count: Option<u32>,
}

impl GuideListItem {
    pub fn new(guide: &SideboardGuide, with_summary: bool) -> Self {
        let summary = guide.primary_summary.as_ref().filter(|_| with_summary);
        Self {
            id: guide.id.0,
            name: guide.content.name.clone(),
            author: AuthorDto::from(&guide.author),
            game: guide.game.clone(),
            visibility: vec![guide.content.visibility.as_str().to_owned()],
            deck_id: guide.primary_deck.0,
            format: guide.content.format.clone(),
            views: guide.pageviews,
            likes: guide.likes,
            has_matchups: guide.has_matchups(),
            thumbnail: guide.content.thumbnail.clone(),
            edited_at: guide.updated_at,
            created_at: guide.created_at,
            source_provider: SOURCE_PROVIDER.to_owned(),
            featured_cards: summary.map(|summary| {
                summary
                    .featured_cards
                    .iter()
                    .map(FeaturedCardDto::from)
                    .collect()
            }),
            colors: summary.map(|summary| summary.colors.clone()),
            matchup_count: with_summary.then_some(guide.matchup_count),
        }
    }
}

/// A page of the sideboard guide list (or of the caller's guides).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!(guide_page_example()))]
pub struct SideboardGuidePage {
    data: Vec<GuideListItem>,
    pagination: Pagination,
}

/// A page of guides as `list` and `my` answer it.
fn page_response(
    request: &HttpRequest,
    state: &HttpState,
    page: &Page<SideboardGuide>,
    list: &GuideListRequest,
) -> Result<HttpResponse, ApiError> {
    let data = page
        .items
        .iter()
        .map(|guide| GuideListItem::new(guide, list.with_summary))
        .collect();
    let pagination = Pagination::new(request, &state.config.public_url, page, list.page);
    json_page(request, &SideboardGuidePage { data, pagination })
}

/// The example answer of `list` and `my`: a page of guides.
fn guide_page_example() -> serde_json::Value {
    serde_json::json!({"data": [{"id": "01a2c3d4-0000-7000-8000-000000000001", "name": "Stompy sideboard plan",
            "author": {"id": "01a1fd7f-5b1e-7c2a-9d3e-4f5a6b7c8d9e", "username": "demo"}, "game": "mtg",
            "visibility": ["public"], "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "format": "Pauper",
            "views": 0, "likes": 3, "hasMatchups": true, "thumbnail": null,
            "editedAt": "2026-11-21T10:02:11.000001Z", "createdAt": "2026-11-21T10:02:11.000001Z",
            "sourceProvider": "manual"}],
        "pagination": {"page": 1, "limit": 20, "total": 1, "total_exact": true, "total_pages": 1,
            "next": null, "previous": null}})
}

/// An attached deck in a guide's detail.
#[derive(Debug, Serialize, ToSchema)]
pub struct GuideDeckDto {
    id: Uuid,
    name: String,
}

/// A card a matchup brings in or takes out.
#[derive(Debug, Serialize, ToSchema)]
pub struct CardOverrideDto {
    /// `in` or `out`.
    special_card_type: String,
    card_id: String,
    card_name: String,
    sort_order: i32,
    quantity: u32,
}

impl From<&CardOverride> for CardOverrideDto {
    fn from(card: &CardOverride) -> Self {
        Self {
            special_card_type: card.special_card_type.as_str().to_owned(),
            card_id: card.card_id.clone(),
            card_name: card.card_name.clone(),
            sort_order: card.sort_order,
            quantity: card.quantity,
        }
    }
}

/// The example matchup, also in the guide detail's example.
fn matchup_example() -> serde_json::Value {
    serde_json::json!({
        "id": "01a2c3d4-0000-7000-8000-000000000002", "opponent_deck_name": "Mono-Blue Faeries",
        "special_card_overrides": [
            {"special_card_type": "in", "card_id": "plummet", "card_name": "Plummet", "sort_order": 0, "quantity": 2}],
        "opponent_archetype": "Tempo", "difficulty": "HARD", "notes": "",
        "play_notes": "Race; they cannot block well.", "draw_notes": "", "sort_order": 1,
        "thumbnail": null, "is_featured": false
    })
}

/// A matchup (public spec 2.7).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = matchup_example)]
pub struct MatchupDto {
    id: Uuid,
    opponent_deck_name: String,
    special_card_overrides: Vec<CardOverrideDto>,
    opponent_archetype: Option<String>,
    /// `VERY_EASY`, `EASY`, `MEDIUM`, `HARD` or `VERY_HARD`.
    difficulty: String,
    notes: String,
    play_notes: String,
    draw_notes: String,
    sort_order: i32,
    thumbnail: Option<String>,
    is_featured: bool,
}

impl From<&Matchup> for MatchupDto {
    fn from(matchup: &Matchup) -> Self {
        let content = &matchup.content;
        Self {
            id: matchup.id.0,
            opponent_deck_name: content.opponent_deck_name.clone(),
            special_card_overrides: content
                .special_card_overrides
                .iter()
                .map(CardOverrideDto::from)
                .collect(),
            opponent_archetype: content.opponent_archetype.clone(),
            difficulty: content.difficulty.as_str().to_owned(),
            notes: content.notes.clone(),
            play_notes: content.play_notes.clone(),
            draw_notes: content.draw_notes.clone(),
            sort_order: content.sort_order,
            thumbnail: content.thumbnail.clone(),
            is_featured: content.is_featured,
        }
    }
}

/// The guide detail (public spec 2.6).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "01a2c3d4-0000-7000-8000-000000000001", "name": "Stompy sideboard plan",
    "author": {"id": "01a1fd7f-5b1e-7c2a-9d3e-4f5a6b7c8d9e", "username": "demo"},
    "game": "mtg", "visibility": ["public"], "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6",
    "format": "Pauper", "views": 0, "likes": 3, "hasMatchups": true, "thumbnail": null,
    "editedAt": "2026-11-21T10:02:11.000001Z", "createdAt": "2026-11-21T10:02:11.000001Z",
    "sourceProvider": "manual", "description": "", "notes": "", "youtube_url": null,
    "premium": false, "is_archived": false, "tags": ["aggro"],
    "matchups": [matchup_example()],
    "decks": [{"id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "name": "Mono-Green Stompy"}],
    "attached_deck_ids": ["01a1fd80-0fe6-7089-a9ee-9e24acd337e6"]
}))]
pub struct GuideDetailDto {
    #[serde(flatten)]
    item: GuideListItem,
    description: String,
    notes: String,
    youtube_url: Option<String>,
    premium: bool,
    is_archived: bool,
    tags: Vec<String>,
    /// By `sort_order`, then creation.
    matchups: Vec<MatchupDto>,
    /// The primary deck first, then in attach order; decks the caller may not see are left out.
    decks: Vec<GuideDeckDto>,
    attached_deck_ids: Vec<Uuid>,
}

impl From<&GuideDetail> for GuideDetailDto {
    fn from(detail: &GuideDetail) -> Self {
        let guide = &detail.guide;
        Self {
            item: GuideListItem::new(guide, false),
            description: guide.content.description.clone(),
            notes: guide.content.notes.clone(),
            youtube_url: guide.content.youtube_url.clone(),
            premium: guide.content.premium,
            is_archived: guide.is_archived,
            tags: guide.content.tags.clone(),
            matchups: detail.matchups.iter().map(MatchupDto::from).collect(),
            decks: detail
                .decks
                .iter()
                .map(|deck| GuideDeckDto {
                    id: deck.id.0,
                    name: deck.name.clone(),
                })
                .collect(),
            attached_deck_ids: detail.decks.iter().map(|deck| deck.id.0).collect(),
        }
    }
}

/// The body of a guide create and PATCH; the same DTO from JSON, form and multipart. Absent
/// fields stay as they are (on create: their defaults).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Stompy sideboard plan", "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6",
    "visibility": ["public"], "format": "Pauper", "tags": ["aggro"],
    "matchups": [{"opponent_deck_name": "Mono-Blue Faeries", "difficulty": "HARD"}]
}))]
pub struct SideboardGuideBody {
    /// Create only, required: the primary deck, one of the caller's decks of this game.
    deck_id: Option<String>,
    /// 1 to 255 characters; required on create.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    name: Option<String>,
    /// At most 500000 characters.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    description: Option<String>,
    /// At most 500000 characters.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    notes: Option<String>,
    /// Exactly one of `public`, `unlisted`, `private` (default `private`).
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, value_type = Option<Vec<crate::dto::names::VisibilityName>>, min_items = 1, max_items = 1)]
    visibility: Option<Vec<String>>,
    /// At most 50 tags of 1 to 50 characters; repeats are dropped.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, max_items = 50)]
    tags: Option<Vec<String>>,
    /// A plain string of at most 50 characters, or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 50)]
    format: Option<Option<String>>,
    /// At most 255 characters, or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    thumbnail: Option<Option<String>>,
    /// At most 500 characters, or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    youtube_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    premium: Option<bool>,
    /// PATCH only: true archives (out of lists, and off its decks' `hasSideboardGuide`).
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    is_archived: Option<bool>,
    /// Create only: the first matchups, at most 100; JSON text in form and multipart bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false, max_items = 100)]
    matchups: Option<Vec<MatchupBody>>,
}

impl SideboardGuideBody {
    fn into_parts(self) -> (Option<String>, GuideChanges, Option<Vec<MatchupBody>>) {
        let changes = GuideChanges {
            name: self.name,
            description: self.description,
            notes: self.notes,
            visibility: self.visibility,
            tags: self.tags,
            format: self.format.into(),
            thumbnail: self.thumbnail.into(),
            youtube_url: self.youtube_url.into(),
            premium: self.premium,
            is_archived: self.is_archived,
        };
        (self.deck_id, changes, self.matchups)
    }

    /// A PATCH's changes: a guide's primary deck and matchups have endpoints of their own.
    pub fn into_patch(self) -> Result<GuideChanges, Violations> {
        let (deck_id, changes, matchups) = self.into_parts();
        let mut v = Violations::default();
        let create_only = [
            ("deck_id", deck_id.is_some()),
            ("matchups", matchups.is_some()),
        ];
        for (field, present) in create_only {
            if present {
                v.push(FieldViolation::new(
                    field,
                    "unknown_field",
                    "only a create takes this field",
                ));
            }
        }
        v.into_result(changes)
    }
}

impl From<SideboardGuideBody> for NewGuideInput {
    fn from(body: SideboardGuideBody) -> Self {
        let (deck_id, fields, matchups) = body.into_parts();
        Self {
            deck_id,
            fields,
            matchups: matchups
                .unwrap_or_default()
                .into_iter()
                .map(MatchupChanges::from)
                .collect(),
        }
    }
}

/// `{"deck_id"}`: a deck of this game the caller can read.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachBody {
    pub deck_id: String,
}

/// A card override as sent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CardOverrideBody {
    /// `in` or `out`.
    #[schema(value_type = crate::dto::names::SpecialCardTypeName)]
    special_card_type: String,
    /// 1 to 64 characters.
    #[schema(min_length = 1, max_length = 64)]
    card_id: String,
    /// 1 to 255 characters.
    #[schema(min_length = 1, max_length = 255)]
    card_name: String,
    /// 1 to 999, default 1.
    #[schema(minimum = 1, maximum = 999)]
    quantity: Option<i64>,
    /// 0 to 100000, default the position in the list.
    #[schema(minimum = 0, maximum = 100000)]
    sort_order: Option<i64>,
}

/// The body of a matchup create or PATCH; absent fields stay as they are (on create: their
/// defaults).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "opponent_deck_name": "Mono-Blue Faeries", "opponent_archetype": "Tempo", "difficulty": "HARD",
    "sort_order": 1, "play_notes": "Race; they cannot block well.",
    "special_card_overrides": [
        {"special_card_type": "in", "card_id": "plummet", "card_name": "Plummet", "quantity": 2}]
}))]
pub struct MatchupBody {
    /// 1 to 255 characters; required on create.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, min_length = 1, max_length = 255)]
    opponent_deck_name: Option<String>,
    /// At most 100 characters, or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, max_length = 100)]
    opponent_archetype: Option<Option<String>>,
    /// `VERY_EASY`, `EASY`, `MEDIUM` (default), `HARD` or `VERY_HARD`.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, value_type = Option<crate::dto::names::DifficultyName>)]
    difficulty: Option<String>,
    /// At most 50000 characters each.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    notes: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    play_notes: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    draw_notes: Option<String>,
    /// 0 to 100000 (default 0); matchups are shown by it, then by creation.
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false, minimum = 0, maximum = 100000)]
    sort_order: Option<i64>,
    /// At most 255 characters, or null.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    thumbnail: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(nullable = false)]
    is_featured: Option<bool>,
    /// Replaces the whole list; JSON text in form and multipart bodies. At most 100.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false, max_items = 100)]
    special_card_overrides: Option<Vec<CardOverrideBody>>,
}

impl From<MatchupBody> for MatchupChanges {
    fn from(body: MatchupBody) -> Self {
        Self {
            opponent_deck_name: body.opponent_deck_name,
            opponent_archetype: body.opponent_archetype.into(),
            difficulty: body.difficulty,
            notes: body.notes,
            play_notes: body.play_notes,
            draw_notes: body.draw_notes,
            sort_order: body.sort_order,
            thumbnail: body.thumbnail.into(),
            is_featured: body.is_featured,
            special_card_overrides: body.special_card_overrides.map(|overrides| {
                overrides
                    .into_iter()
                    .map(|card| OverrideInput {
                        special_card_type: card.special_card_type,
                        card_id: card.card_id,
                        card_name: card.card_name,
                        quantity: card.quantity,
                        sort_order: card.sort_order,
                    })
                    .collect()
            }),
        }
    }
}

/// The list's query (public spec 4.5 under the contract's names). Unknown parameters are
/// ignored; `authorId` is not taken by `my`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct GuideListQuery {
    /// Case-insensitive substring of the name.
    q: Option<String>,
    /// Case-insensitive substring of a matchup's opponent archetype.
    opponent_archetype: Option<String>,
    /// Author user id.
    author_id: Option<String>,
    /// Inclusive bounds, RFC 3339 with any offset.
    created_after: Option<String>,
    created_before: Option<String>,
    /// Guides with this deck attached (the primary deck included).
    deck_id: Option<String>,
    edited_after: Option<String>,
    edited_before: Option<String>,
    /// Case-insensitive substring of the plain format string.
    format: Option<String>,
    has_video: Option<bool>,
    /// `summary` adds featured_cards and colors (of the primary deck) and matchup_count.
    include: Option<String>,
    /// 1 to 100, default 20.
    limit: Option<i64>,
    /// `asc` or `desc` (default).
    order: Option<String>,
    /// 1-based; `page * limit` at most 10000.
    page: Option<i64>,
    /// `createdAt`, `editedAt` (default), `likes` or `views`.
    sort: Option<String>,
}

impl GuideListQuery {
    /// The validated request; every invalid parameter is reported together.
    pub fn into_request(self) -> Result<GuideListRequest, Violations> {
        let mut v = Violations::default();
        let non_empty = |value: Option<String>| value.filter(|value| !value.is_empty());
        let filters = GuideFilters {
            name_contains: non_empty(self.q),
            opponent_archetype_contains: non_empty(self.opponent_archetype),
            author: uuid("authorId", &self.author_id, &mut v).map(UserId),
            created_after: instant("createdAfter", &self.created_after, &mut v),
            created_before: instant("createdBefore", &self.created_before, &mut v),
            deck: uuid("deckId", &self.deck_id, &mut v).map(DeckId),
            edited_after: instant("editedAfter", &self.edited_after, &mut v),
            edited_before: instant("editedBefore", &self.edited_before, &mut v),
            format_contains: non_empty(self.format),
            has_video: self.has_video,
        };
        let options = ListOptions::parse(
            self.sort.as_deref(),
            GuideSort::parse,
            self.order.as_deref(),
            self.include.as_deref(),
            self.page,
            self.limit,
            v,
        )?;
        Ok(GuideListRequest {
            filters,
            sort: options.sort,
            order: options.order,
            page: options.page,
            with_summary: options.with_summary,
        })
    }
}
