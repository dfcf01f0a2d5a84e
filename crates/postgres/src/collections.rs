//! Users' collections over PostgreSQL. A write is one transaction: the `collections` row is
//! upserted first (its version bumped), which locks it, so concurrent writes of one collection
//! run one after another and each reads what the last committed. What the write's lines hold
//! is read in one statement, the domain's delta rule (`held_after`) says what they hold after,
//! and one statement writes that.

use std::collections::HashMap;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::catalog::name_key;
use deckhand_domain::collections::ports::{ApplyError, CollectionRepository};
use deckhand_domain::collections::{
    CollectionCard, CollectionEntry, CollectionQuery, CollectionTotals, CollectionWrite, Held,
    WriteMode, held_after,
};
use deckhand_domain::decks::{Page, RESULT_WINDOW};
use deckhand_domain::identity::UserId;
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Int4, Int8, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::error;
use crate::events;
use crate::pool::{Pool, checkout};
use crate::rules::contains_pattern;
use crate::statement::{Bind, Statement};

pub(crate) struct PgCollections {
    pool: Pool,
}

impl PgCollections {
    pub(crate) fn new(pool: Pool) -> Self {
        Self { pool }
    }
}

/// The write's lines as parallel arrays, with what each holds after the write: `l` has the
/// printing and finish, the card it copies, and its quantities.
const LINES: &str = "WITH l AS (SELECT * FROM unnest($3::uuid[], $4::bool[], $5::uuid[], \
     $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], \
     $13::text[]) AS l(variant_id, foil, card_id, name, name_key, set_code, collector_number, \
     quantity, trade_quantity, condition, language))";

fn line_binds(write: &CollectionWrite, after: &[Held]) -> Vec<Bind> {
    let lines = &write.lines;
    let texts = |read: fn(&CollectionCard) -> String| {
        Bind::Texts(lines.iter().map(|line| read(&line.card)).collect())
    };
    vec![
        Bind::Uuid(write.owner.0),
        Bind::Text(write.game.clone()),
        Bind::Uuids(lines.iter().map(|line| line.card.variant_id).collect()),
        Bind::Bools(lines.iter().map(|line| line.foil).collect()),
        Bind::Uuids(lines.iter().map(|line| line.card.card_id).collect()),
        texts(|card| card.name.clone()),
        texts(|card| name_key(&card.name)),
        texts(|card| card.set.clone()),
        texts(|card| card.collector_number.clone()),
        Bind::OptionalInts(after.iter().map(|held| Some(held.quantity)).collect()),
        Bind::OptionalInts(after.iter().map(|held| Some(held.trade_quantity)).collect()),
        Bind::OptionalTexts(lines.iter().map(|line| line.condition.clone()).collect()),
        Bind::OptionalTexts(lines.iter().map(|line| line.language.clone()).collect()),
    ]
}

/// What the collection holds of each of `write`'s lines (none of a line absent from it).
async fn held_before(
    conn: &mut AsyncPgConnection,
    write: &CollectionWrite,
) -> diesel::QueryResult<HashMap<(Uuid, bool), Held>> {
    #[derive(QueryableByName)]
    struct HeldRow {
        #[diesel(sql_type = SqlUuid)]
        variant_id: Uuid,
        #[diesel(sql_type = Bool)]
        foil: bool,
        #[diesel(sql_type = Int8)]
        quantity: i64,
        #[diesel(sql_type = Int8)]
        trade_quantity: i64,
    }
    let rows: Vec<HeldRow> = Statement::new(
        "SELECT e.variant_id, e.foil, e.quantity::bigint AS quantity, \
         e.trade_quantity::bigint AS trade_quantity FROM collection_entries e \
         JOIN unnest($3::uuid[], $4::bool[]) AS l(variant_id, foil) \
         ON e.variant_id = l.variant_id AND e.foil = l.foil \
         WHERE e.owner_id = $1 AND e.game = $2",
        vec![
            Bind::Uuid(write.owner.0),
            Bind::Text(write.game.clone()),
            Bind::Uuids(
                write
                    .lines
                    .iter()
                    .map(|line| line.card.variant_id)
                    .collect(),
            ),
            Bind::Bools(write.lines.iter().map(|line| line.foil).collect()),
        ],
    )
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let held = Held {
                quantity: row.quantity,
                trade_quantity: row.trade_quantity,
            };
            ((row.variant_id, row.foil), held)
        })
        .collect())
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Int8)]
    version: i64,
}

#[derive(QueryableByName)]
struct Totals {
    #[diesel(sql_type = Int8)]
    entries: i64,
    #[diesel(sql_type = Int8)]
    cards: i64,
}

#[derive(QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = SqlUuid)]
    variant_id: Uuid,
    #[diesel(sql_type = Bool)]
    foil: bool,
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    set_code: String,
    #[diesel(sql_type = Text)]
    collector_number: String,
    #[diesel(sql_type = Int4)]
    quantity: i32,
    #[diesel(sql_type = Int4)]
    trade_quantity: i32,
    #[diesel(sql_type = Nullable<Text>)]
    condition: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    language: Option<String>,
}

impl EntryRow {
    fn into_domain(self) -> anyhow::Result<CollectionEntry> {
        Ok(CollectionEntry {
            card: CollectionCard {
                variant_id: self.variant_id,
                card_id: self.card_id,
                name: self.name,
                set: self.set_code,
                collector_number: self.collector_number,
            },
            foil: self.foil,
            quantity: u32::try_from(self.quantity).context("a stored quantity below zero")?,
            trade_quantity: u32::try_from(self.trade_quantity)
                .context("a stored trade quantity below zero")?,
            condition: self.condition,
            language: self.language,
        })
    }
}

#[derive(QueryableByName)]
struct OwnedRow {
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Int8)]
    owned: i64,
}

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = Int8)]
    counted: i64,
}

const ENTRY_COLUMNS: &str = "variant_id, foil, card_id, name, set_code, collector_number, \
                             quantity, trade_quantity, condition, language";

/// The listing's order, which the `collection_entries_listed` index holds.
const ENTRY_ORDER: &str = "name_key, set_code, collector_number, foil, variant_id";

/// Why a write's transaction ended without committing.
enum Refused {
    BelowZero(usize),
    Database(diesel::result::Error),
}

impl From<diesel::result::Error> for Refused {
    fn from(error: diesel::result::Error) -> Self {
        Self::Database(error)
    }
}

async fn totals(
    conn: &mut AsyncPgConnection,
    owner: Uuid,
    game: &str,
) -> diesel::QueryResult<Totals> {
    Statement::new(
        "SELECT count(*) AS entries, coalesce(sum(quantity), 0)::bigint AS cards \
         FROM collection_entries WHERE owner_id = $1 AND game = $2",
        vec![Bind::Uuid(owner), Bind::Text(game.to_owned())],
    )
    .get_result(conn)
    .await
}

async fn apply_in(
    conn: &mut AsyncPgConnection,
    write: &CollectionWrite,
) -> Result<CollectionTotals, Refused> {
    let owner = write.owner.0;
    let version: Version = Statement::new(
        "INSERT INTO collections (owner_id, game, version, updated_at) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (owner_id, game) DO UPDATE SET version = collections.version + 1, \
         updated_at = excluded.updated_at RETURNING version",
        vec![
            Bind::Uuid(owner),
            Bind::Text(write.game.clone()),
            Bind::Time(write.at),
        ],
    )
    .get_result(conn)
    .await?;
    if write.mode == WriteMode::Replace {
        Statement::new(
            "DELETE FROM collection_entries WHERE owner_id = $1 AND game = $2",
            vec![Bind::Uuid(owner), Bind::Text(write.game.clone())],
        )
        .execute(conn)
        .await?;
    }
    if !write.lines.is_empty() {
        // Replacing, the DELETE above left nothing held.
        let before = match write.mode {
            WriteMode::Add => held_before(conn, write).await?,
            WriteMode::Replace => HashMap::new(),
        };
        let after = held_after(&write.lines, |line| {
            before
                .get(&(line.card.variant_id, line.foil))
                .copied()
                .unwrap_or_default()
        })
        .map_err(Refused::BelowZero)?;
        Statement::new(
            format!(
                "{LINES}, gone AS (DELETE FROM collection_entries e USING l \
                 WHERE e.owner_id = $1 AND e.game = $2 AND e.variant_id = l.variant_id \
                 AND e.foil = l.foil AND l.quantity = 0) \
                 INSERT INTO collection_entries (owner_id, game, variant_id, foil, card_id, name, \
                 name_key, set_code, collector_number, quantity, trade_quantity, condition, language) \
                 SELECT $1, $2, variant_id, foil, card_id, name, name_key, set_code, \
                 collector_number, quantity, trade_quantity, condition, language FROM l \
                 WHERE quantity > 0 \
                 ON CONFLICT (owner_id, game, variant_id, foil) DO UPDATE SET \
                 quantity = excluded.quantity, trade_quantity = excluded.trade_quantity, \
                 card_id = excluded.card_id, name = excluded.name, name_key = excluded.name_key, \
                 set_code = excluded.set_code, collector_number = excluded.collector_number, \
                 condition = coalesce(excluded.condition, collection_entries.condition), \
                 language = coalesce(excluded.language, collection_entries.language)"
            ),
            line_binds(write, &after),
        )
        .execute(conn)
        .await?;
    }
    let counted = totals(conn, owner, &write.game).await?;
    let totals = CollectionTotals {
        entries: counted.entries as u64,
        cards: counted.cards as u64,
        version: version.version,
    };
    events::insert(conn, &write.event(&totals)).await?;
    Ok(totals)
}

#[async_trait]
impl CollectionRepository for PgCollections {
    #[tracing::instrument(level = "debug", skip_all, fields(game = %write.game, lines = write.lines.len()))]
    async fn apply(&self, write: &CollectionWrite) -> Result<CollectionTotals, ApplyError> {
        let mut conn = checkout(&self.pool).await?;
        let applied = conn
            .transaction::<_, Refused, _>(async |conn| apply_in(conn, write).await)
            .await;
        match applied {
            Ok(totals) => Ok(totals),
            Err(Refused::BelowZero(index)) => Err(ApplyError::BelowZero { index }),
            Err(Refused::Database(error)) => Err(ApplyError::Unexpected(
                error::query(error).context("writing a collection"),
            )),
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn totals(&self, owner: UserId, game: &str) -> anyhow::Result<CollectionTotals> {
        let mut conn = checkout(&self.pool).await?;
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = Int8)]
            entries: i64,
            #[diesel(sql_type = Int8)]
            cards: i64,
            #[diesel(sql_type = Int8)]
            version: i64,
        }
        let row: Row = Statement::new(
            "SELECT t.entries, t.cards, coalesce((SELECT version FROM collections \
             WHERE owner_id = $1 AND game = $2), 0) AS version FROM (SELECT count(*) AS entries, \
             coalesce(sum(quantity), 0)::bigint AS cards FROM collection_entries \
             WHERE owner_id = $1 AND game = $2) t",
            vec![Bind::Uuid(owner.0), Bind::Text(game.to_owned())],
        )
        .get_result(&mut conn)
        .await
        .map_err(error::query)?;
        Ok(CollectionTotals {
            entries: row.entries as u64,
            cards: row.cards as u64,
            version: row.version,
        })
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, query: &CollectionQuery) -> anyhow::Result<Page<CollectionEntry>> {
        let mut binds = vec![Bind::Uuid(query.owner.0), Bind::Text(query.game.clone())];
        let mut conditions = "owner_id = $1 AND game = $2".to_owned();
        if let Some(part) = &query.filter.name_contains {
            binds.push(Bind::Text(contains_pattern(part)));
            conditions.push_str(&format!(" AND name_key LIKE ${}", binds.len()));
        }
        if let Some(set) = &query.filter.set {
            binds.push(Bind::Text(set.clone()));
            conditions.push_str(&format!(" AND set_code = ${}", binds.len()));
        }
        let mut conn = checkout(&self.pool).await?;
        let counted: Counted = Statement::new(
            format!(
                "SELECT count(*) AS counted FROM (SELECT 1 FROM collection_entries \
                 WHERE {conditions} LIMIT {}) c",
                RESULT_WINDOW + 1
            ),
            binds.clone(),
        )
        .get_result(&mut conn)
        .await
        .map_err(error::query)?;
        binds.push(Bind::Int(i64::from(query.page.limit)));
        binds.push(Bind::Int(i64::from(query.page.offset())));
        let rows: Vec<EntryRow> = Statement::new(
            format!(
                "SELECT {ENTRY_COLUMNS} FROM collection_entries WHERE {conditions} \
                 ORDER BY {ENTRY_ORDER} LIMIT ${} OFFSET ${}",
                binds.len() - 1,
                binds.len()
            ),
            binds,
        )
        .load(&mut conn)
        .await
        .map_err(error::query)?;
        let items = rows
            .into_iter()
            .map(EntryRow::into_domain)
            .collect::<anyhow::Result<_>>()?;
        Ok(Page::with_capped_total(items, counted.counted as u64))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn all(&self, owner: UserId, game: &str) -> anyhow::Result<Vec<CollectionEntry>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EntryRow> = Statement::new(
            format!(
                "SELECT {ENTRY_COLUMNS} FROM collection_entries WHERE owner_id = $1 AND game = $2 \
                 ORDER BY {ENTRY_ORDER}"
            ),
            vec![Bind::Uuid(owner.0), Bind::Text(game.to_owned())],
        )
        .load(&mut conn)
        .await
        .map_err(error::query)?;
        rows.into_iter().map(EntryRow::into_domain).collect()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(cards = cards.len()))]
    async fn owned(
        &self,
        owner: UserId,
        game: &str,
        cards: &[Uuid],
    ) -> anyhow::Result<HashMap<Uuid, u64>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<OwnedRow> = Statement::new(
            // One probe of `collection_entries_by_card` per card of the deck, whatever the
            // statistics say: a scan of the owner's entries filtered by `card_id = ANY` reads
            // the whole collection to find a deck's hundred cards.
            "SELECT wanted.card_id, held.owned FROM unnest($3::uuid[]) AS wanted (card_id) \
             CROSS JOIN LATERAL (SELECT sum(quantity)::bigint AS owned FROM collection_entries \
             WHERE owner_id = $1 AND game = $2 AND card_id = wanted.card_id) AS held \
             WHERE held.owned IS NOT NULL",
            vec![
                Bind::Uuid(owner.0),
                Bind::Text(game.to_owned()),
                Bind::Uuids(cards.to_vec()),
            ],
        )
        .load(&mut conn)
        .await
        .map_err(error::query)?;
        Ok(rows
            .into_iter()
            .map(|row| (row.card_id, row.owned as u64))
            .collect())
    }
}
