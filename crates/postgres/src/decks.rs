//! Decks over PostgreSQL. A deck is read by one statement (`DECK_SELECT`, joined to its author
//! and counters) and decoded straight from its json columns into the storage types of
//! `stored.rs`; lists read only the columns a list shows (`listing_select`, never the card
//! lines), built by `list_query.rs`. A save reads the deck, then rewrites only the columns that
//! changed and adds its history record in one statement that applies only if no other save came
//! between (else it saves again under the deck's row lock). An unchanged card list keeps its
//! stored (TOASTed) value, and the history record then names the record holding that list
//! (`cards_from`) instead of storing it again (`VERSION_SELECT` joins it back).

mod card_stats;
pub(crate) mod list_query;

use std::sync::LazyLock;
use std::time::Duration as StdDuration;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::decks::card_search::{CardStatsQuery, CardUsage};
use deckhand_domain::decks::events as deck_events;
use deckhand_domain::decks::ports::{
    DeckRepository, InsertDeckError, NewDeck, ReviseDeckError, Reviser, Revision, RevisionRefused,
    ViewCount,
};
use deckhand_domain::decks::{
    Author, ContentType, Deck, DeckContent, DeckGuide, DeckId, DeckListing, DeckOverview,
    DeckQuery, DeckReader, DeckSummary, DeckVersion, ForkOrigin, ForkedFrom, HistoryType, Page,
    Provenance, SourceAccess, Visibility,
};
use deckhand_domain::events::EventRecord;
use deckhand_domain::identity::{UserId, Username};
use deckhand_domain::readable::Reach;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{
    Bool, Int4, Int8, Json as SqlJson, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use self::card_stats::CardStatistics;
use self::list_query::{
    count_sql, first_page_sql, page_ids_sql, page_sql, page_window, rows_by_ids_sql,
    walked_page_sql,
};
use crate::error;
use crate::events::{self, EventColumns, numbered_insert_ctes};
use crate::list_counts::{Listed, RememberedCounts};
use crate::pool::{PipelinedTransaction, Pool, checkout};
use crate::rules::{
    Conditions, contains_pattern, deck_conditions, deck_conditions_but_name, readable_sql,
    trending_bump_sql,
};
use crate::schema::{deck_guides, deck_versions, decks};
use crate::statement::{Bind, Float, Statement};
use crate::stored::{
    Json, StoredCard, StoredChoice, StoredContent, StoredSummary, domain_cards, domain_choices,
    stored_cards, stored_choices,
};
use crate::usernames::Usernames;

/// The deck a fork was made from, as a fork's reads join it: only what the read rule needs to
/// know of it now (its `SourceAccess`), probed by its primary key.
macro_rules! source_join {
    () => {
        "LEFT JOIN decks src ON src.id = d.forked_from_id"
    };
}

/// The joins a single deck's reads go through: its author, its counters and its fork source.
/// Lists join only the counters and the source, and name authors from [`Usernames`].
macro_rules! deck_joins {
    () => {
        concat!(
            "FROM decks d JOIN users u ON u.id = d.owner_id JOIN deck_stats s ON s.deck_id = d.id ",
            source_join!()
        )
    };
}

/// The columns of a [`ListingRow`]: no username, which lists take from [`Usernames`].
macro_rules! listing_columns {
    () => {
        "d.id, d.game, d.owner_id, d.name, d.visibility, d.format_id, d.archetype, \
         d.youtube_url IS NOT NULL AS has_video, d.source_provider, d.summary, d.has_guide, \
         d.has_sideboard_guide, d.created_at, d.updated_at, s.pageviews, s.likes, s.forks, \
         d.forked_from_id, d.forked_from_version, src.visibility AS source_visibility, \
         src.owner_id AS source_owner_id, src.is_archived AS source_is_archived"
    };
}

/// The columns of an [`OverviewRow`]: the listing's, its author's name, and what a detail adds.
macro_rules! overview_columns {
    () => {
        concat!(
            listing_columns!(),
            ", u.username, d.notes, d.source_external_id, d.source_external_url, d.version"
        )
    };
}

/// The columns of a [`DeckRow`]: the overview's, and the rest of the row.
macro_rules! deck_columns {
    () => {
        concat!(
            overview_columns!(),
            ", d.youtube_url, d.thumbnail, d.legal, d.cards, d.featured, \
             d.source_external_version, d.source_imported_at, d.is_archived"
        )
    };
}

const DECK_SELECT: &str = concat!("SELECT ", deck_columns!(), " ", deck_joins!());

/// A deck about to be saved, with the number of the history record that holds its current
/// card list (a [`DeckToSaveRow`]).
macro_rules! deck_to_save {
    () => {
        concat!(
            "SELECT ",
            deck_columns!(),
            ", (SELECT coalesce(v.cards_from, v.version_number) FROM deck_versions v \
                WHERE v.deck_id = d.id AND v.version_number = d.version) AS cards_record ",
            deck_joins!(),
            " WHERE d.id = $1"
        )
    };
}

/// [`deck_to_save!`], read as it is: a save that does not wait on other saves.
const DECK_TO_SAVE: &str = deck_to_save!();

/// [`deck_to_save!`], locked against other saves (its counters and author are read, not
/// locked).
const DECK_LOCK: &str = concat!(deck_to_save!(), " FOR UPDATE OF d");

/// A deck's history records, each with the card list of the record it shares it with
/// (`cards_from`); a [`VersionRow`] each.
const VERSION_SELECT: &str = "SELECT v.version_number, v.history_type, v.restored_from, \
     v.content, holder.content -> 'cards' AS shared_cards, v.summary, v.edited_at \
     FROM deck_versions v LEFT JOIN deck_versions holder \
     ON holder.deck_id = v.deck_id AND holder.version_number = v.cards_from \
     WHERE v.deck_id = $1";

/// What a list shows of the decks of the game `game` (an SQL literal or placeholder): no card
/// lines, notes or featured choices (`DeckListing`), and its author's name only as an id, named
/// from [`Usernames`]; with the game's changes, so a page tells whether a remembered count is
/// still good without a statement of its own. The changes are read once for the page: named by
/// `d.game`, they were read again for every row (40 of a 20-deck page's 143 buffers).
fn listing_select(game: &str) -> String {
    format!(
        concat!(
            "SELECT ",
            listing_columns!(),
            ", {changes} AS list_changes FROM decks d JOIN deck_stats s ON s.deck_id = d.id ",
            source_join!()
        ),
        changes = Listed::Decks.changes_sql(game)
    )
}

/// What a detail shows unless it expands the cards (`DeckOverview`): the card lines, the
/// bulk of a row, stay unread.
const OVERVIEW_SELECT: &str = concat!("SELECT ", overview_columns!(), " ", deck_joins!());

/// How many distinct page statements keep a short walk.
const SHORT_WALK_CAPACITY: u64 = 10_000;

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

/// A whole deck row: its overview and the rest (card lines, featured choices, the fields a
/// list or a detail does not show).
#[derive(Debug, QueryableByName)]
struct DeckRow {
    #[diesel(embed)]
    overview: OverviewRow,
    #[diesel(sql_type = Nullable<Text>)]
    youtube_url: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    thumbnail: Option<String>,
    #[diesel(sql_type = Bool)]
    legal: bool,
    #[diesel(sql_type = SqlJson)]
    cards: Json<Vec<StoredCard>>,
    #[diesel(sql_type = Nullable<SqlJson>)]
    featured: Option<Json<Vec<StoredChoice>>>,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_version: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    source_imported_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    is_archived: bool,
}

impl DeckRow {
    fn into_domain(self) -> anyhow::Result<Deck> {
        let DeckOverview {
            listing,
            notes,
            source_external_id,
            source_external_url,
            version,
        } = self.overview.into_domain()?;
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
            id: listing.id,
            game: listing.game,
            author: listing.author,
            summary: listing.summary,
            provenance: Provenance {
                source_provider: listing.source_provider,
                source_external_id,
                source_external_version: self.source_external_version,
                source_external_url,
                source_imported_at: self.source_imported_at,
            },
            is_archived: self.is_archived,
            version,
            pageviews: listing.pageviews,
            likes: listing.likes,
            has_guide: listing.has_guide,
            has_sideboard_guide: listing.has_sideboard_guide,
            fork: listing.fork,
            forks: listing.forks,
            created_at: listing.created_at,
            updated_at: listing.updated_at,
        })
    }
}

#[derive(Debug, QueryableByName)]
struct ListingRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    game: String,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    visibility: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    format_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    archetype: Option<String>,
    #[diesel(sql_type = Bool)]
    has_video: bool,
    #[diesel(sql_type = Text)]
    source_provider: String,
    #[diesel(sql_type = SqlJson)]
    summary: Json<StoredSummary>,
    #[diesel(sql_type = Bool)]
    has_guide: bool,
    #[diesel(sql_type = Bool)]
    has_sideboard_guide: bool,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
    #[diesel(sql_type = Int8)]
    pageviews: i64,
    #[diesel(sql_type = Int8)]
    likes: i64,
    #[diesel(sql_type = Int8)]
    forks: i64,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    forked_from_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Int4>)]
    forked_from_version: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    source_visibility: Option<String>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    source_owner_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Bool>)]
    source_is_archived: Option<bool>,
}

/// A row of a list page ([`listing_select`]).
#[derive(Debug, QueryableByName)]
struct PageRow {
    #[diesel(embed)]
    listing: ListingRow,
    /// The game's changes as the page's statement saw them (`Listed::changes_sql`).
    #[diesel(sql_type = Int8)]
    list_changes: i64,
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

    /// The listing, by `username` (its owner's).
    fn into_domain(self, username: Username) -> anyhow::Result<DeckListing> {
        Ok(DeckListing {
            fork: self.fork()?,
            forks: self.forks,
            author: Author {
                id: UserId(self.owner_id),
                username,
            },
            visibility: visibility(self.id, &self.visibility)?,
            id: DeckId(self.id),
            game: self.game,
            name: self.name,
            format_id: self.format_id,
            archetype: self.archetype,
            has_video: self.has_video,
            source_provider: self.source_provider,
            summary: self.summary.0.into(),
            pageviews: self.pageviews,
            likes: self.likes,
            has_guide: self.has_guide,
            has_sideboard_guide: self.has_sideboard_guide,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(Debug, QueryableByName)]
struct OverviewRow {
    #[diesel(embed)]
    listing: ListingRow,
    #[diesel(sql_type = Text)]
    username: String,
    #[diesel(sql_type = Text)]
    notes: String,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_url: Option<String>,
    #[diesel(sql_type = Int4)]
    version: i32,
}

impl OverviewRow {
    fn into_domain(self) -> anyhow::Result<DeckOverview> {
        let owner = author(self.listing.id, self.listing.owner_id, &self.username)?;
        Ok(DeckOverview {
            listing: self.listing.into_domain(owner.username)?,
            notes: self.notes,
            source_external_id: self.source_external_id,
            source_external_url: self.source_external_url,
            version: self.version,
        })
    }
}

#[derive(Debug, QueryableByName)]
struct DeckToSaveRow {
    #[diesel(embed)]
    deck: DeckRow,
    /// The history record that holds the deck's card list; `None` if its newest record is
    /// missing, when the next save stores the list in full.
    #[diesel(sql_type = Nullable<Int4>)]
    cards_record: Option<i32>,
}

#[derive(Debug, QueryableByName)]
struct VersionRow {
    #[diesel(sql_type = Int4)]
    version_number: i32,
    #[diesel(sql_type = Text)]
    history_type: String,
    #[diesel(sql_type = Nullable<Int4>)]
    restored_from: Option<i32>,
    #[diesel(sql_type = SqlJson)]
    content: Json<StoredContent>,
    #[diesel(sql_type = Nullable<SqlJson>)]
    shared_cards: Option<Json<Vec<StoredCard>>>,
    #[diesel(sql_type = SqlJson)]
    summary: Json<StoredSummary>,
    #[diesel(sql_type = Timestamptz)]
    edited_at: OffsetDateTime,
}

impl VersionRow {
    fn into_domain(self) -> anyhow::Result<DeckVersion> {
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

fn restored_from(history_type: HistoryType) -> Option<i32> {
    match history_type {
        HistoryType::Rollback { restored_from } => Some(restored_from),
        HistoryType::Create | HistoryType::Update => None,
    }
}

async fn load_deck(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<DeckRow>> {
    Statement::new(
        format!("{DECK_SELECT} WHERE d.id = $1"),
        vec![Bind::Uuid(id)],
    )
    .get_result(conn)
    .await
    .optional()
}

/// The deck a save starts from, by `sql`: [`DECK_TO_SAVE`] or [`DECK_LOCK`].
async fn read_to_save(
    mut conn: &AsyncPgConnection,
    sql: &'static str,
    id: Uuid,
) -> QueryResult<Option<DeckToSaveRow>> {
    Statement::new(sql, vec![Bind::Uuid(id)])
        .get_result(&mut conn)
        .await
        .optional()
}

/// `BEGIN`, `COMMIT` or `ROLLBACK`, prepared once per connection like any [`Statement`].
async fn transaction_control(mut conn: &AsyncPgConnection, sql: &'static str) -> QueryResult<()> {
    Statement::new(sql, Vec::new())
        .execute(&mut conn)
        .await
        .map(drop)
}

/// A history record: the content as saved, its card list left out when `cards_from` names
/// the record that holds the same list.
#[derive(Insertable)]
#[diesel(table_name = deck_versions)]
struct HistoryRecord {
    deck_id: Uuid,
    version_number: i32,
    history_type: &'static str,
    restored_from: Option<i32>,
    content: Json<StoredContent>,
    cards_from: Option<i32>,
    summary: Json<StoredSummary>,
    edited_at: OffsetDateTime,
}

impl HistoryRecord {
    /// A new deck's first record, which holds its cards.
    fn created(deck: &NewDeck) -> Self {
        Self {
            deck_id: deck.id.0,
            version_number: 1,
            history_type: HistoryType::Create.as_str(),
            restored_from: None,
            content: Json(StoredContent::record(&deck.content, false)),
            cards_from: None,
            summary: Json((&deck.summary).into()),
            edited_at: deck.created_at,
        }
    }

    /// The record of `revision` as version `number` of deck `id`.
    fn revised(id: DeckId, number: i32, revision: &Revision, cards_from: Option<i32>) -> Self {
        Self {
            deck_id: id.0,
            version_number: number,
            history_type: revision.history_type.as_str(),
            restored_from: restored_from(revision.history_type),
            content: Json(StoredContent::record(
                &revision.content,
                cards_from.is_some(),
            )),
            cards_from,
            summary: Json((&revision.summary).into()),
            edited_at: revision.at,
        }
    }
}

/// The columns a new deck's content, summary and provenance map to.
#[derive(Insertable)]
#[diesel(table_name = decks)]
struct DeckColumns<'a> {
    name: &'a str,
    notes: &'a str,
    visibility: &'a str,
    format_id: Option<Uuid>,
    youtube_url: Option<&'a str>,
    thumbnail: Option<&'a str>,
    legal: bool,
    archetype: Option<&'a str>,
    cards: Json<Vec<StoredCard>>,
    featured: Option<Json<Vec<StoredChoice>>>,
    summary: Json<StoredSummary>,
    source_provider: &'a str,
    source_external_id: Option<&'a str>,
    source_external_version: Option<&'a str>,
    source_external_url: Option<&'a str>,
    source_imported_at: Option<OffsetDateTime>,
}

impl<'a> DeckColumns<'a> {
    fn new(content: &'a DeckContent, summary: &DeckSummary, provenance: &'a Provenance) -> Self {
        Self {
            name: &content.name,
            notes: &content.notes,
            visibility: content.visibility.as_str(),
            format_id: content.format_id,
            youtube_url: content.youtube_url.as_deref(),
            thumbnail: content.thumbnail.as_deref(),
            legal: content.legal,
            archetype: content.archetype.as_deref(),
            cards: Json(stored_cards(&content.cards)),
            featured: content
                .featured
                .as_deref()
                .map(|choices| Json(stored_choices(choices))),
            summary: Json(summary.into()),
            source_provider: &provenance.source_provider,
            source_external_id: provenance.source_external_id.as_deref(),
            source_external_version: provenance.source_external_version.as_deref(),
            source_external_url: provenance.source_external_url.as_deref(),
            source_imported_at: provenance.source_imported_at,
        }
    }
}

/// What a save writes: the version and time always, any other column only when it changed
/// (`None` leaves it alone; `Some(None)` writes NULL). Unchanged card lists are not rewritten,
/// so their stored value (and its TOAST) stays as it is.
#[derive(AsChangeset)]
#[diesel(table_name = decks)]
struct DeckChangeset<'a> {
    name: Option<&'a str>,
    notes: Option<&'a str>,
    visibility: Option<&'a str>,
    format_id: Option<Option<Uuid>>,
    youtube_url: Option<Option<&'a str>>,
    thumbnail: Option<Option<&'a str>>,
    legal: Option<bool>,
    archetype: Option<Option<&'a str>>,
    cards: Option<Json<Vec<StoredCard>>>,
    featured: Option<Option<Json<Vec<StoredChoice>>>>,
    summary: Option<Json<StoredSummary>>,
    source_provider: Option<&'a str>,
    source_external_id: Option<Option<&'a str>>,
    source_external_version: Option<Option<&'a str>>,
    source_external_url: Option<Option<&'a str>>,
    source_imported_at: Option<Option<OffsetDateTime>>,
    is_archived: Option<bool>,
    version: i32,
    updated_at: OffsetDateTime,
}

/// `new` when it differs from `old`.
fn changed<'a, T: PartialEq + ?Sized>(old: &T, new: &'a T) -> Option<&'a T> {
    (old != new).then_some(new)
}

impl<'a> DeckChangeset<'a> {
    fn new(current: &Deck, revision: &'a Revision) -> Self {
        let (old, new) = (&current.content, &revision.content);
        let (was, now) = (&current.provenance, &revision.provenance);
        Self {
            name: changed(&old.name, &new.name).map(String::as_str),
            notes: changed(&old.notes, &new.notes).map(String::as_str),
            visibility: changed(&old.visibility, &new.visibility).map(|level| level.as_str()),
            format_id: changed(&old.format_id, &new.format_id).copied(),
            youtube_url: changed(&old.youtube_url, &new.youtube_url).map(Option::as_deref),
            thumbnail: changed(&old.thumbnail, &new.thumbnail).map(Option::as_deref),
            legal: changed(&old.legal, &new.legal).copied(),
            archetype: changed(&old.archetype, &new.archetype).map(Option::as_deref),
            cards: changed(&old.cards, &new.cards).map(|cards| Json(stored_cards(cards))),
            featured: changed(&old.featured, &new.featured).map(|featured| {
                featured
                    .as_deref()
                    .map(|choices| Json(stored_choices(choices)))
            }),
            summary: changed(&current.summary, &revision.summary)
                .map(|summary| Json(summary.into())),
            source_provider: changed(&was.source_provider, &now.source_provider)
                .map(String::as_str),
            source_external_id: changed(&was.source_external_id, &now.source_external_id)
                .map(Option::as_deref),
            source_external_version: changed(
                &was.source_external_version,
                &now.source_external_version,
            )
            .map(Option::as_deref),
            source_external_url: changed(&was.source_external_url, &now.source_external_url)
                .map(Option::as_deref),
            source_imported_at: changed(&was.source_imported_at, &now.source_imported_at).copied(),
            is_archived: changed(&current.is_archived, &revision.is_archived).copied(),
            version: current.version + 1,
            updated_at: revision.at,
        }
    }
}

/// Inserts `deck` with its counters, its first history record, its event and (for a fork)
/// its source's fork count, and reads it back: one statement, so one round trip, and the
/// event counter's row lock is held only while PostgreSQL runs it and commits (it was held
/// over two more round trips of a transaction). The read-back joins the rows the statement
/// returns, since a statement does not see its own inserts. Parallel forks of one deck queue
/// on its counter row and all count.
async fn insert_deck(conn: &mut AsyncPgConnection, deck: &NewDeck) -> QueryResult<DeckRow> {
    let row = diesel::insert_into(decks::table).values((
        DeckColumns::new(&deck.content, &deck.summary, &deck.provenance),
        decks::id.eq(deck.id.0),
        decks::game.eq(&deck.game),
        decks::owner_id.eq(deck.owner.0),
        decks::version.eq(1),
        decks::created_at.eq(deck.created_at),
        decks::updated_at.eq(deck.created_at),
        decks::forked_from_id.eq(deck.forked_from.map(|source| source.deck_id.0)),
        decks::forked_from_version.eq(deck.forked_from.map(|source| source.version)),
    ));
    CreateStatement {
        row,
        id: deck.id.0,
        game: &deck.game,
        fork_source: deck.forked_from.map(|source| source.deck_id.0),
        record: diesel::insert_into(deck_versions::table).values(HistoryRecord::created(deck)),
        event: (&deck.event).into(),
    }
    .get_result(conn)
    .await
}

/// [`insert_deck`]'s statement: `row` and `record` are the deck's and its first history
/// record's INSERTs.
struct CreateStatement<'a, R, H> {
    row: R,
    id: Uuid,
    game: &'a str,
    fork_source: Option<Uuid>,
    record: H,
    event: EventColumns,
}

impl<R: QueryFragment<Pg>, H: QueryFragment<Pg>> QueryFragment<Pg> for CreateStatement<'_, R, H> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH inserted AS (");
        self.row.walk_ast(out.reborrow())?;
        out.push_sql(" RETURNING *), counters AS (INSERT INTO deck_stats (deck_id, game) VALUES (");
        out.push_bind_param::<SqlUuid, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(self.game)?;
        out.push_sql(") RETURNING *), ");
        if let Some(source) = &self.fork_source {
            out.push_sql("forked AS (UPDATE deck_stats SET forks = forks + 1 WHERE deck_id = ");
            out.push_bind_param::<SqlUuid, _>(source)?;
            out.push_sql("), ");
        }
        out.push_sql("recorded AS (");
        self.record.walk_ast(out.reborrow())?;
        out.push_sql("), ");
        numbered_insert_ctes(&self.event, None, out.reborrow())?;
        out.push_sql(concat!(
            " SELECT ",
            deck_columns!(),
            " FROM inserted d JOIN users u ON u.id = d.owner_id \
             JOIN counters s ON s.deck_id = d.id ",
            source_join!()
        ));
        Ok(())
    }
}

impl<R, H> QueryId for CreateStatement<'_, R, H> {
    type QueryId = ();
    // Cached by its SQL text (a fork's has one more CTE).
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<R, H> Query for CreateStatement<'_, R, H> {
    type SqlType = diesel::sql_types::Untyped;
}

/// Saves the revision `reviser` makes of deck `id`, optimistically first: most saves meet no
/// other save of their deck, so the deck is read without a lock or a transaction and the
/// writes are one statement ([`SaveStatement`]) that applies only while the deck is still at
/// the version read and not locked by anyone. That is two statements and two round trips.
///
/// When another save came between, or holds the deck, the save is decided again on the deck as
/// it is now, in a transaction that holds its row lock ([`save_locked`]), so nothing can come
/// between again and no save is lost.
/// How many times a deck save is tried when the server cancels it to break a deadlock.
const SAVE_TRIES: u32 = 3;

async fn save_revision(
    conn: Object<AsyncPgConnection>,
    id: Uuid,
    reviser: &Reviser,
) -> Result<Deck, ReviseFailure> {
    let read = read_to_save(&conn, DECK_TO_SAVE, id).await?;
    let plan = SavePlan::decide(read, reviser)?;
    if plan.write(&conn).await? {
        return Ok(plan.saved());
    }
    save_locked(&mut PipelinedTransaction::on(conn), id, reviser).await
}

/// Saves the revision `reviser` makes of deck `id` in a transaction of two round trips:
/// `BEGIN` is sent with the locking read, then the writes and `COMMIT` together (pipelined:
/// PostgreSQL runs them in the order sent, and `COMMIT` after a failed statement rolls back).
/// A deck that is missing, corrupt or refused is rolled back.
///
/// The order sent is the order written: `join!` first polls its futures in turn, and each
/// sends its statement on its first poll, behind diesel-async's statement cache, a first-come
/// lock that a statement still being prepared holds until it is sent.
async fn save_locked(
    transaction: &mut PipelinedTransaction,
    id: Uuid,
    reviser: &Reviser,
) -> Result<Deck, ReviseFailure> {
    let conn = transaction.connection();
    let (begun, locked) = futures_util::join!(
        transaction_control(conn, "BEGIN"),
        // The row lock serialises saves of one deck: the version read here is the one this
        // transaction bumps.
        read_to_save(conn, DECK_LOCK, id)
    );
    begun?;
    let plan = match locked
        .map_err(ReviseFailure::Database)
        .and_then(|read| SavePlan::decide(read, reviser))
    {
        Ok(plan) => plan,
        Err(failure) => {
            transaction_control(conn, "ROLLBACK").await?;
            transaction.end();
            return Err(failure);
        }
    };
    let (written, committed) =
        futures_util::join!(plan.write(conn), transaction_control(conn, "COMMIT"));
    if committed.is_ok() {
        transaction.end();
    }
    let written = written?;
    committed?;
    if !written {
        return Err(ReviseFailure::Corrupt(anyhow::anyhow!(
            "deck {id} was not saved under its own row lock"
        )));
    }
    Ok(plan.saved())
}

/// A save decided: the deck as read, the record holding its card list, and its revision.
struct SavePlan {
    current: Deck,
    cards_record: Option<i32>,
    revision: Revision,
}

impl SavePlan {
    /// What `reviser` makes of the deck `read` found (none: it is missing).
    fn decide(read: Option<DeckToSaveRow>, reviser: &Reviser) -> Result<Self, ReviseFailure> {
        let read = read.ok_or(ReviseFailure::NotFound)?;
        let current = read.deck.into_domain().map_err(ReviseFailure::Corrupt)?;
        let revision = reviser(&current).map_err(ReviseFailure::Refused)?;
        Ok(Self {
            current,
            cards_record: read.cards_record,
            revision,
        })
    }

    /// Writes the changed columns and the history record, unless the deck moved on from the
    /// version read or another save holds it; whether it wrote.
    async fn write(&self, mut conn: &AsyncPgConnection) -> QueryResult<bool> {
        let changes = DeckChangeset::new(&self.current, &self.revision);
        // A card list the save kept stays where it is: in the deck row and in its holder record.
        let cards_from = self.cards_record.filter(|_| changes.cards.is_none());
        let record =
            HistoryRecord::revised(self.current.id, changes.version, &self.revision, cards_from);
        let event = deck_events::saved(&self.current, &self.revision);
        let written = SaveStatement {
            read_version: self.current.version,
            changes: changes.as_changeset(),
            record,
            event: (&event).into(),
        }
        .execute(&mut conn)
        .await?;
        Ok(written == 1)
    }

    /// The deck as saved.
    fn saved(self) -> Deck {
        let Self {
            current, revision, ..
        } = self;
        Deck {
            content: revision.content,
            summary: revision.summary,
            provenance: revision.provenance,
            is_archived: revision.is_archived,
            version: current.version + 1,
            updated_at: revision.at,
            ..current
        }
    }
}

/// A save's writes in one statement: the deck's changed columns (`changes`), its history
/// `record` (whose `deck_id` names the deck) and its `event`, all only if the deck is still at `read_version`
/// and no other transaction holds it (`SKIP LOCKED`: a save never waits outside
/// [`save_locked`], whose transaction a dropped request rolls back). Its row count, 0 or 1,
/// says whether it wrote.
struct SaveStatement<C> {
    read_version: i32,
    changes: C,
    record: HistoryRecord,
    event: EventColumns,
}

impl<C: QueryFragment<Pg>> QueryFragment<Pg> for SaveStatement<C> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH target AS (SELECT id FROM decks WHERE id = ");
        out.push_bind_param::<SqlUuid, _>(&self.record.deck_id)?;
        out.push_sql(" AND version = ");
        out.push_bind_param::<Int4, _>(&self.read_version)?;
        out.push_sql(" FOR UPDATE SKIP LOCKED), saved AS (UPDATE decks SET ");
        self.changes.walk_ast(out.reborrow())?;
        out.push_sql(" FROM target WHERE decks.id = target.id RETURNING decks.id), ");
        numbered_insert_ctes(&self.event, Some("saved"), out.reborrow())?;
        out.push_sql(
            " INSERT INTO deck_versions (deck_id, version_number, history_type, restored_from, \
             content, cards_from, summary, edited_at) SELECT saved.id, ",
        );
        let record = &self.record;
        out.push_bind_param::<Int4, _>(&record.version_number)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, _>(record.history_type)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Int4>, _>(&record.restored_from)?;
        out.push_sql(", ");
        out.push_bind_param::<SqlJson, _>(&record.content)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Int4>, _>(&record.cards_from)?;
        out.push_sql(", ");
        out.push_bind_param::<SqlJson, _>(&record.summary)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamptz, _>(&record.edited_at)?;
        out.push_sql(" FROM saved");
        Ok(())
    }
}

impl<C> QueryId for SaveStatement<C> {
    type QueryId = ();
    // Cached by its SQL text, which depends on the columns changed.
    const HAS_STATIC_QUERY_ID: bool = false;
}

/// What can end a save (rolling it back).
enum ReviseFailure {
    Database(diesel::result::Error),
    NotFound,
    Refused(RevisionRefused),
    Corrupt(anyhow::Error),
}

impl From<diesel::result::Error> for ReviseFailure {
    fn from(error: diesel::result::Error) -> Self {
        Self::Database(error)
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = deck_guides, check_for_backend(Pg))]
struct GuideRow {
    deck_id: Uuid,
    id: Uuid,
    content_type: String,
    content: String,
    is_premium: bool,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl GuideRow {
    fn from_domain(guide: &DeckGuide) -> Self {
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

    fn into_domain(self) -> anyhow::Result<DeckGuide> {
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

#[derive(QueryableByName)]
struct ViewRow {
    #[diesel(sql_type = Bool)]
    visible: bool,
    #[diesel(sql_type = Nullable<Int8>)]
    pageviews: Option<i64>,
    #[diesel(sql_type = Bool)]
    incremented: bool,
}

/// Checks that the reader may see the deck, counts a view and updates the trending score, in
/// one statement (see the port's contract); the deck row is only probed by its primary key.
/// The visibility condition is the domain's read rule by id ([`readable_sql`], `$7` the reader),
/// the score's the domain's trending bump ([`trending_bump_sql`], `$5` the weight). The insert's
/// conflict clause is the dedupe: a visitor's row is only refreshed when its last counted view
/// is outside the window, and concurrent inserts of one key wait on each other. The record
/// names its deck without a foreign key, whose check (a query and a lock on the deck's row per
/// counted view) cost a fifth of the statement: only a deck just found is ever named.
static COUNT_VIEW: LazyLock<String> = LazyLock::new(|| {
    let readable = readable_sql("d", Reach::ById, Some("$7"));
    let bump = trending_bump_sql("trending", "$5");
    format!(
        "WITH target AS (
    SELECT d.id FROM decks d WHERE d.id = $1 AND d.game = $6 AND {readable}
), counted AS (
    INSERT INTO deck_views AS v (deck_id, visitor, counted_at) SELECT id, $2, $3 FROM target
    ON CONFLICT (deck_id, visitor) DO UPDATE SET counted_at = EXCLUDED.counted_at
        WHERE v.counted_at <= $4
    RETURNING 1
), bumped AS (
    UPDATE deck_stats SET pageviews = pageviews + 1, trending = {bump}
    WHERE deck_id = $1 AND EXISTS (SELECT 1 FROM counted)
    RETURNING pageviews
)
SELECT EXISTS (SELECT 1 FROM target) AS visible,
       coalesce((SELECT pageviews FROM bumped),
                (SELECT pageviews FROM deck_stats WHERE deck_id = $1)) AS pageviews,
       EXISTS (SELECT 1 FROM bumped) AS incremented"
    )
});

/// Deck likes move the counter in `deck_stats`, never the deck row.
const DECK_LIKES: crate::likes::LikeTables = crate::likes::LikeTables {
    items: "decks",
    likes: "deck_likes",
    item_column: "deck_id",
    counter: "deck_stats",
    counter_key: "deck_id",
};

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// The rows of a list page, in one statement that PostgreSQL plans once per connection:
/// [`first_page_sql`] when it has no parameters, else [`page_sql`], of which PostgreSQL keeps a
/// generic plan. A name filter is the exception: the best plan depends on how rare the pattern
/// is. A date-sorted page first walks the head of the list ([`walked_page`]); a page that walk
/// cannot fill has its ids picked by a statement planned on every run for its pattern, and their
/// rows read by one on a generic plan (planned as one statement, its joins took longer to plan,
/// 0.6 ms, than the whole page to run, 0.4 ms; docs/benchmarks.md).
async fn page_rows(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    conditions: &Conditions,
    game: &str,
    short_walks: &ShortWalks,
) -> QueryResult<Vec<PageRow>> {
    if let Some(rows) = walked_page(conn, query, short_walks).await? {
        return Ok(rows);
    }
    let mut page_conditions = conditions.clone();
    let window = page_window(&mut page_conditions, query.page);
    let where_clause = conditions.sql();
    if conditions.plan_each_run() {
        let ids: Vec<IdRow> = page_conditions
            .statement(page_ids_sql(query, game, &where_clause, &window))
            .load(conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut by_ids = Conditions::default();
        // `$1` of `rows_by_ids_sql`.
        by_ids.param(Bind::Uuids(ids.into_iter().map(|row| row.id).collect()));
        let game = by_ids.game(&query.game);
        return by_ids
            .statement(rows_by_ids_sql(query, &listing_select(&game)))
            .load(conn)
            .await;
    }
    let select = listing_select(game);
    let sql = if page_conditions.is_constant() {
        first_page_sql(query, &select, game, &where_clause, &window)
    } else {
        page_sql(query, &select, game, &where_clause, &window)
    };
    page_conditions.statement(sql).load(conn).await
}

/// Walks of name-filtered pages that came up short lately ([`walked_page`]), by statement.
type ShortWalks = moka::sync::Cache<Statement, ()>;

/// How long a short walk is remembered: meanwhile the same page goes straight to the statements
/// planned for its pattern, so a rare pattern pays for its walk once a minute, not every time.
const SHORT_WALK_TTL: StdDuration = StdDuration::from_secs(60);

/// A name-filtered page of a date sort when the first decks of the list hold all of it
/// ([`walked_page_sql`], [`list_query::NAME_WALK`] of them): one statement on a generic plan.
/// `None` when they do not (remembered in `short_walks`), for a counter sort, or without a
/// name filter.
async fn walked_page(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    short_walks: &ShortWalks,
) -> QueryResult<Option<Vec<PageRow>>> {
    let Some(needle) = query.filters.name_contains.as_deref() else {
        return Ok(None);
    };
    let (mut conditions, game) = deck_conditions_but_name(query);
    let where_clause = conditions.sql();
    let pattern = conditions.param(Bind::Text(contains_pattern(needle)));
    let window = page_window(&mut conditions, query.page);
    let select = listing_select(&game);
    let Some(sql) = walked_page_sql(query, &select, &where_clause, &pattern, &window) else {
        return Ok(None);
    };
    let walk = conditions.statement(sql);
    if short_walks.contains_key(&walk) {
        return Ok(None);
    }
    let rows: Vec<PageRow> = (&walk).load(conn).await?;
    if rows.len() == query.page.limit as usize {
        return Ok(Some(rows));
    }
    short_walks.insert(walk, ());
    Ok(None)
}

pub(crate) struct PgDeckRepository {
    pool: Pool,
    card_statistics: CardStatistics,
    counts: RememberedCounts,
    short_walks: ShortWalks,
    usernames: Usernames,
}

impl PgDeckRepository {
    pub(crate) fn new(pool: Pool) -> Self {
        Self {
            pool,
            card_statistics: CardStatistics::default(),
            counts: RememberedCounts::new(),
            short_walks: moka::sync::Cache::builder()
                .max_capacity(SHORT_WALK_CAPACITY)
                .time_to_live(SHORT_WALK_TTL)
                .build(),
            usernames: Usernames::new(),
        }
    }
}

#[async_trait]
impl DeckRepository for PgDeckRepository {
    #[tracing::instrument(level = "debug", skip_all, fields(deck = %deck.id, game = %deck.game))]
    async fn insert(&self, deck: &NewDeck) -> Result<Deck, InsertDeckError> {
        let mut conn = checkout(&self.pool).await?;
        let row = insert_deck(&mut conn, deck)
            .await
            .map_err(error::insert_deck)?;
        Ok(row.into_domain()?)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find(&self, id: DeckId) -> anyhow::Result<Option<Deck>> {
        let mut conn = checkout(&self.pool).await?;
        let row = load_deck(&mut conn, id.0)
            .await
            .map_err(error::query)
            .context("finding a deck")?;
        row.map(DeckRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find_overview(&self, id: DeckId) -> anyhow::Result<Option<DeckOverview>> {
        let mut conn = checkout(&self.pool).await?;
        let row: Option<OverviewRow> = Statement::new(
            format!("{OVERVIEW_SELECT} WHERE d.id = $1"),
            vec![Bind::Uuid(id.0)],
        )
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(error::query)
        .context("finding a deck's overview")?;
        row.map(OverviewRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip(self, reviser))]
    async fn revise(&self, id: DeckId, reviser: Reviser) -> Result<Deck, ReviseDeckError> {
        // A save the server cancelled to break a deadlock was rolled back whole: it is decided
        // and tried again (the reviser names the same event on every try), a few times.
        let mut tries = 1;
        let saved = loop {
            let conn = checkout(&self.pool).await?;
            match save_revision(conn, id.0, &reviser).await {
                Err(ReviseFailure::Database(error))
                    if error::deadlocked(&error) && tries < SAVE_TRIES =>
                {
                    tries += 1;
                }
                saved => break saved,
            }
        };
        match saved {
            Ok(deck) => Ok(deck),
            Err(ReviseFailure::NotFound) => Err(ReviseDeckError::NotFound),
            Err(ReviseFailure::Refused(refused)) => Err(ReviseDeckError::Refused(refused)),
            Err(ReviseFailure::Corrupt(error)) => Err(ReviseDeckError::Unexpected(error)),
            Err(ReviseFailure::Database(error)) => Err(error::revise_deck(error)),
        }
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn versions(&self, id: DeckId) -> anyhow::Result<Vec<DeckVersion>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<VersionRow> = Statement::new(
            format!("{VERSION_SELECT} ORDER BY v.version_number"),
            vec![Bind::Uuid(id.0)],
        )
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("loading a deck's history")?;
        rows.into_iter().map(VersionRow::into_domain).collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn version(&self, id: DeckId, number: i32) -> anyhow::Result<Option<DeckVersion>> {
        let mut conn = checkout(&self.pool).await?;
        let row: Option<VersionRow> = Statement::new(
            format!("{VERSION_SELECT} AND v.version_number = $2"),
            vec![Bind::Uuid(id.0), Bind::Int(number.into())],
        )
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(error::query)
        .context("loading a deck version")?;
        row.map(VersionRow::into_domain).transpose()
    }

    #[tracing::instrument(
        level = "debug",
        skip_all,
        fields(
            game = %query.game,
            sort = ?query.sort,
            order = ?query.order,
            page = query.page.page,
            limit = query.page.limit,
        )
    )]
    async fn list(&self, query: &DeckQuery) -> anyhow::Result<Page<DeckListing>> {
        let (conditions, game) = deck_conditions(query);
        let mut conn = checkout(&self.pool).await?;
        let rows = page_rows(&mut conn, query, &conditions, &game, &self.short_walks)
            .await
            .map_err(error::query)
            .context("listing decks")?;
        let names = self
            .usernames
            .of(&mut conn, rows.iter().map(|row| row.listing.owner_id))
            .await?;
        let seen = rows.iter().map(|row| row.list_changes).next();
        let items: Vec<DeckListing> = rows
            .into_iter()
            .map(|PageRow { listing: row, .. }| {
                let username = names
                    .get(&row.owner_id)
                    .cloned()
                    .with_context(|| format!("deck {} has an owner without a user", row.id))?;
                row.into_domain(username)
            })
            .collect::<anyhow::Result<_>>()?;
        let counted = self
            .counts
            .total(
                &mut conn,
                query.page,
                items.len(),
                &conditions,
                count_sql(&conditions.sql(), &game),
                seen,
            )
            .await?;
        Ok(Page::with_capped_total(items, counted))
    }

    #[tracing::instrument(level = "debug", skip(self), fields(game = %query.game))]
    async fn card_usage(&self, query: &CardStatsQuery) -> anyhow::Result<CardUsage> {
        self.card_statistics.usage(&self.pool, query).await
    }

    #[tracing::instrument(level = "debug", skip(self, reader, visitor), fields(game = %reader.game))]
    async fn count_view(
        &self,
        id: DeckId,
        reader: &DeckReader,
        visitor: &[u8; 32],
        now: OffsetDateTime,
        window: Duration,
        trending_weight: f64,
    ) -> anyhow::Result<Option<ViewCount>> {
        let mut conn = checkout(&self.pool).await?;
        let binds = vec![
            Bind::Uuid(id.0),
            Bind::Bytes(visitor.to_vec()),
            Bind::Time(now),
            Bind::Time(now - window),
            Bind::Float(Float(trending_weight)),
            Bind::Text(reader.game.clone()),
            Bind::OptionalUuid(reader.viewer.map(|viewer| viewer.0)),
        ];
        let row: ViewRow = Statement::new(COUNT_VIEW.as_str(), binds)
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("counting a deck view")?;
        if !row.visible {
            return Ok(None);
        }
        let pageviews = row
            .pageviews
            .with_context(|| format!("deck {id} has no stats row"))?;
        Ok(Some(ViewCount {
            pageviews,
            incremented: row.incremented,
        }))
    }

    #[tracing::instrument(level = "debug", skip(self, reader), fields(game = %reader.game))]
    async fn set_like(
        &self,
        id: DeckId,
        reader: &DeckReader,
        user: UserId,
        liked: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        crate::likes::set_like(
            &self.pool,
            &DECK_LIKES,
            (id.0, &reader.game),
            user.0,
            liked,
            at,
        )
        .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn guide(&self, deck: DeckId) -> anyhow::Result<Option<DeckGuide>> {
        let mut conn = checkout(&self.pool).await?;
        let row: Option<GuideRow> = deck_guides::table
            .find(deck.0)
            .select(GuideRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("loading a deck guide")?;
        row.map(GuideRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %guide.deck_id))]
    async fn put_guide(
        &self,
        guide: &DeckGuide,
        event: &EventRecord,
    ) -> anyhow::Result<(DeckGuide, bool)> {
        let mut conn = checkout(&self.pool).await?;
        let row = GuideRow::from_domain(guide);
        let stored: GuideRow = conn
            .transaction(async |conn| {
                // The upsert keeps a replaced guide's id and created_at; the id it returns
                // tells a new guide from a replaced one.
                let stored = diesel::insert_into(deck_guides::table)
                    .values(&row)
                    .on_conflict(deck_guides::deck_id)
                    .do_update()
                    .set((
                        deck_guides::content_type.eq(&row.content_type),
                        deck_guides::content.eq(&row.content),
                        deck_guides::is_premium.eq(row.is_premium),
                        deck_guides::updated_at.eq(row.updated_at),
                    ))
                    .returning(GuideRow::as_returning())
                    .get_result(conn)
                    .await?;
                diesel::update(decks::table.find(row.deck_id))
                    .set(decks::has_guide.eq(true))
                    .execute(conn)
                    .await?;
                events::insert(conn, event).await?;
                Ok::<_, diesel::result::Error>(stored)
            })
            .await
            .map_err(error::query)
            .context("storing a deck guide")?;
        let created = stored.id == guide.id;
        Ok((stored.into_domain()?, created))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn delete_guide(&self, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let mut conn = checkout(&self.pool).await?;
        let deleted = conn
            .transaction(async |conn| {
                let deleted = diesel::delete(deck_guides::table.find(deck.0))
                    .execute(conn)
                    .await?;
                if deleted > 0 {
                    diesel::update(decks::table.find(deck.0))
                        .set(decks::has_guide.eq(false))
                        .execute(conn)
                        .await?;
                    events::insert(conn, event).await?;
                }
                Ok::<_, diesel::result::Error>(deleted > 0)
            })
            .await
            .map_err(error::query)
            .context("deleting a deck guide")?;
        Ok(deleted)
    }
}
