use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::identity::{Principal, UserId};
use crate::system::IdGenerator;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub Uuid);

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What an event's subject is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubjectKind {
    Deck,
    SideboardGuide,
    Catalog,
    /// A user's collection of a game; its id is the owner's user id.
    Collection,
}

impl SubjectKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Deck => "deck",
            Self::SideboardGuide => "sideboard_guide",
            Self::Catalog => "catalog",
            Self::Collection => "collection",
        }
    }
}

macro_rules! event_types {
    ($($variant:ident => $name:literal, $kind:ident;)*) => {
        /// Every kind of event, by its wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventType {
            $($variant,)*
        }

        impl EventType {
            /// Every type, in the order the contract lists them; `webhook.ping` last.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The kind of subject events of this type have.
            pub const fn subject_kind(self) -> SubjectKind {
                match self {
                    $(Self::$variant => SubjectKind::$kind,)*
                }
            }
        }
    };
}

event_types! {
    DeckCreated => "deck.created", Deck;
    DeckUpdated => "deck.updated", Deck;
    DeckRolledBack => "deck.rolled_back", Deck;
    DeckStrategyGuideUpdated => "deck.strategy_guide.updated", Deck;
    DeckStrategyGuideDeleted => "deck.strategy_guide.deleted", Deck;
    GuideCreated => "sideboard_guide.created", SideboardGuide;
    GuideUpdated => "sideboard_guide.updated", SideboardGuide;
    GuideDeckAttached => "sideboard_guide.deck_attached", SideboardGuide;
    GuideDeckDetached => "sideboard_guide.deck_detached", SideboardGuide;
    GuideMatchupCreated => "sideboard_guide.matchup_created", SideboardGuide;
    GuideMatchupUpdated => "sideboard_guide.matchup_updated", SideboardGuide;
    GuideMatchupDeleted => "sideboard_guide.matchup_deleted", SideboardGuide;
    CatalogImported => "catalog.imported", Catalog;
    CollectionUpdated => "collection.updated", Collection;
    WebhookPing => "webhook.ping", Catalog;
}

impl EventType {
    /// The types the feed holds: every one but `webhook.ping`, which only webhooks receive.
    pub fn in_feed() -> impl Iterator<Item = Self> {
        Self::ALL
            .iter()
            .copied()
            .filter(|kind| *kind != Self::WebhookPing)
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|kind| kind.as_str() == name)
    }
}

/// Who made a change: the user and the partner of the request (either may be absent; both are
/// for changes an operator makes from the command line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actor {
    pub user_id: Option<UserId>,
    pub partner: Option<String>,
}

impl Actor {
    pub fn of(principal: &Principal) -> Self {
        Self {
            user_id: principal.user.as_ref().map(|user| user.id),
            partner: principal
                .partner
                .as_ref()
                .map(|partner| partner.slug.clone()),
        }
    }

    /// An operator at the command line.
    pub fn operator() -> Self {
        Self::default()
    }
}

/// Who makes a change and the id its event will carry, fixed before the change is tried (a
/// store may decide a change more than once, and every try must name the same event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub event_id: EventId,
    pub actor: Actor,
}

impl Origin {
    /// A change `principal` makes, with a new event id.
    pub fn of(principal: &Principal, ids: &dyn IdGenerator) -> Self {
        Self {
            event_id: EventId(ids.new_id()),
            actor: Actor::of(principal),
        }
    }

    /// The record of a change of `event_type` to `subject` in `game` at `at`.
    pub fn record(
        &self,
        event_type: EventType,
        game: &str,
        subject: Option<Uuid>,
        at: OffsetDateTime,
        data: Value,
    ) -> EventRecord {
        EventRecord {
            id: self.event_id,
            event_type,
            game: game.to_owned(),
            occurred_at: at,
            subject_id: subject,
            actor: self.actor.clone(),
            data,
        }
    }
}

/// One committed change, as a store writes it with the change; the log gives it its
/// `sequence` ([`Event`]). `data` is thin (contract "Events"): ids and what changed, never
/// content, so a reader fetches the subject with its own rights.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    pub id: EventId,
    pub event_type: EventType,
    pub game: String,
    pub occurred_at: OffsetDateTime,
    /// The deck or guide; `None` for catalog events.
    pub subject_id: Option<Uuid>,
    pub actor: Actor,
    pub data: Value,
}

impl EventRecord {
    pub fn subject_kind(&self) -> SubjectKind {
        self.event_type.subject_kind()
    }

    /// The deck `data` names besides the subject: the source of a fork (`forked_from`), or a
    /// guide's deck (`deck_id`). A reader who may not read it now sees it as `null`
    /// ([`Self::hide_named_deck`]), as the resource endpoints would show it.
    pub fn named_deck(&self) -> Option<Uuid> {
        let named = match self.event_type {
            EventType::DeckCreated => self.data.get("forked_from")?.get("deck_id")?,
            EventType::GuideCreated
            | EventType::GuideDeckAttached
            | EventType::GuideDeckDetached => self.data.get("deck_id")?,
            _ => return None,
        };
        named.as_str()?.parse().ok()
    }

    /// `data` with the deck it names ([`Self::named_deck`]) replaced by `null`.
    pub fn hide_named_deck(&mut self) {
        let field = match self.event_type {
            EventType::DeckCreated => "forked_from",
            EventType::GuideCreated
            | EventType::GuideDeckAttached
            | EventType::GuideDeckDetached => "deck_id",
            _ => return,
        };
        if let Some(named) = self.data.get_mut(field) {
            *named = Value::Null;
        }
    }
}

/// An event as the feed lists it: its record and its place in commit order.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Unique, positive, and ascending in the order the changes committed.
    pub sequence: i64,
    pub record: EventRecord,
}

impl Event {
    /// The event as the feed lists it and a webhook receives it (contract "Events"): the one
    /// place its JSON form is written.
    pub fn to_json(&self) -> Value {
        let record = &self.record;
        let occurred_at = record
            .occurred_at
            .to_offset(time::UtcOffset::UTC)
            .format(&Rfc3339)
            .unwrap_or_default();
        json!({
            "id": record.id.0,
            "sequence": self.sequence,
            "type": record.event_type.as_str(),
            "game": record.game,
            "occurred_at": occurred_at,
            "subject": {"kind": record.subject_kind().as_str(), "id": record.subject_id},
            "actor": {
                "user_id": record.actor.user_id.map(|user| user.0.to_string()),
                "partner": record.actor.partner,
            },
            "data": record.data,
        })
    }
}
