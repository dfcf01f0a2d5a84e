//! Sideboard guides over PostgreSQL. Reads go through one SELECT (`GUIDE_SELECT`); the list
//! reuses the deck list's bind-only condition builder and remembers its totals the same way
//! (`crate::list_counts`). `refresh_has_sideboard_guide` is the one writer of
//! `decks.has_sideboard_guide`.

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::decks::{Author, DeckId, DeckSummary, Page, Visibility};
use deckhand_domain::events::EventRecord;
use deckhand_domain::identity::{UserId, Username};
use deckhand_domain::sideboards::events as guide_events;
use deckhand_domain::sideboards::ports::{
    GuideReviser, MatchupReviser, NewGuide, NewMatchup, ReviseGuideError, ReviseMatchupError,
    SideboardGuideRepository,
};
use deckhand_domain::sideboards::{
    AttachedDeck, Difficulty, GuideContent, GuideDetail, GuideId, GuideQuery, Matchup,
    MatchupContent, MatchupId, PrimaryDeckSummary, SideboardGuide,
};
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Int8, Json, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::decks::list_query::page_window;
use crate::error;
use crate::events;
use crate::list_counts::{Listed, RememberedCounts};
use crate::pool::{Pool, checkout};
use crate::rules::{guide_conditions, guide_order};
use crate::schema::{sideboard_guide_decks, sideboard_guides, sideboard_matchups};
use crate::stored::{Json as StoredJson, StoredOverride, StoredSummary};

/// Guide likes move the counter on the guide row (where the likes sort's index reads it),
/// never its `updated_at`.
const GUIDE_LIKES: crate::likes::LikeTables = crate::likes::LikeTables {
    items: "sideboard_guides",
    likes: "sideboard_guide_likes",
    item_column: "guide_id",
    counter: "sideboard_guides",
    counter_key: "id",
};

/// What a guide read takes beyond the guide's own columns.
#[derive(Clone, Copy)]
enum GuideRead<'a> {
    /// One guide, with its long texts.
    One,
    /// A list page of the game `game` (an SQL literal or placeholder): no long texts (lists
    /// never show description and notes, up to 500,000 characters each), and the list's
    /// changes, read once for the page, so a remembered total is checked without a statement of
    /// its own ([`GuidePageRow`]).
    ListPage { game: &'a str },
}

/// Every guide read. `{summary}` is `pd.summary` where the primary deck's summary is wanted,
/// else `NULL::json`. The matchup count is one index lookup per guide, inside the same
/// statement.
fn guide_select(with_summary: bool, read: GuideRead<'_>) -> String {
    let summary = if with_summary {
        "pd.summary"
    } else {
        "NULL::json"
    };
    let (description, notes, list_changes) = match read {
        GuideRead::One => ("g.description", "g.notes", String::new()),
        GuideRead::ListPage { game } => (
            "''::text",
            "''::text",
            format!(", {} AS list_changes", Listed::Guides.changes_sql(game)),
        ),
    };
    format!(
        "SELECT g.id, g.game, g.owner_id, u.username, g.primary_deck_id, g.name, \
         {description} AS description, {notes} AS notes, g.visibility, g.tags, g.format, \
         g.thumbnail, g.youtube_url, g.premium, g.is_archived, g.pageviews, g.likes, \
         g.created_at, g.updated_at, pd.visibility AS primary_deck_visibility, \
         (SELECT count(*) FROM sideboard_matchups m WHERE m.guide_id = g.id) AS matchup_count, \
         {summary} AS primary_summary{list_changes} \
         FROM sideboard_guides g JOIN users u ON u.id = g.owner_id \
         JOIN decks pd ON pd.id = g.primary_deck_id"
    )
}

/// A row of a list page ([`GuideRead::ListPage`]).
#[derive(Debug, QueryableByName)]
struct GuidePageRow {
    #[diesel(embed)]
    guide: GuideRow,
    #[diesel(sql_type = Int8)]
    list_changes: i64,
}

#[derive(Debug, QueryableByName)]
struct GuideRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    game: String,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = Text)]
    username: String,
    #[diesel(sql_type = SqlUuid)]
    primary_deck_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    description: String,
    #[diesel(sql_type = Text)]
    notes: String,
    #[diesel(sql_type = Text)]
    visibility: String,
    #[diesel(sql_type = Array<Text>)]
    tags: Vec<String>,
    #[diesel(sql_type = Nullable<Text>)]
    format: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    thumbnail: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    youtube_url: Option<String>,
    #[diesel(sql_type = Bool)]
    premium: bool,
    #[diesel(sql_type = Bool)]
    is_archived: bool,
    #[diesel(sql_type = Int8)]
    pageviews: i64,
    #[diesel(sql_type = Int8)]
    likes: i64,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    updated_at: OffsetDateTime,
    #[diesel(sql_type = Text)]
    primary_deck_visibility: String,
    #[diesel(sql_type = Int8)]
    matchup_count: i64,
    #[diesel(sql_type = Nullable<Json>)]
    primary_summary: Option<StoredJson<StoredSummary>>,
}

impl GuideRow {
    fn into_domain(self) -> anyhow::Result<SideboardGuide> {
        let context = || format!("guide {} has invalid stored data", self.id);
        let visibility = Visibility::from_stored(&self.visibility).with_context(context)?;
        let primary_deck_visibility =
            Visibility::from_stored(&self.primary_deck_visibility).with_context(context)?;
        let username = Username::parse(&self.username).with_context(context)?;
        let primary_summary = self.primary_summary.map(|summary| {
            let summary = DeckSummary::from(summary.0);
            PrimaryDeckSummary {
                featured_cards: summary.featured_cards,
                colors: summary.colors,
            }
        });
        Ok(SideboardGuide {
            id: GuideId(self.id),
            game: self.game,
            author: Author {
                id: UserId(self.owner_id),
                username,
            },
            content: GuideContent {
                name: self.name,
                description: self.description,
                notes: self.notes,
                visibility,
                tags: self.tags,
                format: self.format,
                thumbnail: self.thumbnail,
                youtube_url: self.youtube_url,
                premium: self.premium,
            },
            primary_deck: DeckId(self.primary_deck_id),
            primary_deck_visibility,
            primary_summary,
            matchup_count: u32::try_from(self.matchup_count).unwrap_or(u32::MAX),
            pageviews: self.pageviews,
            likes: self.likes,
            is_archived: self.is_archived,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(Debug, QueryableByName)]
struct AttachedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = Text)]
    visibility: String,
    #[diesel(sql_type = Bool)]
    is_primary: bool,
}

impl AttachedRow {
    fn into_domain(self) -> anyhow::Result<AttachedDeck> {
        Ok(AttachedDeck {
            id: DeckId(self.id),
            name: self.name,
            owner: UserId(self.owner_id),
            visibility: Visibility::from_stored(&self.visibility).with_context(|| {
                format!("deck {} has visibility {:?}", self.id, self.visibility)
            })?,
            is_primary: self.is_primary,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = sideboard_matchups, check_for_backend(diesel::pg::Pg), treat_none_as_null = true)]
struct MatchupRow {
    id: Uuid,
    guide_id: Uuid,
    opponent_deck_name: String,
    opponent_archetype: Option<String>,
    difficulty: String,
    notes: String,
    play_notes: String,
    draw_notes: String,
    sort_order: i32,
    thumbnail: Option<String>,
    is_featured: bool,
    special_card_overrides: StoredJson<Vec<StoredOverride>>,
    created_at: OffsetDateTime,
}

impl MatchupRow {
    fn new(
        guide: GuideId,
        id: MatchupId,
        content: &MatchupContent,
        created_at: OffsetDateTime,
    ) -> QueryResult<Self> {
        Ok(Self {
            id: id.0,
            guide_id: guide.0,
            opponent_deck_name: content.opponent_deck_name.clone(),
            opponent_archetype: content.opponent_archetype.clone(),
            difficulty: content.difficulty.as_str().to_owned(),
            notes: content.notes.clone(),
            play_notes: content.play_notes.clone(),
            draw_notes: content.draw_notes.clone(),
            sort_order: content.sort_order,
            thumbnail: content.thumbnail.clone(),
            is_featured: content.is_featured,
            special_card_overrides: StoredJson(
                content
                    .special_card_overrides
                    .iter()
                    .map(Into::into)
                    .collect(),
            ),
            created_at,
        })
    }

    fn into_domain(self) -> anyhow::Result<Matchup> {
        let context = || format!("matchup {} has invalid stored data", self.id);
        Ok(Matchup {
            id: MatchupId(self.id),
            guide_id: GuideId(self.guide_id),
            content: MatchupContent {
                opponent_deck_name: self.opponent_deck_name,
                opponent_archetype: self.opponent_archetype,
                difficulty: Difficulty::parse(&self.difficulty).with_context(context)?,
                notes: self.notes,
                play_notes: self.play_notes,
                draw_notes: self.draw_notes,
                sort_order: self.sort_order,
                thumbnail: self.thumbnail,
                is_featured: self.is_featured,
                special_card_overrides: self
                    .special_card_overrides
                    .0
                    .into_iter()
                    .map(Into::into)
                    .collect(),
            },
            created_at: self.created_at,
        })
    }
}

/// The columns a guide's content maps to, for both an insert and a PATCH.
#[derive(Insertable, AsChangeset)]
#[diesel(table_name = sideboard_guides, treat_none_as_null = true)]
struct GuideColumns<'a> {
    name: &'a str,
    description: &'a str,
    notes: &'a str,
    visibility: &'a str,
    tags: &'a [String],
    format: Option<&'a str>,
    thumbnail: Option<&'a str>,
    youtube_url: Option<&'a str>,
    premium: bool,
}

impl<'a> From<&'a GuideContent> for GuideColumns<'a> {
    fn from(content: &'a GuideContent) -> Self {
        Self {
            name: &content.name,
            description: &content.description,
            notes: &content.notes,
            visibility: content.visibility.as_str(),
            tags: &content.tags,
            format: content.format.as_deref(),
            thumbnail: content.thumbnail.as_deref(),
            youtube_url: content.youtube_url.as_deref(),
            premium: content.premium,
        }
    }
}

/// The one place `decks.has_sideboard_guide` is written: each of `decks` gets whether a
/// non-archived guide has it attached, read after this transaction's own changes. The deck rows
/// are locked first, in id order, by a statement of their own: a concurrent guide write that
/// touches the same deck waits, and the recomputation that follows takes a fresh snapshot that
/// sees what that write committed, so the last writer's answer is always the true one.
async fn refresh_has_sideboard_guide(
    conn: &mut AsyncPgConnection,
    decks: &[Uuid],
) -> QueryResult<()> {
    diesel::sql_query("SELECT 1 FROM decks WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE")
        .bind::<Array<SqlUuid>, _>(decks)
        .execute(conn)
        .await?;
    diesel::sql_query(
        "UPDATE decks d SET has_sideboard_guide = attached.value \
         FROM (SELECT d2.id, EXISTS (SELECT 1 FROM sideboard_guide_decks gd \
                   JOIN sideboard_guides g ON g.id = gd.guide_id \
                   WHERE gd.deck_id = d2.id AND NOT g.is_archived) AS value \
               FROM decks d2 WHERE d2.id = ANY($1)) AS attached \
         WHERE d.id = attached.id AND d.has_sideboard_guide <> attached.value",
    )
    .bind::<Array<SqlUuid>, _>(decks)
    .execute(conn)
    .await
    .map(drop)
}

async fn load_guide(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    with_summary: bool,
) -> QueryResult<Option<GuideRow>> {
    diesel::sql_query(format!(
        "{} WHERE g.id = $1",
        guide_select(with_summary, GuideRead::One)
    ))
    .bind::<SqlUuid, _>(id)
    .get_result(conn)
    .await
    .optional()
}

/// The detail in three statements: the guide, its decks, its matchups.
async fn load_detail(
    conn: &mut AsyncPgConnection,
    id: Uuid,
) -> QueryResult<Option<(GuideRow, Vec<AttachedRow>, Vec<MatchupRow>)>> {
    let Some(guide) = load_guide(conn, id, true).await? else {
        return Ok(None);
    };
    let decks = diesel::sql_query(
        "SELECT d.id, d.name, d.owner_id, d.visibility, gd.is_primary \
         FROM sideboard_guide_decks gd JOIN decks d ON d.id = gd.deck_id \
         WHERE gd.guide_id = $1 ORDER BY gd.is_primary DESC, gd.attached_at, gd.deck_id",
    )
    .bind::<SqlUuid, _>(id)
    .load(conn)
    .await?;
    let matchups = sideboard_matchups::table
        .filter(sideboard_matchups::guide_id.eq(id))
        .order((
            sideboard_matchups::sort_order,
            sideboard_matchups::created_at,
            sideboard_matchups::id,
        ))
        .select(MatchupRow::as_select())
        .load(conn)
        .await?;
    Ok(Some((guide, decks, matchups)))
}

fn detail_into_domain(
    (guide, decks, matchups): (GuideRow, Vec<AttachedRow>, Vec<MatchupRow>),
) -> anyhow::Result<GuideDetail> {
    Ok(GuideDetail {
        guide: guide.into_domain()?,
        decks: decks
            .into_iter()
            .map(AttachedRow::into_domain)
            .collect::<anyhow::Result<_>>()?,
        matchups: matchups
            .into_iter()
            .map(MatchupRow::into_domain)
            .collect::<anyhow::Result<_>>()?,
    })
}

/// Locks the guide row; false when there is none.
async fn lock_guide(conn: &mut AsyncPgConnection, id: Uuid) -> QueryResult<bool> {
    let locked: Option<Uuid> = sideboard_guides::table
        .find(id)
        .select(sideboard_guides::id)
        .for_update()
        .get_result(conn)
        .await
        .optional()?;
    Ok(locked.is_some())
}

async fn mark_edited(
    conn: &mut AsyncPgConnection,
    id: Uuid,
    at: OffsetDateTime,
) -> QueryResult<()> {
    diesel::update(sideboard_guides::table.find(id))
        .set(sideboard_guides::updated_at.eq(at))
        .execute(conn)
        .await
        .map(drop)
}

pub(crate) struct PgSideboardGuides {
    pool: Pool,
    counts: RememberedCounts,
}

impl PgSideboardGuides {
    pub(crate) fn new(pool: Pool) -> Self {
        Self {
            pool,
            counts: RememberedCounts::new(),
        }
    }
}

#[async_trait]
impl SideboardGuideRepository for PgSideboardGuides {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, guide: &NewGuide) -> anyhow::Result<GuideDetail> {
        let mut conn = checkout(&self.pool).await?;
        let matchups = guide
            .matchups
            .iter()
            .map(|new| MatchupRow::new(guide.id, new.id, &new.content, guide.created_at))
            .collect::<QueryResult<Vec<_>>>()
            .context("serialising matchups")?;
        let stored = conn
            .transaction(async |conn| {
                diesel::insert_into(sideboard_guides::table)
                    .values((
                        GuideColumns::from(&guide.content),
                        sideboard_guides::id.eq(guide.id.0),
                        sideboard_guides::game.eq(&guide.game),
                        sideboard_guides::owner_id.eq(guide.owner.0),
                        sideboard_guides::primary_deck_id.eq(guide.primary_deck.0),
                        sideboard_guides::created_at.eq(guide.created_at),
                        sideboard_guides::updated_at.eq(guide.created_at),
                    ))
                    .execute(conn)
                    .await?;
                diesel::insert_into(sideboard_guide_decks::table)
                    .values((
                        sideboard_guide_decks::guide_id.eq(guide.id.0),
                        sideboard_guide_decks::deck_id.eq(guide.primary_deck.0),
                        sideboard_guide_decks::is_primary.eq(true),
                        sideboard_guide_decks::attached_at.eq(guide.created_at),
                    ))
                    .execute(conn)
                    .await?;
                if !matchups.is_empty() {
                    diesel::insert_into(sideboard_matchups::table)
                        .values(&matchups)
                        .execute(conn)
                        .await?;
                }
                refresh_has_sideboard_guide(conn, &[guide.primary_deck.0]).await?;
                let detail = load_detail(conn, guide.id.0).await?;
                events::insert(conn, &guide.event).await?;
                Ok(detail)
            })
            .await
            .map_err(error::query)
            .context("inserting a sideboard guide")?;
        detail_into_domain(stored.context("a guide vanished inside its own insert")?)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find(&self, id: GuideId) -> anyhow::Result<Option<SideboardGuide>> {
        let mut conn = checkout(&self.pool).await?;
        let row = load_guide(&mut conn, id.0, false)
            .await
            .map_err(error::query)
            .context("finding a sideboard guide")?;
        row.map(GuideRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn detail(&self, id: GuideId) -> anyhow::Result<Option<GuideDetail>> {
        let mut conn = checkout(&self.pool).await?;
        // One snapshot for the three statements, so the parts agree.
        let loaded = conn
            .build_transaction()
            .read_only()
            .repeatable_read()
            .run(async |conn| load_detail(conn, id.0).await)
            .await
            .map_err(error::query)
            .context("loading a sideboard guide")?;
        loaded.map(detail_into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id))]
    async fn revise(
        &self,
        id: GuideId,
        reviser: GuideReviser,
    ) -> Result<GuideDetail, ReviseGuideError> {
        enum Failure {
            Database(diesel::result::Error),
            NotFound,
            Corrupt(anyhow::Error),
        }
        impl From<diesel::result::Error> for Failure {
            fn from(error: diesel::result::Error) -> Self {
                Self::Database(error)
            }
        }
        let mut conn = checkout(&self.pool).await?;
        let outcome = conn
            .transaction::<_, Failure, _>(async move |conn| {
                if !lock_guide(conn, id.0).await? {
                    return Err(Failure::NotFound);
                }
                let current = load_guide(conn, id.0, false)
                    .await?
                    .ok_or(Failure::NotFound)?
                    .into_domain()
                    .map_err(Failure::Corrupt)?;
                let revision = reviser(&current);
                let event = guide_events::saved(&current, &revision);
                diesel::update(sideboard_guides::table.find(id.0))
                    .set((
                        GuideColumns::from(&revision.content),
                        sideboard_guides::is_archived.eq(revision.is_archived),
                        sideboard_guides::updated_at.eq(revision.at),
                    ))
                    .execute(conn)
                    .await?;
                if revision.is_archived != current.is_archived {
                    let attached: Vec<Uuid> = sideboard_guide_decks::table
                        .filter(sideboard_guide_decks::guide_id.eq(id.0))
                        .select(sideboard_guide_decks::deck_id)
                        .load(conn)
                        .await?;
                    refresh_has_sideboard_guide(conn, &attached).await?;
                }
                let detail = load_detail(conn, id.0).await?.ok_or(Failure::NotFound)?;
                events::insert(conn, &event).await?;
                Ok(detail)
            })
            .await;
        match outcome {
            Ok(loaded) => Ok(detail_into_domain(loaded)?),
            Err(Failure::NotFound) => Err(ReviseGuideError::NotFound),
            Err(Failure::Corrupt(error)) => Err(ReviseGuideError::Unexpected(error)),
            Err(Failure::Database(error)) => Err(ReviseGuideError::Unexpected(
                error::query(error).context("revising a sideboard guide"),
            )),
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, query: &GuideQuery) -> anyhow::Result<Page<SideboardGuide>> {
        let mut conn = checkout(&self.pool).await?;
        let (mut conditions, game) = guide_conditions(query);
        let where_clause = conditions.sql();
        let count_sql = Listed::Guides.count_sql("sideboard_guides g", &where_clause, &game);
        let counted_conditions = conditions.clone();
        let window = page_window(&mut conditions, query.page);
        let order = guide_order(query.sort, query.order);
        // The inner query picks the page's ids from the sort index alone; only those rows are
        // joined to their author and primary deck, as the deck list does. The list's changes
        // are read once, beside the rows, for the total.
        let page_sql = format!(
            "WITH page AS (SELECT g.id FROM sideboard_guides g WHERE {where_clause} \
             ORDER BY {order} {window}) \
             {select} JOIN page ON page.id = g.id ORDER BY {order}",
            select = guide_select(query.with_summary, GuideRead::ListPage { game: &game }),
        );
        let rows: Vec<GuidePageRow> = conditions
            .statement(page_sql)
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("listing sideboard guides")?;
        let seen = rows.iter().map(|row| row.list_changes).next();
        let items: Vec<SideboardGuide> = rows
            .into_iter()
            .map(|row| row.guide.into_domain())
            .collect::<anyhow::Result<_>>()?;
        let counted = self
            .counts
            .total(
                &mut conn,
                query.page,
                items.len(),
                &counted_conditions,
                count_sql,
                seen,
            )
            .await?;
        Ok(Page::with_capped_total(items, counted))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, deck = %deck))]
    async fn attach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let at = event.occurred_at;
        let mut conn = checkout(&self.pool).await?;
        conn.transaction(async |conn| {
            lock_guide(conn, id.0).await?;
            let inserted = diesel::insert_into(sideboard_guide_decks::table)
                .values((
                    sideboard_guide_decks::guide_id.eq(id.0),
                    sideboard_guide_decks::deck_id.eq(deck.0),
                    sideboard_guide_decks::is_primary.eq(false),
                    sideboard_guide_decks::attached_at.eq(at),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            if inserted > 0 {
                mark_edited(conn, id.0, at).await?;
                refresh_has_sideboard_guide(conn, &[deck.0]).await?;
                events::insert(conn, event).await?;
            }
            Ok::<_, diesel::result::Error>(inserted > 0)
        })
        .await
        .map_err(error::query)
        .context("attaching a deck to a sideboard guide")
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, deck = %deck))]
    async fn detach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let at = event.occurred_at;
        let mut conn = checkout(&self.pool).await?;
        conn.transaction(async |conn| {
            lock_guide(conn, id.0).await?;
            let deleted = diesel::delete(
                sideboard_guide_decks::table
                    .filter(sideboard_guide_decks::guide_id.eq(id.0))
                    .filter(sideboard_guide_decks::deck_id.eq(deck.0))
                    .filter(sideboard_guide_decks::is_primary.eq(false)),
            )
            .execute(conn)
            .await?;
            if deleted > 0 {
                mark_edited(conn, id.0, at).await?;
                refresh_has_sideboard_guide(conn, &[deck.0]).await?;
                events::insert(conn, event).await?;
            }
            Ok::<_, diesel::result::Error>(deleted > 0)
        })
        .await
        .map_err(error::query)
        .context("detaching a deck from a sideboard guide")
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id))]
    async fn add_matchup(
        &self,
        id: GuideId,
        matchup: &NewMatchup,
        event: &EventRecord,
    ) -> anyhow::Result<Matchup> {
        let at = event.occurred_at;
        let mut conn = checkout(&self.pool).await?;
        let row = MatchupRow::new(id, matchup.id, &matchup.content, at)
            .context("serialising a matchup")?;
        let stored: MatchupRow = conn
            .transaction(async |conn| {
                let stored = diesel::insert_into(sideboard_matchups::table)
                    .values(&row)
                    .returning(MatchupRow::as_returning())
                    .get_result(conn)
                    .await?;
                mark_edited(conn, id.0, at).await?;
                events::insert(conn, event).await?;
                Ok::<_, diesel::result::Error>(stored)
            })
            .await
            .map_err(error::query)
            .context("adding a matchup")?;
        stored.into_domain()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, matchup = %matchup))]
    async fn revise_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        reviser: MatchupReviser,
        event: &EventRecord,
    ) -> Result<Matchup, ReviseMatchupError> {
        let at = event.occurred_at;
        let mut conn = checkout(&self.pool).await?;
        let outcome = conn
            .transaction(async move |conn| {
                let current: Option<MatchupRow> = sideboard_matchups::table
                    .filter(sideboard_matchups::id.eq(matchup.0))
                    .filter(sideboard_matchups::guide_id.eq(id.0))
                    .select(MatchupRow::as_select())
                    .for_update()
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(current) = current else {
                    return Ok(None);
                };
                let current = match current.into_domain() {
                    Ok(current) => current,
                    Err(error) => return Ok(Some(Err(error))),
                };
                let content = reviser(&current.content);
                let row = MatchupRow::new(id, matchup, &content, current.created_at)?;
                let stored = diesel::update(sideboard_matchups::table.find(matchup.0))
                    .set(&row)
                    .returning(MatchupRow::as_returning())
                    .get_result(conn)
                    .await?;
                mark_edited(conn, id.0, at).await?;
                events::insert(conn, event).await?;
                Ok::<_, diesel::result::Error>(Some(Ok(stored)))
            })
            .await
            .map_err(error::query)
            .context("revising a matchup")?;
        match outcome {
            None => Err(ReviseMatchupError::NotFound),
            Some(Err(corrupt)) => Err(ReviseMatchupError::Unexpected(corrupt)),
            Some(Ok(row)) => Ok(row.into_domain()?),
        }
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn set_like(
        &self,
        id: GuideId,
        game: &str,
        user: UserId,
        liked: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        crate::likes::set_like(&self.pool, &GUIDE_LIKES, (id.0, game), user.0, liked, at).await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, matchup = %matchup))]
    async fn delete_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        event: &EventRecord,
    ) -> anyhow::Result<bool> {
        let at = event.occurred_at;
        let mut conn = checkout(&self.pool).await?;
        conn.transaction(async |conn| {
            let deleted = diesel::delete(
                sideboard_matchups::table
                    .filter(sideboard_matchups::id.eq(matchup.0))
                    .filter(sideboard_matchups::guide_id.eq(id.0)),
            )
            .execute(conn)
            .await?;
            if deleted > 0 {
                mark_edited(conn, id.0, at).await?;
                events::insert(conn, event).await?;
            }
            Ok::<_, diesel::result::Error>(deleted > 0)
        })
        .await
        .map_err(error::query)
        .context("deleting a matchup")
    }
}
