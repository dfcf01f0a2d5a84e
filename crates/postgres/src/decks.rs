//! Decks over PostgreSQL. A deck is read by one statement (joined to its author and counters)
//! and decoded straight from its json columns into the storage types of `stored.rs`; lists read
//! only the columns a list shows (never the card lines), in statements `list_query.rs` shapes.
//! The rows and the statements that select them are in `rows.rs`, each column spelled once by
//! its row struct; creates and saves in `saves.rs`; list pages and counted views in `views.rs`.

mod card_stats;
pub(crate) mod list_query;
mod rows;
mod saves;
mod views;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::decks::card_search::{CardStatsQuery, CardUsage};
use deckhand_domain::decks::ports::{
    DeckRepository, InsertDeckError, NewDeck, ReviseDeckError, Reviser, ViewCount,
};
use deckhand_domain::decks::{
    Deck, DeckGuide, DeckId, DeckListing, DeckOverview, DeckQuery, DeckReader, DeckVersion, Page,
};
use deckhand_domain::events::EventRecord;
use deckhand_domain::identity::UserId;
use diesel::prelude::*;
use diesel_async::{AsyncConnection as _, RunQueryDsl};
use time::{Duration, OffsetDateTime};

use self::card_stats::CardStatistics;
use self::list_query::count_sql;
use self::rows::{
    DECK_SELECT, DeckRow, GuideRow, OVERVIEW_SELECT, OverviewRow, VERSION_SELECT, VersionRow,
};
use self::saves::{ReviseFailure, SAVE_TRIES, insert_deck, save_revision};
use self::views::{
    COUNT_VIEW, SHORT_WALK_CAPACITY, SHORT_WALK_TTL, ShortWalks, ViewRow, page_rows,
};
use crate::error;
use crate::events;
use crate::list_counts::RememberedCounts;
use crate::pool::{Pool, checkout};
use crate::rules::{Seen, deck_conditions};
use crate::schema::{deck_guides, decks};
use crate::statement::{Bind, Float, Statement};
use crate::usernames::Usernames;

/// Deck likes move the counter in `deck_stats`, never the deck row.
const DECK_LIKES: crate::likes::LikeTables = crate::likes::LikeTables {
    items: "decks",
    likes: "deck_likes",
    item_column: "deck_id",
    counter: "deck_stats",
    counter_key: "deck_id",
};

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
        let row: Option<DeckRow> = Statement::new(DECK_SELECT.as_str(), vec![Bind::Uuid(id.0)])
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding a deck")?;
        row.map(DeckRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find_overview(&self, id: DeckId) -> anyhow::Result<Option<DeckOverview>> {
        let mut conn = checkout(&self.pool).await?;
        let row: Option<OverviewRow> =
            Statement::new(OVERVIEW_SELECT.as_str(), vec![Bind::Uuid(id.0)])
                .get_result(&mut conn)
                .await
                .optional()
                .map_err(error::query)
                .context("finding a deck's overview")?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (id, owner) = (row.listing.id, row.listing.owner_id);
        let username = self
            .usernames
            .of_one(&mut conn, owner)
            .await?
            .with_context(|| format!("deck {id} has an owner without a user"))?;
        row.into_domain(username).map(Some)
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
            format!("{} ORDER BY v.version_number", *VERSION_SELECT),
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
            format!("{} AND v.version_number = $2", *VERSION_SELECT),
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
        let (conditions, game) = deck_conditions(query, Seen::ByPlan);
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
            .map(|row| row.into_listing(&names))
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
