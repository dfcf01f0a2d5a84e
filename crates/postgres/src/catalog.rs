//! The catalog over PostgreSQL. Lookups take every key of a request at once (`= ANY($n)` over
//! arrays), so one resolution is a fixed number of statements whatever its size; the indexes
//! they use are in `migrations/2026-11-21-000100_catalog` (query plans: docs/catalog.md). They
//! are prepared once per connection ([`Statement`]): their generic plans are the same index
//! probes as the custom ones, whatever the number of keys (a PostgreSQL test pins them).

mod cache;
mod facts;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::catalog::ports::CatalogRepository;
use deckhand_domain::catalog::{
    CardName, CardPick, CatalogCounts, CatalogEntry, CatalogIndex, FeaturedSlot, Format, Game,
    Preference, Printing, PrintingKeys, Section, name_key,
};
use deckhand_domain::events::EventRecord;
use deckhand_domain::formats::{CardFacts, Legality};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Date, Nullable, SmallInt, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use futures_util::TryStreamExt as _;
use uuid::Uuid;

use crate::error;
use crate::listener::Listener;
use crate::pool::{Pool, checkout};
use crate::schema::{catalog_cards, catalog_printings, game_sections, games};
use crate::statement::{Bind, Statement};

/// Entries per upsert of cards and printings (each column bound as one array).
const ROWS_PER_STATEMENT: usize = 1000;

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = games, check_for_backend(diesel::pg::Pg))]
struct GameRow {
    slug: String,
    name: String,
    colors: Vec<String>,
}

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = game_sections, check_for_backend(diesel::pg::Pg))]
struct SectionRow {
    game: String,
    key: String,
    label: String,
    counted: bool,
    featured_slot: Option<String>,
}

/// The columns of an [`EntryRow`]: printing `p` and its card `c`. Legalities come as text, read
/// straight into their map (no `serde_json::Value` in between: that was 12% of the server's
/// CPU on a resolution of 1000 identifiers, docs/benchmarks.md).
macro_rules! entry_columns {
    () => {
        "p.variant_id, p.card_id, p.name, p.set, p.collector_number, p.type_line, p.image_url, \
         p.colors, p.catalog_a_id, p.catalog_b_id, p.catalog_c_id, p.lang, p.released_at, \
         p.preference, p.legalities::text AS legalities, c.face_names, c.color_identity"
    };
}

/// A printing with its card's face names, as [`entry_columns!`] reads it.
#[derive(Debug, QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = SqlUuid)]
    variant_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    set: String,
    #[diesel(sql_type = Text)]
    collector_number: String,
    #[diesel(sql_type = Text)]
    type_line: String,
    #[diesel(sql_type = Nullable<Text>)]
    image_url: Option<String>,
    #[diesel(sql_type = Array<Text>)]
    colors: Vec<String>,
    #[diesel(sql_type = Nullable<Text>)]
    catalog_a_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    catalog_b_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    catalog_c_id: Option<String>,
    #[diesel(sql_type = Text)]
    lang: String,
    #[diesel(sql_type = Nullable<Date>)]
    released_at: Option<time::Date>,
    #[diesel(sql_type = SmallInt)]
    preference: i16,
    #[diesel(sql_type = Text)]
    legalities: String,
    #[diesel(sql_type = Array<Text>)]
    face_names: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    color_identity: Vec<String>,
}

fn parse_legalities(text: &str, variant_id: Uuid) -> anyhow::Result<Legalities> {
    let legalities: BTreeMap<String, String> = serde_json::from_str(text)
        .with_context(|| format!("printing {variant_id} has invalid legalities"))?;
    Ok(Arc::new(legalities))
}

type Legalities = Arc<BTreeMap<String, String>>;

impl EntryRow {
    fn into_domain(self) -> anyhow::Result<CatalogEntry> {
        let legalities = parse_legalities(&self.legalities, self.variant_id)?;
        Ok(self.with_legalities(legalities))
    }

    /// As [`Self::into_domain`], sharing one map among the printings whose legalities read
    /// the same (most of a card's printings).
    fn into_shared(self, shared: &mut HashMap<String, Legalities>) -> anyhow::Result<CatalogEntry> {
        let legalities = match shared.get(&self.legalities) {
            Some(legalities) => legalities.clone(),
            None => {
                let legalities = parse_legalities(&self.legalities, self.variant_id)?;
                shared.insert(self.legalities.clone(), legalities.clone());
                legalities
            }
        };
        Ok(self.with_legalities(legalities))
    }

    fn with_legalities(self, legalities: Legalities) -> CatalogEntry {
        CatalogEntry {
            printing: Printing {
                variant_id: self.variant_id,
                card_id: self.card_id,
                name: self.name,
                set: self.set,
                collector_number: self.collector_number,
                type_line: self.type_line,
                image_url: self.image_url,
                colors: self.colors,
                catalog_a_id: self.catalog_a_id,
                catalog_b_id: self.catalog_b_id,
                catalog_c_id: self.catalog_c_id,
            },
            face_names: self.face_names,
            lang: self.lang,
            released_at: self.released_at,
            preference: Preference::from_i16(self.preference),
            legalities,
            color_identity: self.color_identity,
            // An import's input, stored by name (`card_text_rules`), not read back.
            text_rules: None,
        }
    }
}

#[derive(Debug, QueryableByName)]
struct PickedRow {
    #[diesel(sql_type = BigInt)]
    ord: i64,
    #[diesel(embed)]
    entry: EntryRow,
}

#[derive(Debug, QueryableByName)]
struct CardNameRow {
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Text)]
    name_key: String,
    #[diesel(sql_type = Text)]
    front_face_key: String,
}

/// Every card of a game, for its resident index.
const ALL_CARDS: &str =
    "SELECT card_id, name_key, front_face_key FROM catalog_cards WHERE game = $1";

/// Every printing of a game, for its resident index.
const ALL_PRINTINGS: &str = concat!(
    "SELECT ",
    entry_columns!(),
    " FROM catalog_printings p JOIN catalog_cards c ON c.game = p.game AND c.card_id = p.card_id \
     WHERE p.game = $1"
);

/// How many printings a game has, so that its index's vector is made once at its size.
const PRINTINGS_COUNT: &str = "SELECT count(*) AS printings FROM catalog_printings WHERE game = $1";

#[derive(QueryableByName)]
struct PrintingsCount {
    #[diesel(sql_type = BigInt)]
    printings: i64,
}

/// Every card and printing of `game`, indexed: three statements in one snapshot (repeatable
/// read), the printings decoded as they arrive into a vector made at their count, so that
/// loading holds little more than the index it builds (a vector grown by doubling held half as
/// much again, and twice as much while it moved; docs/benchmarks.md).
async fn load_index(conn: &mut AsyncPgConnection, game: &str) -> anyhow::Result<CatalogIndex> {
    let game = game.to_owned();
    conn.build_transaction()
        .read_only()
        .repeatable_read()
        .run::<_, anyhow::Error, _>(async |conn| {
            let binds = || vec![Bind::Text(game.clone())];
            let cards: Vec<CardNameRow> = Statement::new(ALL_CARDS, binds())
                .load(conn)
                .await
                .map_err(error::query)
                .context("loading the catalog's cards")?;
            let counted: PrintingsCount = Statement::new(PRINTINGS_COUNT, binds())
                .get_result(conn)
                .await
                .map_err(error::query)
                .context("counting the catalog's printings")?;
            let mut printings = Vec::with_capacity(usize::try_from(counted.printings)?);
            let mut shared = HashMap::new();
            let mut rows = Statement::new(ALL_PRINTINGS, binds())
                .load_stream::<EntryRow>(conn)
                .await
                .map_err(error::query)
                .context("loading the catalog's printings")?;
            while let Some(row) = rows
                .try_next()
                .await
                .map_err(error::query)
                .context("loading the catalog's printings")?
            {
                printings.push(row.into_shared(&mut shared)?);
            }
            let cards = cards.into_iter().map(CardNameRow::into_domain).collect();
            Ok(CatalogIndex::new(cards, printings))
        })
        .await
}

impl CardNameRow {
    fn into_domain(self) -> CardName {
        CardName {
            card_id: self.card_id,
            name_key: self.name_key,
            front_face_key: self.front_face_key,
        }
    }
}

/// Every game with its sections, in order.
async fn load_games(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Game>> {
    let rows: Vec<GameRow> = games::table
        .order(games::position)
        .select(GameRow::as_select())
        .load(conn)
        .await?;
    let sections: Vec<SectionRow> = game_sections::table
        .order((game_sections::game, game_sections::position))
        .select(SectionRow::as_select())
        .load(conn)
        .await?;
    let mut by_game: HashMap<String, Vec<Section>> = HashMap::new();
    for row in sections {
        by_game.entry(row.game).or_default().push(Section {
            key: row.key,
            label: row.label,
            counted: row.counted,
            // The column's check admits only slot names.
            featured_slot: row.featured_slot.as_deref().and_then(FeaturedSlot::parse),
        });
    }
    Ok(rows
        .into_iter()
        .map(|row| Game {
            sections: by_game.remove(&row.slug).unwrap_or_default(),
            slug: row.slug,
            name: row.name,
            colors: row.colors,
        })
        .collect())
}

/// Upserts a batch's cards, a column per array: a statement of eight binds whatever the batch's
/// size, prepared once per connection, where a multi-row `VALUES` bound a parameter per column
/// and row that the server parsed and bound anew each batch (docs/benchmarks.md, "Catalog
/// import"). An array column comes as the text of its array literal ([`array_literal`]), since
/// `unnest` of a two-dimensional array would flatten it. `DO UPDATE` runs only when the file
/// says something the row does not hold: a re-import then rewrites no row and leaves no dead
/// one behind.
const UPSERT_CARDS: &str = "\
INSERT INTO catalog_cards (game, card_id, name, face_names, name_key, front_face_key, type_line,
                           color_identity)
SELECT $1, k.card_id, k.name, k.face_names::text[], k.name_key, k.front_face_key, k.type_line,
       k.color_identity::text[]
FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
    AS k(card_id, name, face_names, name_key, front_face_key, type_line, color_identity)
ON CONFLICT (game, card_id) DO UPDATE SET name = excluded.name,
    face_names = excluded.face_names, name_key = excluded.name_key,
    front_face_key = excluded.front_face_key, type_line = excluded.type_line,
    color_identity = excluded.color_identity
WHERE (catalog_cards.name, catalog_cards.face_names, catalog_cards.name_key,
       catalog_cards.front_face_key, catalog_cards.type_line, catalog_cards.color_identity)
    IS DISTINCT FROM (excluded.name, excluded.face_names, excluded.name_key,
                      excluded.front_face_key, excluded.type_line, excluded.color_identity)";

/// Upserts a batch's printings, a column per array, as [`UPSERT_CARDS`] does its cards; the
/// day comes as `YYYY-MM-DD` and the legalities as JSON text.
const UPSERT_PRINTINGS: &str = "\
INSERT INTO catalog_printings (game, variant_id, card_id, name, set, collector_number, type_line,
                               image_url, colors, catalog_a_id, catalog_b_id, catalog_c_id, lang,
                               released_at, preference, legalities)
SELECT $1, k.variant_id, k.card_id, k.name, k.set, k.collector_number, k.type_line, k.image_url,
       k.colors::text[], k.catalog_a_id, k.catalog_b_id, k.catalog_c_id, k.lang,
       k.released_at::date, k.preference::smallint, k.legalities::jsonb
FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
            $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
            $15::int8[], $16::text[])
    AS k(variant_id, card_id, name, set, collector_number, type_line, image_url, colors,
         catalog_a_id, catalog_b_id, catalog_c_id, lang, released_at, preference, legalities)
ON CONFLICT (game, variant_id) DO UPDATE SET card_id = excluded.card_id, name = excluded.name,
    set = excluded.set, collector_number = excluded.collector_number,
    type_line = excluded.type_line, image_url = excluded.image_url, colors = excluded.colors,
    catalog_a_id = excluded.catalog_a_id, catalog_b_id = excluded.catalog_b_id,
    catalog_c_id = excluded.catalog_c_id, lang = excluded.lang,
    released_at = excluded.released_at, preference = excluded.preference,
    legalities = excluded.legalities
WHERE (catalog_printings.card_id, catalog_printings.name, catalog_printings.set,
       catalog_printings.collector_number, catalog_printings.type_line,
       catalog_printings.image_url, catalog_printings.colors, catalog_printings.catalog_a_id,
       catalog_printings.catalog_b_id, catalog_printings.catalog_c_id, catalog_printings.lang,
       catalog_printings.released_at, catalog_printings.preference, catalog_printings.legalities)
    IS DISTINCT FROM (excluded.card_id, excluded.name, excluded.set, excluded.collector_number,
                      excluded.type_line, excluded.image_url, excluded.colors,
                      excluded.catalog_a_id, excluded.catalog_b_id, excluded.catalog_c_id,
                      excluded.lang, excluded.released_at, excluded.preference,
                      excluded.legalities)";

/// The text of a `text[]` literal holding `items`: each element quoted, `"` and `\` escaped,
/// so that any text (an empty one, `NULL`, a comma) reads back as itself.
fn array_literal(items: &[String]) -> String {
    let mut literal = String::from("{");
    for (position, item) in items.iter().enumerate() {
        if position > 0 {
            literal.push(',');
        }
        literal.push('"');
        for character in item.chars() {
            if matches!(character, '"' | '\\') {
                literal.push('\\');
            }
            literal.push(character);
        }
        literal.push('"');
    }
    literal.push('}');
    literal
}

/// The binds of [`UPSERT_CARDS`], one element per card.
fn card_binds(game: &str, cards: &[&CatalogEntry]) -> Vec<Bind> {
    let column = |value: fn(&CatalogEntry) -> String| cards.iter().map(|e| value(e)).collect();
    vec![
        Bind::Text(game.to_owned()),
        Bind::Uuids(cards.iter().map(|entry| entry.printing.card_id).collect()),
        Bind::Texts(column(|entry| entry.printing.name.clone())),
        Bind::Texts(column(|entry| array_literal(&entry.face_names))),
        Bind::Texts(column(|entry| name_key(&entry.printing.name))),
        Bind::Texts(column(|entry| name_key(entry.front_face_name()))),
        Bind::Texts(column(|entry| entry.printing.type_line.clone())),
        Bind::Texts(column(|entry| array_literal(&entry.color_identity))),
    ]
}

/// The binds of [`UPSERT_PRINTINGS`], one element per printing.
fn printing_binds(game: &str, printings: &[&CatalogEntry]) -> anyhow::Result<Vec<Bind>> {
    let texts = |value: fn(&CatalogEntry) -> String| printings.iter().map(|e| value(e)).collect();
    let optional =
        |value: fn(&CatalogEntry) -> Option<String>| printings.iter().map(|e| value(e)).collect();
    let legalities = printings
        .iter()
        .map(|entry| serde_json::to_string(&*entry.legalities))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(vec![
        Bind::Text(game.to_owned()),
        Bind::Uuids(printings.iter().map(|e| e.printing.variant_id).collect()),
        Bind::Uuids(printings.iter().map(|e| e.printing.card_id).collect()),
        Bind::Texts(texts(|entry| entry.printing.name.clone())),
        Bind::Texts(texts(|entry| entry.printing.set.clone())),
        Bind::Texts(texts(|entry| entry.printing.collector_number.clone())),
        Bind::Texts(texts(|entry| entry.printing.type_line.clone())),
        Bind::OptionalTexts(optional(|entry| entry.printing.image_url.clone())),
        Bind::Texts(texts(|entry| array_literal(&entry.printing.colors))),
        Bind::OptionalTexts(optional(|entry| entry.printing.catalog_a_id.clone())),
        Bind::OptionalTexts(optional(|entry| entry.printing.catalog_b_id.clone())),
        Bind::OptionalTexts(optional(|entry| entry.printing.catalog_c_id.clone())),
        Bind::Texts(texts(|entry| entry.lang.clone())),
        Bind::OptionalTexts(optional(|entry| {
            entry.released_at.map(|day| day.to_string())
        })),
        Bind::OptionalInts(
            printings
                .iter()
                .map(|entry| Some(i64::from(entry.preference.as_i16())))
                .collect(),
        ),
        Bind::Texts(legalities),
    ])
}

async fn store_chunk(
    conn: &mut AsyncPgConnection,
    game: &str,
    entries: &[CatalogEntry],
) -> anyhow::Result<()> {
    // One row per card and per printing: ON CONFLICT DO UPDATE may not touch a row twice.
    let mut cards: BTreeMap<Uuid, &CatalogEntry> = BTreeMap::new();
    let mut printings: BTreeMap<Uuid, &CatalogEntry> = BTreeMap::new();
    for entry in entries {
        cards.insert(entry.printing.card_id, entry);
        printings.insert(entry.printing.variant_id, entry);
    }
    let cards: Vec<&CatalogEntry> = cards.into_values().collect();
    Statement::new(UPSERT_CARDS, card_binds(game, &cards))
        .execute(conn)
        .await
        .map_err(error::query)
        .context("upserting catalog cards")?;
    let printings: Vec<&CatalogEntry> = printings.into_values().collect();
    Statement::new(UPSERT_PRINTINGS, printing_binds(game, &printings)?)
        .execute(conn)
        .await
        .map_err(error::query)
        .context("upserting catalog printings")?;
    facts::store_text_rules(conn, game, &cards).await
}

/// Every printing matching any key, as one statement: an `Append` of index lookups, one per
/// kind, each reading its rows directly (a printing found by two keys comes twice: the caller
/// keeps one).
const FIND_PRINTINGS: &str = concat!(
    "SELECT ",
    entry_columns!(),
    "
FROM (
    SELECT v.* FROM unnest($2::uuid[]) AS k(variant_id)
        JOIN catalog_printings v ON v.game = $1 AND v.variant_id = k.variant_id
    UNION ALL SELECT * FROM catalog_printings WHERE game = $1 AND catalog_a_id = ANY($3::text[])
    UNION ALL SELECT * FROM catalog_printings WHERE game = $1 AND catalog_b_id = ANY($4::text[])
    UNION ALL SELECT * FROM catalog_printings WHERE game = $1 AND catalog_c_id = ANY($5::text[])
    UNION ALL SELECT s.* FROM unnest($6::text[], $7::text[]) AS k(set, number)
        JOIN catalog_printings s ON s.game = $1 AND s.set = k.set AND s.collector_number = k.number
) p
JOIN catalog_cards c ON c.game = p.game AND c.card_id = p.card_id"
);

/// The cards whose name or front face is one of the keys: a `BitmapOr` of the two indexes.
const CARDS_NAMED: &str = "\
SELECT card_id, name_key, front_face_key FROM catalog_cards
WHERE game = $1 AND (name_key = ANY($2::text[]) OR front_face_key = ANY($2::text[]))";

/// The preferred printing of each pick: one ordered index probe per pick, stopping at the first.
const PREFERRED_PRINTINGS: &str = concat!(
    "SELECT k.ord, ",
    entry_columns!(),
    "
FROM unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS k(card_id, set, ord)
CROSS JOIN LATERAL (
    SELECT * FROM catalog_printings q
    WHERE q.game = $1 AND q.card_id = k.card_id AND (k.set IS NULL OR q.set = k.set)
    ORDER BY q.preference, q.released_at DESC NULLS LAST, q.variant_id
    LIMIT 1
) p
JOIN catalog_cards c ON c.game = p.game AND c.card_id = p.card_id"
);

/// The statements of a resolution, with their parameter types, for the PostgreSQL test that
/// pins their plans.
pub const RESOLUTION_STATEMENTS: [(&str, &str, &str); 3] = [
    (
        "find_printings",
        "text, uuid[], text[], text[], text[], text[], text[]",
        FIND_PRINTINGS,
    ),
    ("cards_named", "text, text[]", CARDS_NAMED),
    (
        "preferred_printings",
        "text, uuid[], text[]",
        PREFERRED_PRINTINGS,
    ),
];

/// Where the card lookups of a resolution are answered.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardLookups {
    /// From each game's index held in process while the change listener is connected, else by
    /// the database: what the service runs.
    Resident,
    /// Always by the database's indexes.
    InDatabase,
}

pub(crate) struct PgCatalog {
    pool: Pool,
    /// Games, sections and formats, and each game's card index (see `cache.rs`).
    cache: Arc<cache::CatalogCache>,
    lookups: CardLookups,
}

impl PgCatalog {
    pub(crate) fn new(pool: Pool, listen: Listener) -> Self {
        Self {
            cache: cache::CatalogCache::new(pool.clone(), listen),
            pool,
            lookups: CardLookups::Resident,
        }
    }

    /// A catalog read from a streaming replica, where LISTEN is refused and no notification
    /// arrives: nothing is held in process (a copy could not be told when to go), so every
    /// read, card lookups included, is answered by the replica's tables and indexes.
    pub(crate) fn on_replica(pool: Pool) -> Self {
        Self {
            cache: cache::CatalogCache::never_listening(pool.clone()),
            pool,
            lookups: CardLookups::InDatabase,
        }
    }

    /// A catalog answering as `lookups` says; with [`CardLookups::Resident`], once its change
    /// listener is connected, so that every lookup is answered in process from then on.
    pub(crate) async fn with_lookups(
        pool: Pool,
        listen: Listener,
        lookups: CardLookups,
    ) -> anyhow::Result<Self> {
        let catalog = Self {
            lookups,
            ..Self::new(pool, listen)
        };
        if lookups == CardLookups::Resident {
            catalog.cache.wait_until_listening().await?;
        }
        Ok(catalog)
    }

    /// The game's card index, when lookups are answered in process.
    async fn index(&self, game: &str) -> anyhow::Result<Option<Arc<CatalogIndex>>> {
        match self.lookups {
            CardLookups::Resident => self.cache.index(game).await,
            CardLookups::InDatabase => Ok(None),
        }
    }
}

#[async_trait]
impl CatalogRepository for PgCatalog {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn games(&self) -> anyhow::Result<Vec<Game>> {
        let snapshot = self.cache.snapshot().await?;
        Ok(snapshot
            .games
            .iter()
            .map(|game| Game::clone(game))
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = slug))]
    async fn game(&self, slug: &str) -> anyhow::Result<Option<Arc<Game>>> {
        let snapshot = self.cache.snapshot().await?;
        Ok(snapshot
            .games
            .iter()
            .find(|game| game.slug == slug)
            .cloned())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn formats(&self, game: &str) -> anyhow::Result<Arc<[Format]>> {
        let snapshot = self.cache.snapshot().await?;
        Ok(snapshot.formats.get(game).cloned().unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, entries = entries.len()))]
    async fn store_entries(&self, game: &str, entries: &[CatalogEntry]) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            for chunk in entries.chunks(ROWS_PER_STATEMENT) {
                store_chunk(conn, game, chunk).await?;
            }
            Ok(())
        })
        .await?;
        self.cache.forget();
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, entries = entries.len()))]
    async fn record_imported_legalities(
        &self,
        game: &str,
        entries: &[CatalogEntry],
        imported_at: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        let speaking = CatalogEntry::speaking_for_legality(entries, imported_at);
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            for chunk in speaking.chunks(ROWS_PER_STATEMENT) {
                facts::record_imported_legalities(conn, game, chunk, imported_at).await?;
            }
            Ok(())
        })
        .await?;
        self.cache.forget();
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, cards = card_ids.len()))]
    async fn card_facts(
        &self,
        game: &str,
        card_ids: &[Uuid],
    ) -> anyhow::Result<Vec<Arc<CardFacts>>> {
        if self.lookups == CardLookups::Resident
            && let Some(facts) = self.cache.facts(game).await?
        {
            return Ok(card_ids
                .iter()
                .filter_map(|id| facts.get(id).cloned())
                .collect());
        }
        let statement = Statement::new(
            facts::SOME_FACTS,
            vec![Bind::Text(game.to_owned()), Bind::Uuids(card_ids.to_vec())],
        );
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<facts::FactsRow> = statement
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("loading card facts")?;
        let mut shared = facts::SharedHistories::new();
        rows.into_iter()
            .map(|row| row.into_domain(&mut shared).map(Arc::new))
            .collect()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, format = format))]
    async fn record_legality(
        &self,
        game: &str,
        card_id: Uuid,
        format: &str,
        status: Legality,
        from: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        Statement::new(
            facts::RECORD_LEGALITY,
            vec![
                Bind::Text(game.to_owned()),
                Bind::Uuid(card_id),
                Bind::Text(format.to_owned()),
                Bind::Time(from),
                Bind::Text(status.as_str().to_owned()),
            ],
        )
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("recording a legality")?;
        drop(conn);
        self.cache.forget();
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_import(&self, event: &EventRecord) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        crate::events::insert(&mut conn, event)
            .await
            .map_err(error::query)
            .context("recording a catalog import")
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn counts(&self, game: &str) -> anyhow::Result<CatalogCounts> {
        let mut conn = checkout(&self.pool).await?;
        let cards: i64 = catalog_cards::table
            .filter(catalog_cards::game.eq(game))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("counting cards")?;
        let printings: i64 = catalog_printings::table
            .filter(catalog_printings::game.eq(game))
            .count()
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("counting printings")?;
        Ok(CatalogCounts {
            cards: u64::try_from(cards)?,
            printings: u64::try_from(printings)?,
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn find_printings(
        &self,
        game: &str,
        keys: &PrintingKeys,
    ) -> anyhow::Result<Vec<CatalogEntry>> {
        if let Some(index) = self.index(game).await? {
            return Ok(index.find_printings(keys));
        }
        let (sets, numbers): (Vec<String>, Vec<String>) = keys.set_numbers.iter().cloned().unzip();
        let statement = Statement::new(
            FIND_PRINTINGS,
            vec![
                Bind::Text(game.to_owned()),
                Bind::Uuids(keys.variant_ids.clone()),
                Bind::Texts(keys.catalog_a_ids.clone()),
                Bind::Texts(keys.catalog_b_ids.clone()),
                Bind::Texts(keys.catalog_c_ids.clone()),
                Bind::Texts(sets),
                Bind::Texts(numbers),
            ],
        );
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EntryRow> = statement
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("finding printings")?;
        drop(conn);
        let mut seen = HashSet::with_capacity(rows.len());
        rows.into_iter()
            .filter(|row| seen.insert(row.variant_id))
            .map(EntryRow::into_domain)
            .collect()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn cards_named(&self, game: &str, name_keys: &[String]) -> anyhow::Result<Vec<CardName>> {
        if let Some(index) = self.index(game).await? {
            return Ok(index.cards_named(name_keys));
        }
        let statement = Statement::new(
            CARDS_NAMED,
            vec![Bind::Text(game.to_owned()), Bind::Texts(name_keys.to_vec())],
        );
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<CardNameRow> = statement
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("finding cards by name")?;
        Ok(rows.into_iter().map(CardNameRow::into_domain).collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn preferred_printings(
        &self,
        game: &str,
        picks: &[CardPick],
    ) -> anyhow::Result<Vec<(CardPick, CatalogEntry)>> {
        if let Some(index) = self.index(game).await? {
            return Ok(index.preferred_printings(picks));
        }
        let statement = Statement::new(
            PREFERRED_PRINTINGS,
            vec![
                Bind::Text(game.to_owned()),
                Bind::Uuids(picks.iter().map(|pick| pick.card_id).collect()),
                Bind::OptionalTexts(picks.iter().map(|pick| pick.set.clone()).collect()),
            ],
        );
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<PickedRow> = statement
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("finding preferred printings")?;
        drop(conn);
        rows.into_iter()
            .map(|row| {
                // ORDINALITY counts from 1.
                let pick = usize::try_from(row.ord - 1)
                    .ok()
                    .and_then(|index| picks.get(index))
                    .with_context(|| format!("ordinal {} out of range", row.ord))?;
                Ok((pick.clone(), row.entry.into_domain()?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::array_literal;

    #[test]
    fn an_array_literal_quotes_every_element() {
        let items = |texts: &[&str]| {
            texts
                .iter()
                .map(|text| (*text).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(array_literal(&[]), "{}");
        assert_eq!(array_literal(&items(&["W", "U"])), r#"{"W","U"}"#);
        assert_eq!(
            array_literal(&items(&["", "NULL", "a, b", r#"say "hi""#, r"back\slash"])),
            r#"{"","NULL","a, b","say \"hi\"","back\\slash"}"#
        );
    }
}
