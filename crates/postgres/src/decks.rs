//! Decks over PostgreSQL. Reads go through one SELECT (`DECK_SELECT`) so every read maps rows
//! the same way; the list query is assembled from the filters with bind parameters only.

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::decks::ports::{
    DeckRepository, InsertDeckError, NewDeck, ReviseDeckError, Reviser, Revision, RevisionRefused,
    ViewCount,
};
use deckhand_domain::decks::{
    Author, ContentType, Deck, DeckContent, DeckGuide, DeckId, DeckQuery, DeckSort, DeckSummary,
    DeckVersion, HistoryType, Page, Provenance, RESULT_WINDOW, SortOrder, Visibility,
};
use deckhand_domain::identity::{UserId, Username};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::BoxedSqlQuery;
use diesel::sql_types::{
    Bool, Bytea, Float8, Int4, Int8, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::schema::{deck_guides, deck_stats, deck_versions, decks};

const DECK_SELECT: &str = "SELECT d.id, d.game, d.owner_id, u.username, d.name, d.notes, \
     d.visibility, d.format_id, d.youtube_url, d.thumbnail, d.legal, d.archetype, d.cards, \
     d.featured, d.summary, d.source_provider, d.source_external_id, d.source_external_version, \
     d.source_external_url, d.source_imported_at, d.is_archived, d.has_guide, \
     d.has_sideboard_guide, d.version, d.created_at, d.updated_at, s.pageviews, s.likes \
     FROM decks d JOIN users u ON u.id = d.owner_id JOIN deck_stats s ON s.deck_id = d.id";

#[derive(Debug, QueryableByName)]
struct DeckRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    game: String,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = Text)]
    username: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    notes: String,
    #[diesel(sql_type = Text)]
    visibility: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    format_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    youtube_url: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    thumbnail: Option<String>,
    #[diesel(sql_type = Bool)]
    legal: bool,
    #[diesel(sql_type = Nullable<Text>)]
    archetype: Option<String>,
    #[diesel(sql_type = Jsonb)]
    cards: Value,
    #[diesel(sql_type = Nullable<Jsonb>)]
    featured: Option<Value>,
    #[diesel(sql_type = Jsonb)]
    summary: Value,
    #[diesel(sql_type = Text)]
    source_provider: String,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_version: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    source_external_url: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    source_imported_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Bool)]
    is_archived: bool,
    #[diesel(sql_type = Bool)]
    has_guide: bool,
    #[diesel(sql_type = Bool)]
    has_sideboard_guide: bool,
    #[diesel(sql_type = Int4)]
    version: i32,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
    #[diesel(sql_type = Int8)]
    pageviews: i64,
    #[diesel(sql_type = Int8)]
    likes: i64,
}

impl DeckRow {
    fn into_domain(self) -> anyhow::Result<Deck> {
        let context = || format!("deck {} has invalid stored data", self.id);
        let visibility = Visibility::from_stored(&self.visibility).with_context(context)?;
        let username = Username::parse(&self.username).with_context(context)?;
        let cards = serde_json::from_value(self.cards).with_context(context)?;
        let featured = self
            .featured
            .map(serde_json::from_value)
            .transpose()
            .with_context(context)?;
        let summary = serde_json::from_value(self.summary).with_context(context)?;
        Ok(Deck {
            id: DeckId(self.id),
            game: self.game,
            author: Author {
                id: UserId(self.owner_id),
                username,
            },
            content: DeckContent {
                name: self.name,
                notes: self.notes,
                visibility,
                format_id: self.format_id,
                youtube_url: self.youtube_url,
                thumbnail: self.thumbnail,
                legal: self.legal,
                archetype: self.archetype,
                cards,
                featured,
            },
            summary,
            provenance: Provenance {
                source_provider: self.source_provider,
                source_external_id: self.source_external_id,
                source_external_version: self.source_external_version,
                source_external_url: self.source_external_url,
                source_imported_at: self.source_imported_at,
            },
            is_archived: self.is_archived,
            version: self.version,
            pageviews: self.pageviews,
            likes: self.likes,
            has_guide: self.has_guide,
            has_sideboard_guide: self.has_sideboard_guide,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = deck_versions, check_for_backend(Pg))]
struct VersionRow {
    version_number: i32,
    history_type: String,
    restored_from: Option<i32>,
    content: Value,
    summary: Value,
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
            content: serde_json::from_value(self.content).context("a stored version's content")?,
            summary: serde_json::from_value(self.summary).context("a stored version's summary")?,
            edited_at: self.edited_at,
        })
    }
}

fn json<T: serde::Serialize>(value: &T) -> QueryResult<Value> {
    serde_json::to_value(value)
        .map_err(|error| diesel::result::Error::SerializationError(Box::new(error)))
}

fn restored_from(history_type: HistoryType) -> Option<i32> {
    match history_type {
        HistoryType::Rollback { restored_from } => Some(restored_from),
        HistoryType::Create | HistoryType::Update => None,
    }
}

async fn load_deck(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<Option<DeckRow>> {
    diesel::sql_query(format!("{DECK_SELECT} WHERE d.id = $1"))
        .bind::<SqlUuid, _>(id)
        .get_result(conn)
        .await
        .optional()
}

async fn insert_version(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    number: i32,
    history_type: HistoryType,
    content: &DeckContent,
    summary: &DeckSummary,
    at: OffsetDateTime,
) -> QueryResult<()> {
    diesel::insert_into(deck_versions::table)
        .values((
            deck_versions::deck_id.eq(id),
            deck_versions::version_number.eq(number),
            deck_versions::history_type.eq(history_type.as_str()),
            deck_versions::restored_from.eq(restored_from(history_type)),
            deck_versions::content.eq(json(content)?),
            deck_versions::summary.eq(json(summary)?),
            deck_versions::edited_at.eq(at),
        ))
        .execute(conn)
        .await
        .map(drop)
}

/// The columns a deck's content, summary and provenance map to: written whole by both a create
/// and a save, so the mapping lives here once. `None` writes NULL, which is how a PATCH clears.
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = decks, treat_none_as_null = true)]
struct DeckColumns<'a> {
    name: &'a str,
    notes: &'a str,
    visibility: &'a str,
    format_id: Option<Uuid>,
    youtube_url: Option<&'a str>,
    thumbnail: Option<&'a str>,
    legal: bool,
    archetype: Option<&'a str>,
    cards: Value,
    featured: Option<Value>,
    summary: Value,
    source_provider: &'a str,
    source_external_id: Option<&'a str>,
    source_external_version: Option<&'a str>,
    source_external_url: Option<&'a str>,
    source_imported_at: Option<OffsetDateTime>,
}

impl<'a> DeckColumns<'a> {
    fn new(
        content: &'a DeckContent,
        summary: &DeckSummary,
        provenance: &'a Provenance,
    ) -> QueryResult<Self> {
        Ok(Self {
            name: &content.name,
            notes: &content.notes,
            visibility: content.visibility.as_str(),
            format_id: content.format_id,
            youtube_url: content.youtube_url.as_deref(),
            thumbnail: content.thumbnail.as_deref(),
            legal: content.legal,
            archetype: content.archetype.as_deref(),
            cards: json(&content.cards)?,
            featured: content.featured.as_ref().map(json).transpose()?,
            summary: json(summary)?,
            source_provider: &provenance.source_provider,
            source_external_id: provenance.source_external_id.as_deref(),
            source_external_version: provenance.source_external_version.as_deref(),
            source_external_url: provenance.source_external_url.as_deref(),
            source_imported_at: provenance.source_imported_at,
        })
    }
}

async fn insert_deck(conn: &mut AsyncPgConnection, deck: &NewDeck) -> QueryResult<()> {
    let content = &deck.content;
    diesel::insert_into(decks::table)
        .values((
            DeckColumns::new(content, &deck.summary, &deck.provenance)?,
            decks::id.eq(deck.id.0),
            decks::game.eq(&deck.game),
            decks::owner_id.eq(deck.owner.0),
            decks::version.eq(1),
            decks::created_at.eq(deck.created_at),
            decks::updated_at.eq(deck.created_at),
        ))
        .execute(conn)
        .await?;
    diesel::insert_into(deck_stats::table)
        .values((
            deck_stats::deck_id.eq(deck.id.0),
            deck_stats::game.eq(&deck.game),
        ))
        .execute(conn)
        .await?;
    insert_version(
        conn,
        deck.id.0,
        1,
        HistoryType::Create,
        content,
        &deck.summary,
        deck.created_at,
    )
    .await
}

/// Writes `revision` as the version after `current`.
async fn write_revision(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    current: i32,
    revision: &Revision,
) -> QueryResult<()> {
    let content = &revision.content;
    let next = current + 1;
    diesel::update(decks::table.find(id))
        .set((
            DeckColumns::new(content, &revision.summary, &revision.provenance)?,
            decks::is_archived.eq(revision.is_archived),
            decks::version.eq(next),
            decks::updated_at.eq(revision.at),
        ))
        .execute(conn)
        .await?;
    insert_version(
        conn,
        id,
        next,
        revision.history_type,
        content,
        &revision.summary,
        revision.at,
    )
    .await
}

/// What can end a revise transaction (rolling it back).
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

/// One bind parameter of a list query (decks and sideboard guides).
pub(crate) enum Bind {
    Text(String),
    Uuid(Uuid),
    Time(OffsetDateTime),
    Bool(bool),
    Int(i64),
}

/// The WHERE clause of a list query and its parameters.
#[derive(Default)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    binds: Vec<Bind>,
}

impl Conditions {
    /// Registers `bind` and returns its placeholder.
    pub(crate) fn param(&mut self, bind: Bind) -> String {
        self.binds.push(bind);
        format!("${}", self.binds.len())
    }

    pub(crate) fn add(&mut self, clause: String) {
        self.clauses.push(clause);
    }

    pub(crate) fn sql(&self) -> String {
        self.clauses.join(" AND ")
    }

    /// `column` between the inclusive bounds that are given.
    pub(crate) fn within(
        &mut self,
        column: &str,
        after: Option<OffsetDateTime>,
        before: Option<OffsetDateTime>,
    ) {
        for (comparison, bound) in [(">=", after), ("<=", before)] {
            if let Some(bound) = bound {
                let p = self.param(Bind::Time(bound));
                self.add(format!("{column} {comparison} {p}"));
            }
        }
    }

    /// `column` holds `needle` anywhere, case-insensitively, its LIKE wildcards taken literally.
    pub(crate) fn contains(&mut self, column: &str, needle: &Option<String>) {
        if let Some(needle) = needle {
            let p = self.param(Bind::Text(contains_pattern(needle)));
            self.add(format!("{column} ILIKE {p}"));
        }
    }

    /// `column` is set (`Some(true)`) or unset (`Some(false)`).
    pub(crate) fn present(&mut self, column: &str, wanted: Option<bool>) {
        if let Some(wanted) = wanted {
            let not = if wanted { "NOT " } else { "" };
            self.add(format!("{column} IS {not}NULL"));
        }
    }

    pub(crate) fn apply<'a>(
        &self,
        mut query: BoxedSqlQuery<'a, Pg, diesel::query_builder::SqlQuery>,
    ) -> BoxedSqlQuery<'a, Pg, diesel::query_builder::SqlQuery> {
        for bind in &self.binds {
            query = match bind {
                Bind::Text(value) => query.bind::<Text, _>(value.clone()),
                Bind::Uuid(value) => query.bind::<SqlUuid, _>(*value),
                Bind::Time(value) => query.bind::<Timestamptz, _>(*value),
                Bind::Bool(value) => query.bind::<Bool, _>(*value),
                Bind::Int(value) => query.bind::<Int8, _>(*value),
            };
        }
        query
    }
}

/// `value` as a LIKE pattern matching it anywhere, its wildcards taken literally.
pub(crate) fn contains_pattern(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

fn list_conditions(query: &DeckQuery) -> Conditions {
    let mut c = Conditions::default();
    // Only `d.` columns: the count and the date sorts read `decks` alone. The game is always
    // `$1`, which the counter sorts repeat on `s.game` (see `page_sql`).
    let game = c.param(Bind::Text(query.game.clone()));
    c.add(format!("d.game = {game} AND NOT d.is_archived"));
    match query.viewer {
        Some(viewer) => {
            let viewer = c.param(Bind::Uuid(viewer.0));
            c.add(format!(
                "(d.visibility = 'public' OR d.owner_id = {viewer})"
            ));
        }
        None => c.add("d.visibility = 'public'".to_owned()),
    }
    let f = &query.filters;
    if let Some(author) = f.author {
        let p = c.param(Bind::Uuid(author.0));
        c.add(format!("d.owner_id = {p}"));
    }
    let ranges = [
        ("d.created_at >=", f.created_after),
        ("d.created_at <=", f.created_before),
        ("d.updated_at >=", f.edited_after),
        ("d.updated_at <=", f.edited_before),
    ];
    for (comparison, bound) in ranges {
        if let Some(bound) = bound {
            let p = c.param(Bind::Time(bound));
            c.add(format!("{comparison} {p}"));
        }
    }
    if let Some(format_id) = f.format_id {
        let p = c.param(Bind::Uuid(format_id));
        c.add(format!("d.format_id = {p}"));
    }
    let flags = [
        ("d.has_guide", f.has_guide),
        ("d.has_sideboard_guide", f.has_sideboard_guide),
        ("d.legal", f.is_legal),
    ];
    for (column, wanted) in flags {
        if let Some(wanted) = wanted {
            let p = c.param(Bind::Bool(wanted));
            c.add(format!("{column} = {p}"));
        }
    }
    if let Some(has_video) = f.has_video {
        c.add(format!(
            "d.youtube_url IS {}NULL",
            if has_video { "NOT " } else { "" }
        ));
    }
    if let Some(name) = &f.name_contains {
        let p = c.param(Bind::Text(contains_pattern(name)));
        c.add(format!("d.name ILIKE {p}"));
    }
    c
}

/// The SQL keyword of a list's order.
pub(crate) fn direction(order: SortOrder) -> &'static str {
    match order {
        SortOrder::Asc => "ASC",
        SortOrder::Desc => "DESC",
    }
}

fn order_by(sort: DeckSort, order: SortOrder) -> String {
    let direction = direction(order);
    // Ties are broken by id in the same direction, so pages never overlap or skip.
    match sort {
        DeckSort::CreatedAt => format!("d.created_at {direction}, d.id {direction}"),
        DeckSort::EditedAt => format!("d.updated_at {direction}, d.id {direction}"),
        DeckSort::Views => format!("s.pageviews {direction}, s.deck_id {direction}"),
        DeckSort::Likes => format!("s.likes {direction}, s.deck_id {direction}"),
        DeckSort::Trending => format!("s.trending {direction}, s.deck_id {direction}"),
    }
}

/// The page query. The inner query picks the page's ids from the narrow index entries, so
/// the rows an OFFSET skips are never joined to users and deck_stats nor sorted whole (a deep
/// page went from ~100 ms to ~3 ms on 200,000 decks, docs/benchmarks.md); the outer one loads
/// those ids' rows and sorts them again, the order being total (ties broken by id).
fn page_sql(query: &DeckQuery, where_clause: &str, limit: &str, offset: &str) -> String {
    let order = order_by(query.sort, query.order);
    let from = match query.sort {
        DeckSort::CreatedAt | DeckSort::EditedAt => "decks d".to_owned(),
        // deck_stats drives the counter sorts through its (game, counter) indexes; a deck's
        // stats row always copies its game, so this repeats `d.game = $1`.
        DeckSort::Views | DeckSort::Likes | DeckSort::Trending => {
            "deck_stats s JOIN decks d ON d.id = s.deck_id AND s.game = $1".to_owned()
        }
    };
    format!(
        "WITH page AS (SELECT d.id FROM {from} WHERE {where_clause} \
         ORDER BY {order} LIMIT {limit} OFFSET {offset}) \
         {DECK_SELECT} JOIN page ON page.id = d.id ORDER BY {order}"
    )
}

#[derive(QueryableByName)]
pub(crate) struct CountRow {
    #[diesel(sql_type = Int8)]
    pub(crate) matches: i64,
}

#[derive(QueryableByName)]
struct ViewRow {
    #[diesel(sql_type = Int8)]
    pageviews: i64,
    #[diesel(sql_type = Bool)]
    incremented: bool,
}

/// Counts a view and updates the trending score in one statement (see the port's contract).
/// The insert's conflict clause is the dedupe: a visitor's row is only refreshed when its last
/// counted view is outside the window, and concurrent inserts of one key wait on each other.
const COUNT_VIEW: &str = "
WITH counted AS (
    INSERT INTO deck_views AS v (deck_id, visitor, counted_at) VALUES ($1, $2, $3)
    ON CONFLICT (deck_id, visitor) DO UPDATE SET counted_at = EXCLUDED.counted_at
        WHERE v.counted_at <= $4
    RETURNING 1
), bumped AS (
    UPDATE deck_stats SET pageviews = pageviews + 1,
        trending = CASE WHEN trending = '-Infinity' THEN $5
            ELSE greatest(trending, $5) + ln(1 + exp(-least(abs(trending - $5), 700))) END
    WHERE deck_id = $1 AND EXISTS (SELECT 1 FROM counted)
    RETURNING pageviews
)
SELECT coalesce((SELECT pageviews FROM bumped),
                (SELECT pageviews FROM deck_stats WHERE deck_id = $1)) AS pageviews,
       EXISTS (SELECT 1 FROM bumped) AS incremented";

pub(crate) struct PgDeckRepository {
    pub(crate) pool: Pool,
}

#[async_trait]
impl DeckRepository for PgDeckRepository {
    async fn insert(&self, deck: &NewDeck) -> Result<Deck, InsertDeckError> {
        let mut conn = checkout(&self.pool).await?;
        let row = conn
            .transaction(async |conn| {
                insert_deck(conn, deck).await?;
                load_deck(conn, deck.id.0).await
            })
            .await
            .map_err(error::insert_deck)?;
        let row = row.context("a deck vanished inside its own insert")?;
        Ok(row.into_domain()?)
    }

    async fn find(&self, id: DeckId) -> anyhow::Result<Option<Deck>> {
        let mut conn = checkout(&self.pool).await?;
        let row = load_deck(&mut conn, id.0)
            .await
            .map_err(error::query)
            .context("finding a deck")?;
        row.map(DeckRow::into_domain).transpose()
    }

    async fn revise(&self, id: DeckId, reviser: Reviser) -> Result<Deck, ReviseDeckError> {
        let mut conn = checkout(&self.pool).await?;
        let outcome = conn
            .transaction::<_, ReviseFailure, _>(async move |conn| {
                // The row lock serialises saves of one deck: the version read here is the one
                // this transaction bumps.
                let locked: Option<i32> = decks::table
                    .find(id.0)
                    .select(decks::version)
                    .for_update()
                    .get_result(conn)
                    .await
                    .optional()?;
                if locked.is_none() {
                    return Err(ReviseFailure::NotFound);
                }
                let current = load_deck(conn, id.0)
                    .await?
                    .ok_or(ReviseFailure::NotFound)?
                    .into_domain()
                    .map_err(ReviseFailure::Corrupt)?;
                let revision = reviser(&current).map_err(ReviseFailure::Refused)?;
                write_revision(conn, id.0, current.version, &revision).await?;
                load_deck(conn, id.0).await?.ok_or(ReviseFailure::NotFound)
            })
            .await;
        match outcome {
            Ok(row) => Ok(row.into_domain()?),
            Err(ReviseFailure::NotFound) => Err(ReviseDeckError::NotFound),
            Err(ReviseFailure::Refused(refused)) => Err(ReviseDeckError::Refused(refused)),
            Err(ReviseFailure::Corrupt(error)) => Err(ReviseDeckError::Unexpected(error)),
            Err(ReviseFailure::Database(error)) => Err(error::revise_deck(error)),
        }
    }

    async fn versions(&self, id: DeckId) -> anyhow::Result<Vec<DeckVersion>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<VersionRow> = deck_versions::table
            .filter(deck_versions::deck_id.eq(id.0))
            .order(deck_versions::version_number.asc())
            .select(VersionRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("loading a deck's history")?;
        rows.into_iter().map(VersionRow::into_domain).collect()
    }

    async fn version(&self, id: DeckId, number: i32) -> anyhow::Result<Option<DeckVersion>> {
        let mut conn = checkout(&self.pool).await?;
        let row: Option<VersionRow> = deck_versions::table
            .find((id.0, number))
            .select(VersionRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("loading a deck version")?;
        row.map(VersionRow::into_domain).transpose()
    }

    async fn list(&self, query: &DeckQuery) -> anyhow::Result<Page<Deck>> {
        let mut conn = checkout(&self.pool).await?;
        let mut conditions = list_conditions(query);
        let where_clause = conditions.sql();
        // No join: every deck has exactly one stats row, so counting decks is enough, and the
        // date indexes (which include visibility and owner) answer it by index-only scan.
        let count_sql = format!(
            "SELECT count(*) AS matches FROM (SELECT 1 FROM decks d \
             WHERE {where_clause} LIMIT {}) AS matching",
            RESULT_WINDOW + 1
        );
        let counted: CountRow = conditions
            .apply(diesel::sql_query(count_sql).into_boxed())
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("counting decks")?;

        let limit = conditions.param(Bind::Int(i64::from(query.page.limit)));
        let offset = conditions.param(Bind::Int(i64::from(query.page.offset())));
        let page_sql = page_sql(query, &where_clause, &limit, &offset);
        let rows: Vec<DeckRow> = conditions
            .apply(diesel::sql_query(page_sql).into_boxed())
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("listing decks")?;
        let items = rows
            .into_iter()
            .map(DeckRow::into_domain)
            .collect::<anyhow::Result<_>>()?;
        Ok(Page::with_capped_total(
            items,
            u64::try_from(counted.matches).unwrap_or(0),
        ))
    }

    async fn count_view(
        &self,
        id: DeckId,
        visitor: &[u8; 32],
        now: OffsetDateTime,
        window: Duration,
        trending_weight: f64,
    ) -> anyhow::Result<ViewCount> {
        let mut conn = checkout(&self.pool).await?;
        let row: ViewRow = diesel::sql_query(COUNT_VIEW)
            .bind::<SqlUuid, _>(id.0)
            .bind::<Bytea, _>(visitor.as_slice())
            .bind::<Timestamptz, _>(now)
            .bind::<Timestamptz, _>(now - window)
            .bind::<Float8, _>(trending_weight)
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("counting a deck view")?;
        Ok(ViewCount {
            pageviews: row.pageviews,
            incremented: row.incremented,
        })
    }

    async fn prune_views(&self, before: OffsetDateTime) -> anyhow::Result<u64> {
        use crate::schema::deck_views;
        let mut conn = checkout(&self.pool).await?;
        let deleted = diesel::delete(deck_views::table.filter(deck_views::counted_at.lt(before)))
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("pruning deck views")?;
        Ok(u64::try_from(deleted).unwrap_or(0))
    }

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

    async fn put_guide(&self, guide: &DeckGuide) -> anyhow::Result<(DeckGuide, bool)> {
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
                Ok::<_, diesel::result::Error>(stored)
            })
            .await
            .map_err(error::query)
            .context("storing a deck guide")?;
        let created = stored.id == guide.id;
        Ok((stored.into_domain()?, created))
    }

    async fn delete_guide(&self, deck: DeckId) -> anyhow::Result<bool> {
        let mut conn = checkout(&self.pool).await?;
        conn.transaction(async |conn| {
            let deleted = diesel::delete(deck_guides::table.find(deck.0))
                .execute(conn)
                .await?;
            if deleted > 0 {
                diesel::update(decks::table.find(deck.0))
                    .set(decks::has_guide.eq(false))
                    .execute(conn)
                    .await?;
            }
            Ok::<_, diesel::result::Error>(deleted > 0)
        })
        .await
        .map_err(error::query)
        .context("deleting a deck guide")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_take_wildcards_literally() {
        assert_eq!(contains_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
