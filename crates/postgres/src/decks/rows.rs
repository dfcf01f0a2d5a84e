//! The rows a deck's reads decode and the statements that select them. Each row struct names
//! its columns once, each field beside the SQL that fills it ([`selected_row!`]), and every
//! select list is read off the structs, so a column is added in one place.

use std::collections::HashMap;
use std::sync::LazyLock;

use anyhow::Context as _;
use deckhand_domain::decks::{
    Author, ContentType, Deck, DeckContent, DeckFacts, DeckGuide, DeckId, DeckListing,
    DeckOverview, DeckSummary, DeckVersion, ForkOrigin, ForkedFrom, HistoryType, Provenance,
    SourceAccess, Visibility,
};
use deckhand_domain::identity::{UserId, Username};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{
    Bool, Int4, Int8, Json as SqlJson, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::list_counts::Listed;
use crate::schema::deck_guides;
use crate::stored::{
    Json, StoredCard, StoredChoice, StoredContent, StoredSummary, domain_cards, domain_choices,
};

/// A row of hand-written SQL: each field with its SQL type and the select expression that fills
/// it (named as the field), so the struct is the one place its columns are spelled. `columns()`
/// is its select list: an embedded row's (`embedding`) first, then its own in order.
macro_rules! selected_row {
    (
        $(#[$meta:meta])*
        struct $row:ident $(, embedding $embed:ident: $embedded:ident)? {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty = $sql_ty:ty => $sql:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, QueryableByName)]
        pub(super) struct $row {
            $(#[diesel(embed)] pub(super) $embed: $embedded,)?
            $($(#[$field_meta])* #[diesel(sql_type = $sql_ty)] pub(super) $field: $ty,)+
        }

        impl $row {
            /// The select list of this row, joined once: a page's statement is written on
            /// every request.
            pub(super) fn columns() -> &'static str {
                static COLUMNS: LazyLock<String> = LazyLock::new(|| {
                    let columns: Vec<&str> = vec![$($embedded::columns(),)? $($sql),+];
                    columns.join(", ")
                });
                &COLUMNS
            }
        }
    };
}

/// The deck a fork was made from, as a fork's reads join it: only what the read rule needs to
/// know of it now (its `SourceAccess`), probed by its primary key.
macro_rules! source_join {
    () => {
        "LEFT JOIN decks src ON src.id = d.forked_from_id"
    };
}

/// The joins a single deck's reads go through: its author, its counters and its fork source.
/// Lists join only the counters and the source, and name authors from `Usernames`.
const DECK_JOINS: &str = concat!(
    "FROM decks d JOIN users u ON u.id = d.owner_id JOIN deck_stats s ON s.deck_id = d.id ",
    source_join!()
);

/// The joins of a detail that does not expand its cards: [`DECK_JOINS`] but the author, whom
/// it names from `Usernames` as lists do (PostgreSQL answers the statement 9 to 14% faster
/// without the join; docs/benchmarks/history.md, "the detail names its author from memory").
const OVERVIEW_JOINS: &str = concat!(
    "FROM decks d JOIN deck_stats s ON s.deck_id = d.id ",
    source_join!()
);

/// A whole deck ([`DeckRow`]) by its id, `$1`.
pub(super) static DECK_SELECT: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {} {DECK_JOINS} WHERE d.id = $1", DeckRow::columns()));

/// What a detail shows unless it expands the cards ([`OverviewRow`]), by the deck's id, `$1`:
/// the card lines, the bulk of a row, stay unread.
pub(super) static OVERVIEW_SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} {OVERVIEW_JOINS} WHERE d.id = $1",
        OverviewRow::columns()
    )
});

/// A deck about to be saved ([`DeckToSaveRow`]), by its id, `$1`, read as it is: a save that
/// does not wait on other saves.
pub(super) static DECK_TO_SAVE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} {DECK_JOINS} WHERE d.id = $1",
        DeckToSaveRow::columns()
    )
});

/// [`DECK_TO_SAVE`], locked against other saves (its counters and author are read, not
/// locked). A save changes no key, so `NO KEY UPDATE` is its lock ([`SAVE_LOCK`]).
pub(super) static DECK_LOCK: LazyLock<String> =
    LazyLock::new(|| format!("{} {SAVE_LOCK} OF d", *DECK_TO_SAVE));

/// The row lock a save holds on its deck: it keeps other saves out, but not the `KEY SHARE`
/// lock that a row naming the deck (a fork, a like, a guide) takes to check its reference.
/// `FOR UPDATE` would: a fork whose statement had taken the event counter's row then waited on
/// the saved deck while the save waited on the counter, and PostgreSQL cancelled one of them
/// (`deadlock detected`, a 500 found by `cargo xtask fuzz`).
pub(super) const SAVE_LOCK: &str = "FOR NO KEY UPDATE";

/// A new deck read back ([`DeckRow`]) by its create statement from the rows the statement's
/// `inserted` and `counters` CTEs return, since a statement does not see its own inserts.
pub(super) static INSERTED_SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        concat!(
            " SELECT {} FROM inserted d JOIN users u ON u.id = d.owner_id \
             JOIN counters s ON s.deck_id = d.id ",
            source_join!()
        ),
        DeckRow::columns()
    )
});

/// A deck's history records, each with the card list of the record it shares it with
/// (`cards_from`); a [`VersionRow`] each, by the deck's id, `$1`.
pub(super) static VERSION_SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM deck_versions v LEFT JOIN deck_versions holder \
         ON holder.deck_id = v.deck_id AND holder.version_number = v.cards_from \
         WHERE v.deck_id = $1",
        VersionRow::columns()
    )
});

/// What a list shows of the decks of the game `game` (an SQL literal or placeholder): no card
/// lines, notes or featured choices ([`ListingRow`]), and its author's name only as an id, named
/// from `Usernames`; with the game's changes, so a page tells whether a remembered count is
/// still good without a statement of its own. The changes are read once for the page: named by
/// `d.game`, they were read again for every row (40 of a 20-deck page's 143 buffers). The
/// summary only `with_summary`: a page without it does not decode 20 to 100 JSON documents
/// that it does not show (docs/benchmarks.md, "The list reads no summary it does not show").
pub(super) fn listing_select(game: &str, with_summary: bool) -> String {
    format!(
        concat!(
            "SELECT {columns}, {summary} AS summary, {changes} AS list_changes ",
            "FROM decks d JOIN deck_stats s ON s.deck_id = d.id ",
            source_join!()
        ),
        columns = ListingRow::columns(),
        summary = if with_summary {
            "d.summary"
        } else {
            "NULL::json"
        },
        changes = Listed::Decks.changes_sql(game)
    )
}

fn author(id: Uuid, owner_id: Uuid, username: &str) -> anyhow::Result<Author> {
    let username = Username::parse(username)
        .with_context(|| format!("deck {id} has an owner with an invalid username"))?;
    Ok(Author {
        id: UserId(owner_id),
        username,
    })
}

fn visibility(id: Uuid, stored: &str) -> anyhow::Result<Visibility> {
    Visibility::from_stored(stored).with_context(|| format!("deck {id} has visibility {stored:?}"))
}

selected_row! {
    /// What a list shows of a deck: no username, which lists take from `Usernames`.
    struct ListingRow {
        id: Uuid = SqlUuid => "d.id",
        game: String = Text => "d.game",
        owner_id: Uuid = SqlUuid => "d.owner_id",
        name: String = Text => "d.name",
        visibility: String = Text => "d.visibility",
        format_id: Option<Uuid> = Nullable<SqlUuid> => "d.format_id",
        archetype: Option<String> = Nullable<Text> => "d.archetype",
        has_video: bool = Bool => "d.youtube_url IS NOT NULL AS has_video",
        source_provider: String = Text => "d.source_provider",
        has_guide: bool = Bool => "d.has_guide",
        has_sideboard_guide: bool = Bool => "d.has_sideboard_guide",
        created_at: OffsetDateTime = Timestamptz => "d.created_at",
        updated_at: OffsetDateTime = Timestamptz => "d.updated_at",
        pageviews: i64 = Int8 => "s.pageviews",
        likes: i64 = Int8 => "s.likes",
        forks: i64 = Int8 => "s.forks",
        forked_from_id: Option<Uuid> = Nullable<SqlUuid> => "d.forked_from_id",
        forked_from_version: Option<i32> = Nullable<Int4> => "d.forked_from_version",
        source_visibility: Option<String> = Nullable<Text> => "src.visibility AS source_visibility",
        source_owner_id: Option<Uuid> = Nullable<SqlUuid> => "src.owner_id AS source_owner_id",
        source_is_archived: Option<bool> = Nullable<Bool> => "src.is_archived AS source_is_archived",
    }
}

selected_row! {
    /// What a detail shows unless it expands the cards: the listing's columns and what a
    /// detail adds; no username, which it takes from `Usernames`.
    struct OverviewRow, embedding listing: ListingRow {
        summary: Json<StoredSummary> = SqlJson => "d.summary",
        notes: String = Text => "d.notes",
        source_external_id: Option<String> = Nullable<Text> => "d.source_external_id",
        source_external_url: Option<String> = Nullable<Text> => "d.source_external_url",
        version: i32 = Int4 => "d.version",
    }
}

selected_row! {
    /// A whole deck row: its overview, its author's name and the rest (card lines, featured
    /// choices, the fields a list or a detail does not show).
    struct DeckRow, embedding overview: OverviewRow {
        username: String = Text => "u.username",
        youtube_url: Option<String> = Nullable<Text> => "d.youtube_url",
        thumbnail: Option<String> = Nullable<Text> => "d.thumbnail",
        legal: bool = Bool => "d.legal",
        cards: Json<Vec<StoredCard>> = SqlJson => "d.cards",
        featured: Option<Json<Vec<StoredChoice>>> = Nullable<SqlJson> => "d.featured",
        source_external_version: Option<String> = Nullable<Text> => "d.source_external_version",
        source_imported_at: Option<OffsetDateTime> = Nullable<Timestamptz> => "d.source_imported_at",
        is_archived: bool = Bool => "d.is_archived",
    }
}

selected_row! {
    /// A deck about to be saved, with the number of the history record that holds its current
    /// card list.
    struct DeckToSaveRow, embedding deck: DeckRow {
        /// The history record that holds the deck's card list; `None` if its newest record is
        /// missing, when the next save stores the list in full.
        cards_record: Option<i32> = Nullable<Int4> =>
            "(SELECT coalesce(v.cards_from, v.version_number) FROM deck_versions v \
             WHERE v.deck_id = d.id AND v.version_number = d.version) AS cards_record",
    }
}

selected_row! {
    /// A history record, its card list read from the record that holds it when it names one.
    struct VersionRow {
        version_number: i32 = Int4 => "v.version_number",
        history_type: String = Text => "v.history_type",
        restored_from: Option<i32> = Nullable<Int4> => "v.restored_from",
        content: Json<StoredContent> = SqlJson => "v.content",
        shared_cards: Option<Json<Vec<StoredCard>>> = Nullable<SqlJson> =>
            "holder.content -> 'cards' AS shared_cards",
        summary: Json<StoredSummary> = SqlJson => "v.summary",
        edited_at: OffsetDateTime = Timestamptz => "v.edited_at",
    }
}

/// A row of a list page ([`listing_select`]).
#[derive(Debug, QueryableByName)]
pub(super) struct PageRow {
    #[diesel(embed)]
    pub(super) listing: ListingRow,
    /// The deck's summary when the page shows it ([`listing_select`]).
    #[diesel(sql_type = Nullable<SqlJson>)]
    pub(super) summary: Option<Json<StoredSummary>>,
    /// The game's changes as the page's statement saw them (`Listed::changes_sql`).
    #[diesel(sql_type = Int8)]
    pub(super) list_changes: i64,
}

impl PageRow {
    /// The listing of this row, its author named from `names` (by user id).
    pub(super) fn into_listing(
        self,
        names: &HashMap<Uuid, Username>,
    ) -> anyhow::Result<DeckListing> {
        let Self {
            listing, summary, ..
        } = self;
        let username = names
            .get(&listing.owner_id)
            .cloned()
            .with_context(|| format!("deck {} has an owner without a user", listing.id))?;
        let summary = summary.map(|summary| summary.0.into()).unwrap_or_default();
        listing.into_domain(username, summary)
    }
}

impl DeckRow {
    pub(super) fn into_domain(self) -> anyhow::Result<Deck> {
        let listing = &self.overview.listing;
        let owner = author(listing.id, listing.owner_id, &self.username)?;
        let DeckOverview {
            listing,
            notes,
            source_external_id,
            source_external_url,
            version,
        } = self.overview.into_domain(owner.username)?;
        Ok(Deck {
            content: DeckContent {
                visibility: listing.visibility,
                name: listing.name,
                notes,
                format_id: listing.format_id,
                youtube_url: self.youtube_url,
                thumbnail: self.thumbnail,
                legal: self.legal,
                archetype: listing.archetype,
                cards: domain_cards(self.cards.0),
                featured: self.featured.map(|featured| domain_choices(featured.0)),
            },
            facts: listing.facts,
            provenance: Provenance {
                source_provider: listing.source_provider,
                source_external_id,
                source_external_version: self.source_external_version,
                source_external_url,
                source_imported_at: self.source_imported_at,
            },
            is_archived: self.is_archived,
            version,
        })
    }
}

impl ListingRow {
    /// The fork's source with what the read rule needs of it; `None` for no fork.
    fn fork(&self) -> anyhow::Result<Option<ForkOrigin>> {
        let (Some(deck_id), Some(version)) = (self.forked_from_id, self.forked_from_version) else {
            return Ok(None);
        };
        let access = match (
            &self.source_visibility,
            self.source_owner_id,
            self.source_is_archived,
        ) {
            (Some(stored), Some(owner), Some(is_archived)) => Some(SourceAccess {
                visibility: visibility(deck_id, stored)?,
                owner: UserId(owner),
                is_archived,
            }),
            _ => None,
        };
        Ok(Some(ForkOrigin {
            source: ForkedFrom {
                deck_id: DeckId(deck_id),
                version,
            },
            access,
        }))
    }

    /// The listing, by `username` (its owner's), with `summary`.
    pub(super) fn into_domain(
        self,
        username: Username,
        summary: DeckSummary,
    ) -> anyhow::Result<DeckListing> {
        Ok(DeckListing {
            facts: DeckFacts {
                fork: self.fork()?,
                forks: self.forks,
                author: Author {
                    id: UserId(self.owner_id),
                    username,
                },
                id: DeckId(self.id),
                game: self.game,
                summary,
                pageviews: self.pageviews,
                likes: self.likes,
                has_guide: self.has_guide,
                has_sideboard_guide: self.has_sideboard_guide,
                created_at: self.created_at,
                updated_at: self.updated_at,
            },
            visibility: visibility(self.id, &self.visibility)?,
            name: self.name,
            format_id: self.format_id,
            archetype: self.archetype,
            has_video: self.has_video,
            source_provider: self.source_provider,
        })
    }
}

impl OverviewRow {
    /// The overview, its author named `username`.
    pub(super) fn into_domain(self, username: Username) -> anyhow::Result<DeckOverview> {
        Ok(DeckOverview {
            listing: self.listing.into_domain(username, self.summary.0.into())?,
            notes: self.notes,
            source_external_id: self.source_external_id,
            source_external_url: self.source_external_url,
            version: self.version,
        })
    }
}

impl VersionRow {
    pub(super) fn into_domain(self) -> anyhow::Result<DeckVersion> {
        let history_type = match (self.history_type.as_str(), self.restored_from) {
            ("create", None) => HistoryType::Create,
            ("update", None) => HistoryType::Update,
            ("rollback", Some(restored_from)) => HistoryType::Rollback { restored_from },
            (other, _) => anyhow::bail!("unknown stored history type {other:?}"),
        };
        Ok(DeckVersion {
            version_number: self.version_number,
            history_type,
            content: self
                .content
                .0
                .into_domain(self.shared_cards.map(|cards| cards.0))
                .with_context(|| format!("history record {}", self.version_number))?,
            summary: self.summary.0.into(),
            edited_at: self.edited_at,
        })
    }
}

/// A deck's guide, read and written by diesel's DSL.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = deck_guides, check_for_backend(Pg))]
pub(super) struct GuideRow {
    pub(super) deck_id: Uuid,
    pub(super) id: Uuid,
    pub(super) content_type: String,
    pub(super) content: String,
    pub(super) is_premium: bool,
    pub(super) created_at: OffsetDateTime,
    pub(super) updated_at: OffsetDateTime,
}

impl GuideRow {
    pub(super) fn from_domain(guide: &DeckGuide) -> Self {
        Self {
            deck_id: guide.deck_id.0,
            id: guide.id,
            content_type: guide.content_type.as_str().to_owned(),
            content: guide.content.clone(),
            is_premium: guide.is_premium,
            created_at: guide.created_at,
            updated_at: guide.updated_at,
        }
    }

    pub(super) fn into_domain(self) -> anyhow::Result<DeckGuide> {
        let content_type = ContentType::parse(&self.content_type).with_context(|| {
            format!("guide {} has content type {:?}", self.id, self.content_type)
        })?;
        Ok(DeckGuide {
            id: self.id,
            deck_id: DeckId(self.deck_id),
            content_type,
            content: self.content,
            is_premium: self.is_premium,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_selects_its_embedded_rows_columns_first() {
        let deck = DeckRow::columns();
        assert!(deck.starts_with(OverviewRow::columns()));
        assert!(OverviewRow::columns().starts_with("d.id, d.game, d.owner_id, "));
        assert!(deck.ends_with(", d.source_imported_at, d.is_archived"));
        assert_eq!(deck.matches(", ").count() + 1, 21 + 5 + 9);
    }
}
