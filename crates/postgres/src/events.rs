//! The event log over PostgreSQL (docs/events.md).
//!
//! **Numbering.** An event is written by one statement ([`numbered_insert_ctes`]) that bumps the
//! single counter row of `event_log` and inserts the event under the new value. The counter's
//! row lock is held until the writing transaction ends, so the transaction holding sequence
//! `n` has committed (and is visible) before any other can take `n + 1`: sequences become
//! visible in ascending order, with no gap that could fill in later behind a reader's cursor.
//! A plain `bigserial` would not do: its values are taken before commit, so a transaction
//! that took 7 can commit after one that took 8 was read. The lock is taken by the last
//! statement of each writing transaction, so it is held for the commit alone.
//!
//! **Waking.** A trigger notifies `deckhand_events` with the sequence, game and type when an
//! event commits; every instance listens ([`EventNews`]), keeps the latest announcements, and
//! wakes its long-polling readers with them (the domain's `WaitRoom` decides who reads what).

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::events::ports::EventRepository;
use deckhand_domain::events::{
    Actor, Announcement, BATCH_FRESH_FOR, Event, EventId, EventRecord, EventType, FEED_SCAN_WINDOW,
    FeedQuery, FeedScan, JudgedEvent, News, ReadableEvent, SubjectAccess, SubjectKind,
};
use deckhand_domain::identity::UserId;
use deckhand_domain::readable::{Reach, Visibility};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Int8, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension as _, QueryResult, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use tokio::sync::watch;
use tokio::time::Instant;
use uuid::Uuid;

use crate::error;
use crate::listener::{self, Invalidate, Listener};
use crate::pool::{Pool, checkout};
use crate::rules::{Conditions, readable_sql};
use crate::statement::{Bind, Statement};

/// An event's columns, owned, to bind into the statement that writes it.
pub(crate) struct EventColumns {
    id: Uuid,
    event_type: &'static str,
    subject_kind: &'static str,
    game: String,
    occurred_at: OffsetDateTime,
    subject_id: Option<Uuid>,
    actor_user_id: Option<Uuid>,
    actor_partner: Option<String>,
    data: serde_json::Value,
}

impl From<&EventRecord> for EventColumns {
    fn from(event: &EventRecord) -> Self {
        Self {
            id: event.id.0,
            event_type: event.event_type.as_str(),
            subject_kind: event.subject_kind().as_str(),
            game: event.game.clone(),
            occurred_at: event.occurred_at,
            subject_id: event.subject_id,
            actor_user_id: event.actor.user_id.map(|user| user.0),
            actor_partner: event.actor.partner.clone(),
            data: event.data.clone(),
        }
    }
}

/// Pushes `numbered AS (...), written_event AS (...)`: the CTEs that number and insert `event`,
/// for a statement that starts `WITH` and continues with `, ` or its main query. With
/// `only_if`, the name of a CTE of the same statement, the event is written only when that
/// CTE returned a row (the change happened).
pub(crate) fn numbered_insert_ctes<'b>(
    event: &'b EventColumns,
    only_if: Option<&str>,
    mut out: AstPass<'_, 'b, Pg>,
) -> QueryResult<()> {
    out.push_sql("numbered AS (UPDATE event_log SET last_sequence = last_sequence + 1");
    if let Some(cte) = only_if {
        out.push_sql(" WHERE EXISTS (SELECT 1 FROM ");
        out.push_sql(cte);
        out.push_sql(")");
    }
    out.push_sql(
        " RETURNING last_sequence), written_event AS (INSERT INTO events (sequence, id, type, \
         subject_kind, game, occurred_at, subject_id, actor_user_id, actor_partner, data) \
         SELECT last_sequence, ",
    );
    out.push_bind_param::<SqlUuid, _>(&event.id)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, _>(event.event_type)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, _>(event.subject_kind)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, _>(&event.game)?;
    out.push_sql(", ");
    out.push_bind_param::<Timestamptz, _>(&event.occurred_at)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<SqlUuid>, _>(&event.subject_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<SqlUuid>, _>(&event.actor_user_id)?;
    out.push_sql(", ");
    out.push_bind_param::<Nullable<Text>, _>(&event.actor_partner)?;
    out.push_sql(", ");
    out.push_bind_param::<Jsonb, _>(&event.data)?;
    out.push_sql(" FROM numbered)");
    Ok(())
}

/// `query` (an INSERT, UPDATE or DELETE) with `event` written by the same statement: a write
/// and its event for no extra round trip.
pub(crate) struct WithEvent<Q> {
    event: EventColumns,
    query: Q,
}

impl<Q> WithEvent<Q> {
    pub(crate) fn new(event: &EventRecord, query: Q) -> Self {
        Self {
            event: event.into(),
            query,
        }
    }
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for WithEvent<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("WITH ");
        numbered_insert_ctes(&self.event, None, out.reborrow())?;
        out.push_sql(" ");
        self.query.walk_ast(out)
    }
}

impl<Q> QueryId for WithEvent<Q> {
    type QueryId = ();
    // Cached by its SQL text.
    const HAS_STATIC_QUERY_ID: bool = false;
}

/// Writes `event` as the next in commit order: one statement, best the last of its
/// transaction (the counter's row lock is held from here to the commit).
pub(crate) async fn insert(conn: &mut AsyncPgConnection, event: &EventRecord) -> QueryResult<()> {
    WithEvent::new(event, diesel::dsl::sql_query("SELECT 1"))
        .execute(conn)
        .await
        .map(drop)
}

/// One row of a feed scan: the scan's figures, and a readable event when there is one.
#[derive(Debug, QueryableByName)]
struct ScanRow {
    #[diesel(sql_type = Int8)]
    last_sequence: i64,
    #[diesel(sql_type = Int8)]
    pruned_through: i64,
    #[diesel(sql_type = Int8)]
    scanned: i64,
    #[diesel(sql_type = Nullable<Int8>)]
    scanned_through: Option<i64>,
    /// The event, when the scan found one (its columns are all NULL otherwise).
    #[diesel(embed)]
    event: Option<EventRow>,
    #[diesel(embed)]
    named: MaybeAccessRow,
}

/// The read state of a deck or guide, when the row joined one.
#[derive(Debug, QueryableByName)]
struct MaybeAccessRow {
    #[diesel(sql_type = Nullable<Text>)]
    named_visibility: Option<String>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    named_owner: Option<Uuid>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Bool>)]
    named_archived: Option<bool>,
}

impl MaybeAccessRow {
    fn into_access(self) -> anyhow::Result<Option<SubjectAccess>> {
        access(self.named_visibility, self.named_owner, self.named_archived)
    }
}

/// A read state from its nullable columns: `None` when no row was joined.
fn access(
    visibility: Option<String>,
    owner: Option<Uuid>,
    is_archived: Option<bool>,
) -> anyhow::Result<Option<SubjectAccess>> {
    let (Some(visibility), Some(owner), Some(is_archived)) = (visibility, owner, is_archived)
    else {
        return Ok(None);
    };
    let visibility = Visibility::from_stored(&visibility)
        .ok_or_else(|| anyhow::anyhow!("a subject has visibility {visibility:?}"))?;
    Ok(Some(SubjectAccess {
        visibility,
        owner: UserId(owner),
        is_archived,
    }))
}

/// One event after a sequence, with the read state of its subject and of the deck it names.
#[derive(Debug, QueryableByName)]
struct JudgedRow {
    #[diesel(embed)]
    event: EventRow,
    #[diesel(sql_type = Nullable<Text>)]
    subject_visibility: Option<String>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    subject_owner: Option<Uuid>,
    #[diesel(sql_type = Nullable<diesel::sql_types::Bool>)]
    subject_archived: Option<bool>,
    #[diesel(embed)]
    named: MaybeAccessRow,
}

/// A lateral join `named` of the read state of the deck that the event `event` (an alias)
/// names in its `data` (`EventRecord::named_deck`: a fork's source, a guide's deck); no row for
/// events that name none.
fn named_deck_join(event: &str) -> String {
    format!(
        " LEFT JOIN LATERAL (SELECT visibility AS named_visibility, owner_id AS named_owner, \
         is_archived AS named_archived FROM decks \
         WHERE id = coalesce({event}.data->'forked_from'->>'deck_id', {event}.data->>'deck_id')::uuid \
         OFFSET 0) named ON true"
    )
}

#[derive(Debug, QueryableByName)]
struct EventRow {
    #[diesel(sql_type = Int8)]
    sequence: i64,
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    type_: String,
    #[diesel(sql_type = Text)]
    game: String,
    #[diesel(sql_type = Timestamptz)]
    occurred_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    subject_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    actor_user_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    actor_partner: Option<String>,
    #[diesel(sql_type = Jsonb)]
    data: serde_json::Value,
}

impl EventRow {
    fn into_domain(self) -> anyhow::Result<Event> {
        let event_type = EventType::parse(&self.type_).ok_or_else(|| {
            anyhow::anyhow!("event {} has an unknown type {:?}", self.id, self.type_)
        })?;
        Ok(Event {
            sequence: self.sequence,
            record: EventRecord {
                id: EventId(self.id),
                event_type,
                game: self.game,
                occurred_at: self.occurred_at,
                subject_id: self.subject_id,
                actor: Actor {
                    user_id: self.actor_user_id.map(UserId),
                    partner: self.actor_partner,
                },
                data: self.data,
            },
        })
    }
}

const EVENT_COLUMNS: &str = "sequence, id, type AS type_, game, occurred_at, subject_id, \
                             actor_user_id, actor_partner, data";

/// The feed scan of `query` as one statement, in one snapshot: the window of events looked at
/// (its size and last sequence, read from the `(game, sequence)` index alone), the readable
/// ones in it (judged by the read rule of `rules`, on the subjects as they are now; the walk
/// stops at the `limit + 1`st, so a page of readable events probes only its own subjects), and
/// the log's figures. Without a cursor the window starts at the oldest retained event.
///
/// The readable events are walked from the window's events as a subquery capped at the
/// window's size, not from the sequence range alone: its row estimate is then the window's at
/// any size of the log, so PostgreSQL's plan cache settles on one generic plan for the
/// statement. From the range alone the estimate grew with the log, and at 1,000,000 events
/// every request was planned anew (docs/benchmarks.md, "Ten times the data"). Each event's
/// subject is looked up in its own table only: in a lateral subquery kept apart (`OFFSET 0`),
/// the subject kind is a one-time filter before the probe, where a join condition was checked
/// after it, and every deck event also probed the guides' key.
fn scan_statement(query: &FeedQuery) -> Statement {
    let mut conditions = Conditions::default();
    let game = conditions.param(Bind::Text(query.game.clone()));
    let after = match query.after {
        Some(cursor) => conditions.param(Bind::Int(cursor.sequence)),
        None => "(SELECT pruned_through FROM event_log)".to_owned(),
    };
    let types = match query.types.named() {
        Some(types) => {
            let names = types.iter().map(|kind| kind.as_str().to_owned()).collect();
            let placeholder = conditions.param(Bind::Texts(names));
            format!(" AND e.type = ANY({placeholder})")
        }
        None => " AND e.type <> 'webhook.ping'".to_owned(),
    };
    let reader = query.reader;
    let viewer = reader
        .viewer
        .map(|viewer| conditions.param(Bind::Uuid(viewer.0)));
    let mut readable = vec!["e.subject_kind = 'catalog'".to_owned()];
    let mut subjects = String::new();
    for (kind, alias, wanted) in [
        (SubjectKind::Deck, "d", reader.deck_events),
        (SubjectKind::SideboardGuide, "g", reader.guide_events),
    ] {
        let Some(table) = subject_table(kind).filter(|_| wanted) else {
            continue;
        };
        let kind = kind.as_str();
        subjects.push_str(&format!(
            " LEFT JOIN LATERAL (SELECT * FROM {table} {alias} WHERE e.subject_kind = '{kind}' \
             AND {alias}.id = e.subject_id OFFSET 0) {alias} ON true"
        ));
        let rule = readable_sql(alias, Reach::ById, viewer.as_deref());
        readable.push(format!(
            "(e.subject_kind = '{kind}' AND {alias}.id IS NOT NULL AND {rule})"
        ));
    }
    if let Some(owner) = reader.collection_viewer {
        // A collection has no row of its own to judge: its read state is private to the owner
        // its id names (`SubjectAccess::collection`), judged by the same read rule.
        let owner = conditions.param(Bind::Uuid(owner.0));
        subjects.push_str(COLLECTION_SUBJECT);
        let rule = readable_sql("c", Reach::ById, Some(&owner));
        readable.push(format!(
            "(e.subject_kind = 'collection' AND c.owner_id IS NOT NULL AND {rule})"
        ));
    }
    let limit = conditions.param(Bind::Int(i64::from(query.limit) + 1));
    conditions.statement(format!(
        "WITH scan_window AS MATERIALIZED (SELECT count(*) AS scanned, max(w.sequence) AS \
         scanned_through FROM (SELECT e.sequence FROM events e WHERE e.game = {game} \
         AND e.sequence > {after} ORDER BY e.sequence LIMIT {FEED_SCAN_WINDOW}) w), \
         readable AS (SELECT e.* FROM (SELECT * FROM events e WHERE e.game = {game} \
         AND e.sequence > {after} AND e.sequence <= (SELECT scanned_through FROM scan_window) \
         ORDER BY e.sequence LIMIT {FEED_SCAN_WINDOW}) e{subjects} \
         WHERE ({}){types} ORDER BY e.sequence LIMIT {limit}) \
         SELECT l.last_sequence, l.pruned_through, w.scanned, w.scanned_through, \
         r.sequence, r.id, r.type AS type_, r.game, r.occurred_at, r.subject_id, \
         r.actor_user_id, r.actor_partner, r.data, named.* \
         FROM event_log l CROSS JOIN scan_window w LEFT JOIN readable r ON true{named} \
         ORDER BY r.sequence",
        readable.join(" OR "),
        named = named_deck_join("r"),
    ))
}

/// The read state of a collection event's subject `c`, as `SubjectAccess::collection` states
/// it: private to the user its id names.
const COLLECTION_SUBJECT: &str = " LEFT JOIN LATERAL (SELECT 'private'::text AS visibility, \
     e.subject_id AS owner_id, false AS is_archived WHERE e.subject_kind = 'collection') c ON true";

/// The table of the subjects of `kind`; the catalog and collections have none.
fn subject_table(kind: SubjectKind) -> Option<&'static str> {
    match kind {
        SubjectKind::Deck => Some("decks"),
        SubjectKind::SideboardGuide => Some("sideboard_guides"),
        SubjectKind::Catalog | SubjectKind::Collection => None,
    }
}

/// How many announcements an instance keeps: a held wait whose cursor is further behind the
/// news reads the feed itself.
const KEPT_ANNOUNCEMENTS: usize = 4096;

/// What this instance has heard: the newest sequence, the latest announcements (ascending,
/// without a gap), and a count of the times its listener (re)connected or dropped, after which
/// nothing it heard before can be trusted.
#[derive(Debug, Clone, Default)]
struct Heard {
    /// The newest sequence heard of; the log's head once `head_known`.
    sequence: i64,
    /// Each announcement with when it was heard.
    recent: VecDeque<(Announcement, Instant)>,
    resets: u64,
    /// Whether the listener is connected now.
    listening: bool,
    /// Whether `sequence` is the log's head: read once after the listener connects
    /// ([`EventNews::know_head`]), then moved by every announcement. Until then, a reader's
    /// cursor below the head could not be told from one at it.
    head_known: bool,
}

impl Heard {
    /// Every announcement after `sequence`, when all of them are kept; those heard longer ago
    /// than [`BATCH_FRESH_FOR`] without their judged event, so that no wait lists an event by
    /// a judgment older than that (it reads the event instead).
    fn after(&self, sequence: i64) -> Option<Vec<Announcement>> {
        let fresh_since = Instant::now().checked_sub(Duration::try_from(BATCH_FRESH_FOR).ok()?);
        let heard: Vec<Announcement> = self
            .recent
            .iter()
            .filter(|(news, _)| news.sequence > sequence)
            .map(|(news, at)| {
                let mut news = news.clone();
                if fresh_since.is_none_or(|since| *at < since) {
                    news.judged = None;
                }
                news
            })
            .collect();
        let whole = heard
            .iter()
            .map(|news| news.sequence)
            .eq(sequence + 1..=self.sequence);
        whole.then_some(heard)
    }

    fn hear(&mut self, news: Announcement) -> bool {
        if news.sequence <= self.sequence {
            return false;
        }
        if self
            .recent
            .back()
            .is_some_and(|(last, _)| last.sequence + 1 != news.sequence)
        {
            // A notification went missing: what is kept no longer runs without a gap.
            self.recent.clear();
        }
        if self.recent.len() == KEPT_ANNOUNCEMENTS {
            self.recent.pop_front();
        }
        self.sequence = news.sequence;
        self.recent.push_back((news, Instant::now()));
        true
    }
}

/// `<sequence> <game> <type> [<json>]`, as the `events_notify` trigger sends it after the
/// schema (which [`EventNews`] checks first): the JSON is the
/// event with the read state of its subject and of the deck it names, left out when it would
/// not fit a notification.
fn announcement(payload: &str) -> Option<Announcement> {
    let mut parts = payload.splitn(4, ' ');
    let sequence = parts.next()?.parse().ok()?;
    let game = parts.next()?.to_owned();
    let event_type = EventType::parse(parts.next()?)?;
    let judged = match parts.next() {
        None => None,
        // A payload the trigger wrote but this instance cannot read is an error of ours: read
        // the event instead, and say so.
        Some(json) => match announced_event(sequence, &game, event_type, json) {
            Ok(judged) => Some(judged),
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), sequence, "an event announcement could not be read");
                None
            }
        },
    };
    Some(Announcement {
        sequence,
        game,
        event_type,
        judged,
    })
}

/// The event and read states of an announcement's JSON.
fn announced_event(
    sequence: i64,
    game: &str,
    event_type: EventType,
    json: &str,
) -> anyhow::Result<JudgedEvent> {
    #[derive(serde::Deserialize)]
    struct Announced {
        id: Uuid,
        #[serde(with = "time::serde::rfc3339")]
        occurred_at: OffsetDateTime,
        subject_id: Option<Uuid>,
        actor_user_id: Option<Uuid>,
        actor_partner: Option<String>,
        data: serde_json::Value,
        subject: Option<AnnouncedAccess>,
        named: Option<AnnouncedAccess>,
    }
    #[derive(serde::Deserialize)]
    struct AnnouncedAccess {
        visibility: String,
        owner: Uuid,
        archived: bool,
    }
    let announced: Announced = serde_json::from_str(json)?;
    let read_state = |access: Option<AnnouncedAccess>| match access {
        Some(access) => self::access(
            Some(access.visibility),
            Some(access.owner),
            Some(access.archived),
        ),
        None => Ok(None),
    };
    Ok(JudgedEvent {
        event: Event {
            sequence,
            record: EventRecord {
                id: EventId(announced.id),
                event_type,
                game: game.to_owned(),
                occurred_at: announced.occurred_at,
                subject_id: announced.subject_id,
                actor: Actor {
                    user_id: announced.actor_user_id.map(UserId),
                    partner: announced.actor_partner,
                },
                data: announced.data,
            },
        },
        subject: read_state(announced.subject)?,
        named: read_state(announced.named)?,
    })
}

/// What the `deckhand_events` listener tells the feed readers of this instance.
pub(crate) struct EventNews {
    heard: watch::Sender<Heard>,
    /// The primary, where the log's head is read once the listener connects.
    primary: Pool,
    /// The schema of this instance's tables, as its listener found it; announcements of events
    /// in another schema of the database are not this instance's.
    schema: std::sync::Mutex<Option<String>>,
}

impl EventNews {
    /// Reads the log's head on the primary, once per connection of the listener: from then on
    /// the announcements keep it. `resets`: the connection the caller saw.
    async fn know_head(&self, resets: u64) -> anyhow::Result<()> {
        let unknown =
            |heard: &Heard| heard.listening && !heard.head_known && heard.resets == resets;
        if !unknown(&self.heard.borrow()) {
            return Ok(());
        }
        let mut conn = checkout(&self.primary).await?;
        let head: LastSequenceRow = diesel::sql_query("SELECT last_sequence FROM event_log")
            .get_result(&mut conn)
            .await
            .map_err(error::query)?;
        self.heard.send_if_modified(|heard| {
            if !unknown(heard) {
                return false;
            }
            heard.head_known = true;
            if head.last_sequence > heard.sequence {
                // Events committed before the listener heard them: not announced here.
                heard.sequence = head.last_sequence;
                heard.recent.clear();
            }
            true
        });
        Ok(())
    }
}

impl Invalidate for EventNews {
    fn invalidate(&self, listening: bool) {
        self.heard.send_modify(|heard| {
            heard.recent.clear();
            heard.resets += 1;
            heard.listening = listening;
            heard.head_known = false;
        });
    }

    fn listening_in(&self, schema: &str) {
        *listener::lock_state(&self.schema) = Some(schema.to_owned());
    }

    fn notified(&self, payload: &str) {
        let Some((schema, payload)) = payload.split_once(' ') else {
            return self.invalidate(true);
        };
        if listener::lock_state(&self.schema).as_deref() != Some(schema) {
            return;
        }
        match announcement(payload) {
            Some(news) => {
                self.heard.send_if_modified(|heard| heard.hear(news));
            }
            // Not in the expected shape (an older trigger): wake every reader to read again.
            None => self.invalidate(true),
        }
    }
}

pub(crate) struct PgEvents {
    pool: Pool,
    news: Arc<EventNews>,
    /// Whether `pool` is a streaming replica, which hears of an event from the primary's
    /// listener before it has replayed it.
    on_replica: bool,
}

impl PgEvents {
    /// The log over `pool`, with its listener running for as long as the log lives.
    pub(crate) fn new(pool: Pool, listen: &Listener) -> Self {
        let news = Arc::new(EventNews {
            heard: watch::Sender::new(Heard::default()),
            primary: pool.clone(),
            schema: std::sync::Mutex::new(None),
        });
        listen.subscribe("deckhand_events", Arc::downgrade(&news) as Weak<EventNews>);
        Self {
            pool,
            news,
            on_replica: false,
        }
    }

    /// The log read from the streaming replica `replica`, woken by this log's listener: a
    /// replica takes no LISTEN and is never notified, so the news comes from the primary.
    pub(crate) fn on_replica(&self, replica: Pool) -> Self {
        Self {
            pool: replica,
            news: self.news.clone(),
            on_replica: true,
        }
    }

    /// Returns once this log shows every event through `sequence`, or at `deadline`. Only a
    /// replica can be behind the news; it catches up within its replay lag, so this looks
    /// again every [`REPLAY_CHECK`] for that short while rather than wait for a notification
    /// the replica never gets.
    async fn caught_up_with(&self, sequence: i64, deadline: Instant) -> anyhow::Result<()> {
        if !self.on_replica {
            return Ok(());
        }
        loop {
            let mut conn = checkout(&self.pool).await?;
            let shown: LastSequenceRow = diesel::sql_query("SELECT last_sequence FROM event_log")
                .get_result(&mut conn)
                .await
                .map_err(error::query)?;
            drop(conn);
            if shown.last_sequence >= sequence || Instant::now() >= deadline {
                return Ok(());
            }
            tokio::time::sleep_until(deadline.min(Instant::now() + REPLAY_CHECK)).await;
        }
    }
}

/// How often a replica behind the news is looked at again (see [`PgEvents::caught_up_with`]).
const REPLAY_CHECK: Duration = Duration::from_millis(20);

#[derive(Debug, QueryableByName)]
struct LastSequenceRow {
    #[diesel(sql_type = Int8)]
    last_sequence: i64,
}

#[async_trait]
impl EventRepository for PgEvents {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn scan(&self, query: &FeedQuery) -> anyhow::Result<FeedScan> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<ScanRow> = scan_statement(query)
            .load(&mut conn)
            .await
            .map_err(error::query)?;
        let first = <[ScanRow]>::first(&rows)
            .ok_or_else(|| anyhow::anyhow!("the event log has no counter row"))?;
        let (last_sequence, pruned_through) = (first.last_sequence, first.pruned_through);
        let (scanned, scanned_through) = (first.scanned, first.scanned_through);
        let readable = rows
            .into_iter()
            .filter_map(|row| Some((row.event?, row.named)))
            .map(|(event, named)| {
                Ok(ReadableEvent {
                    event: event.into_domain()?,
                    named: named.into_access()?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(FeedScan {
            readable,
            scanned: u32::try_from(scanned).unwrap_or(FEED_SCAN_WINDOW),
            scanned_through,
            last_sequence,
            pruned_through,
        })
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn wait_for_news(&self, sequence: i64, timeout: Duration) -> anyhow::Result<News> {
        let deadline = Instant::now() + timeout;
        let mut heard = self.news.heard.subscribe();
        let resets = heard.borrow_and_update().resets;
        self.news.know_head(resets).await?;
        loop {
            let news = {
                let now = heard.borrow_and_update();
                if now.resets != resets {
                    return Ok(News::Unknown);
                }
                // While the listener is down or the head unknown, nothing heard can be
                // trusted: wait for that to change (a reconnection ends the wait as Unknown).
                let trusted = now.listening && now.head_known;
                (trusted && now.sequence > sequence).then(|| now.after(sequence))
            };
            match news {
                Some(Some(news)) => {
                    // A replica may not show yet what the primary announced: reading it now
                    // would find nothing and send the reader straight back here.
                    let newest = news.last().map_or(sequence, |news| news.sequence);
                    self.caught_up_with(newest, deadline).await?;
                    return Ok(News::Heard(news));
                }
                Some(None) => return Ok(News::Unknown),
                None => {
                    if tokio::time::timeout_at(deadline, heard.changed())
                        .await
                        .is_err()
                    {
                        return Ok(News::Quiet);
                    }
                }
            }
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn judged(&self, after: i64, through: i64) -> anyhow::Result<Vec<JudgedEvent>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<JudgedRow> = Statement::new(
            format!(
                "SELECT e.sequence, e.id, e.type AS type_, e.game, e.occurred_at, e.subject_id, \
                 e.actor_user_id, e.actor_partner, e.data, \
                 coalesce(d.visibility, g.visibility, c.visibility) AS subject_visibility, \
                 coalesce(d.owner_id, g.owner_id, c.owner_id) AS subject_owner, \
                 coalesce(d.is_archived, g.is_archived, c.is_archived) AS subject_archived, named.* \
                 FROM events e \
                 LEFT JOIN LATERAL (SELECT visibility, owner_id, is_archived FROM decks \
                 WHERE e.subject_kind = 'deck' AND id = e.subject_id OFFSET 0) d ON true \
                 LEFT JOIN LATERAL (SELECT visibility, owner_id, is_archived FROM sideboard_guides \
                 WHERE e.subject_kind = 'sideboard_guide' AND id = e.subject_id OFFSET 0) g ON true\
                 {COLLECTION_SUBJECT}{} WHERE e.sequence > $1 AND e.sequence <= $2 ORDER BY e.sequence",
                named_deck_join("e")
            ),
            vec![Bind::Int(after), Bind::Int(through)],
        )
        .load(&mut conn)
        .await
        .map_err(error::query)?;
        rows.into_iter()
            .map(|row| {
                Ok(JudgedEvent {
                    event: row.event.into_domain()?,
                    subject: access(
                        row.subject_visibility,
                        row.subject_owner,
                        row.subject_archived,
                    )?,
                    named: row.named.into_access()?,
                })
            })
            .collect()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn subject(&self, kind: SubjectKind, id: Uuid) -> anyhow::Result<Option<SubjectAccess>> {
        if kind == SubjectKind::Collection {
            return Ok(Some(SubjectAccess::collection(UserId(id))));
        }
        let Some(table) = subject_table(kind) else {
            return Ok(None);
        };
        let mut conn = checkout(&self.pool).await?;
        let row: Option<SubjectRow> = Statement::new(
            format!("SELECT visibility, owner_id, is_archived FROM {table} WHERE id = $1"),
            vec![Bind::Uuid(id)],
        )
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(error::query)?;
        match row {
            Some(row) => access(
                Some(row.visibility),
                Some(row.owner_id),
                Some(row.is_archived),
            )
            .with_context(|| format!("{table} {id}")),
            None => Ok(None),
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn after(&self, sequence: i64, limit: u32) -> anyhow::Result<Vec<Event>> {
        let mut conn = checkout(&self.pool).await?;
        read_events_after(&mut conn, sequence, limit).await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        let mut conn = checkout(&self.pool).await?;
        // The longest run of old events at the head of the log, like the memory store: what is
        // left is always every event after `pruned_through`. The head is read by primary key,
        // `limit` entries at most, never the whole log (no index on `occurred_at` to keep).
        let pruned = Statement::new(
            "WITH head AS (SELECT sequence, occurred_at FROM events ORDER BY sequence LIMIT $2), \
             pruned AS (DELETE FROM events WHERE sequence IN (SELECT sequence FROM head \
             WHERE sequence < coalesce((SELECT min(sequence) FROM head WHERE occurred_at >= $1), \
             9223372036854775807)) RETURNING sequence) \
             UPDATE event_log SET pruned_through = greatest(pruned_through, \
             (SELECT coalesce(max(sequence), 0) FROM pruned)) \
             RETURNING (SELECT count(*) FROM pruned) AS pruned",
            vec![Bind::Time(before), Bind::Int(i64::from(limit))],
        )
        .get_result::<PrunedRow>(&mut conn)
        .await
        .map_err(error::query)?;
        Ok(u64::try_from(pruned.pruned).unwrap_or_default())
    }
}

#[derive(Debug, QueryableByName)]
struct SubjectRow {
    #[diesel(sql_type = Text)]
    visibility: String,
    #[diesel(sql_type = SqlUuid)]
    owner_id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    is_archived: bool,
}

#[derive(Debug, QueryableByName)]
struct PrunedRow {
    #[diesel(sql_type = Int8)]
    pruned: i64,
}

/// Every event after `sequence` in ascending order, at most `limit`, on `conn` (webhook
/// dispatch reads them in its own transaction).
pub(crate) async fn read_events_after(
    conn: &mut AsyncPgConnection,
    sequence: i64,
    limit: u32,
) -> anyhow::Result<Vec<Event>> {
    let rows: Vec<EventRow> = Statement::new(
        format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE sequence > $1 ORDER BY sequence LIMIT $2"
        ),
        vec![Bind::Int(sequence), Bind::Int(i64::from(limit))],
    )
    .load(conn)
    .await
    .map_err(error::query)?;
    rows.into_iter().map(EventRow::into_domain).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn news_in(schema: &str) -> EventNews {
        let manager = diesel_async::pooled_connection::AsyncDieselConnectionManager::<
            AsyncPgConnection,
        >::new("postgres://nowhere.invalid/none");
        let news = EventNews {
            heard: watch::Sender::new(Heard::default()),
            primary: Pool::of(
                vec![
                    diesel_async::pooled_connection::deadpool::Pool::builder(manager)
                        .build()
                        .unwrap(),
                ],
                false,
            ),
            schema: std::sync::Mutex::new(None),
        };
        news.listening_in(schema);
        news.invalidate(true);
        news
    }

    #[test]
    fn announcements_of_another_schema_are_not_this_instances() {
        let news = news_in("mine");
        news.notified("theirs 1 mtg deck.created");
        assert_eq!(news.heard.borrow().sequence, 0);
        news.notified("mine 1 mtg deck.created");
        let heard = news.heard.borrow().after(0).unwrap();
        assert_eq!(
            heard
                .iter()
                .map(|news| (news.sequence, news.game.as_str(), news.event_type))
                .collect::<Vec<_>>(),
            [(1, "mtg", EventType::DeckCreated)]
        );
        assert_eq!(
            heard[0].judged, None,
            "a short announcement carries no event"
        );
    }

    #[test]
    fn an_announcement_carries_the_event_judged_as_its_commit_left_it() {
        let news = news_in("public");
        let owner = Uuid::from_u128(1);
        let deck = Uuid::from_u128(2);
        news.notified(&format!(
            "public 7 mtg deck.created {}",
            serde_json::json!({
                "id": Uuid::from_u128(3), "occurred_at": "2026-11-27T14:00:00.5+00:00",
                "subject_id": deck, "actor_user_id": owner, "actor_partner": null,
                "data": {"version": 1, "forked_from": {"deck_id": Uuid::from_u128(4), "version": 2}},
                "subject": {"visibility": "public", "owner": owner, "archived": false},
                "named": {"visibility": "private", "owner": owner, "archived": false},
            })
        ));
        let heard = news.heard.borrow().after(6).unwrap();
        let judged = heard[0].judged.clone().expect("the event");
        assert_eq!(judged.event.sequence, 7);
        assert_eq!(judged.event.record.subject_id, Some(deck));
        assert_eq!(judged.event.record.named_deck(), Some(Uuid::from_u128(4)));
        assert_eq!(
            judged.subject.map(|access| access.visibility),
            Some(Visibility::Public)
        );
        assert_eq!(
            judged.named.map(|access| access.visibility),
            Some(Visibility::Private)
        );
    }

    #[test]
    fn a_gap_in_the_announcements_makes_the_news_unknown() {
        let news = news_in("public");
        news.notified("public 1 mtg deck.created");
        news.notified("public 3 mtg deck.updated");
        assert_eq!(news.heard.borrow().after(0), None);
        assert!(news.heard.borrow().after(2).is_some());
    }
}
