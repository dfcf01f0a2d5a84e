//! A deck's writes: a create in one statement ([`insert_deck`]), and a save that reads the
//! deck, then rewrites only the columns that changed and adds its history record in one
//! statement that applies only if no other save came between (else it saves again under the
//! deck's row lock, [`save_locked`]). An unchanged card list keeps its stored (TOASTed) value,
//! and the history record then names the record holding that list (`cards_from`) instead of
//! storing it again.

use deckhand_domain::decks::events as deck_events;
use deckhand_domain::decks::ports::{NewDeck, Reviser, Revision, RevisionRefused};
use deckhand_domain::decks::{Deck, DeckContent, DeckId, DeckSummary, HistoryType, Provenance};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Int4, Json as SqlJson, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::rows::{DECK_LOCK, DECK_TO_SAVE, DeckRow, DeckToSaveRow, INSERTED_SELECT, SAVE_LOCK};
use crate::events::{EventColumns, numbered_insert_ctes};
use crate::pool::PipelinedTransaction;
use crate::schema::{deck_versions, decks};
use crate::statement::{Bind, Statement};
use crate::stored::{
    Json, StoredCard, StoredChoice, StoredContent, StoredSummary, stored_cards, stored_choices,
};

fn restored_from(history_type: HistoryType) -> Option<i32> {
    match history_type {
        HistoryType::Rollback { restored_from } => Some(restored_from),
        HistoryType::Create | HistoryType::Update => None,
    }
}

/// The deck a save starts from, by `sql`: [`DECK_TO_SAVE`] or [`DECK_LOCK`].
async fn read_to_save(
    mut conn: &AsyncPgConnection,
    sql: &str,
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

/// The columns of a deck's content, summary and provenance, each once with the type it is
/// written as: a new deck writes them all ([`DeckColumns`]), a save those that changed
/// ([`DeckChangeset`], where `None` leaves a column alone and `Some(None)` writes NULL).
macro_rules! content_columns {
    ($($column:ident: $ty:ty,)+) => {
        /// The columns a new deck's content, summary and provenance map to.
        #[derive(Insertable)]
        #[diesel(table_name = decks)]
        struct DeckColumns<'a> {
            $($column: $ty,)+
        }

        /// What a save writes: the version and time always, any other column only when it
        /// changed. Unchanged card lists are not rewritten, so their stored value (and its
        /// TOAST) stays as it is.
        #[derive(AsChangeset)]
        #[diesel(table_name = decks)]
        struct DeckChangeset<'a> {
            $($column: Option<$ty>,)+
            is_archived: Option<bool>,
            version: i32,
            updated_at: OffsetDateTime,
        }

        impl<'a> DeckChangeset<'a> {
            fn new(current: &Deck, revision: &'a Revision) -> Self {
                let old = DeckColumns::new(&current.content, &current.facts.summary, &current.provenance);
                let new =
                    DeckColumns::new(&revision.content, &revision.summary, &revision.provenance);
                Self {
                    $($column: (old.$column != new.$column).then_some(new.$column),)+
                    is_archived: (current.is_archived != revision.is_archived)
                        .then_some(revision.is_archived),
                    version: current.version + 1,
                    updated_at: revision.at,
                }
            }
        }
    };
}

content_columns! {
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

/// Inserts `deck` with its counters, its first history record, its event and (for a fork)
/// its source's fork count, and reads it back: one statement, so one round trip, and the
/// event counter's row lock is held only while PostgreSQL runs it and commits (it was held
/// over two more round trips of a transaction). The read-back joins the rows the statement
/// returns, since a statement does not see its own inserts. Parallel forks of one deck queue
/// on its counter row and all count.
pub(super) async fn insert_deck(
    conn: &mut AsyncPgConnection,
    deck: &NewDeck,
) -> QueryResult<DeckRow> {
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
        out.push_sql(&INSERTED_SELECT);
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

/// How many times a deck save is tried when the server cancels it to break a deadlock.
pub(super) const SAVE_TRIES: u32 = 3;

/// Saves the revision `reviser` makes of deck `id`, optimistically first: most saves meet no
/// other save of their deck, so the deck is read without a lock or a transaction and the
/// writes are one statement ([`SaveStatement`]) that applies only while the deck is still at
/// the version read and not locked by anyone. That is two statements and two round trips.
///
/// When another save came between, or holds the deck, the save is decided again on the deck as
/// it is now, in a transaction that holds its row lock ([`save_locked`]), so nothing can come
/// between again and no save is lost.
pub(super) async fn save_revision(
    conn: Object<AsyncPgConnection>,
    id: Uuid,
    reviser: &Reviser,
) -> Result<Deck, ReviseFailure> {
    let read = read_to_save(&conn, &DECK_TO_SAVE, id).await?;
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
        read_to_save(conn, &DECK_LOCK, id)
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
        let record = HistoryRecord::revised(
            self.current.facts.id,
            changes.version,
            &self.revision,
            cards_from,
        );
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
        self.revision.applied_to(self.current)
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
        out.push_sql(" ");
        out.push_sql(SAVE_LOCK);
        out.push_sql(" SKIP LOCKED), saved AS (UPDATE decks SET ");
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
pub(super) enum ReviseFailure {
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
