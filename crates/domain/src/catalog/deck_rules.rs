//! Format rules and card facts as values: what a check reads, wherever it was stored.

use std::collections::BTreeMap;
use std::sync::Arc;

use time::OffsetDateTime;
use uuid::Uuid;

/// A format's deck rules (contract, "Format checks"). Stored per format as data, for every
/// game alike: what differs between games (which section is the main one, a pool, a hero) is
/// a value here, never a second code path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatRules {
    /// The section `main_min` and `main_max` count: `mainboard` in `mtg`, `deck` in `fab`.
    pub main_section: String,
    /// The fewest cards the main section may hold (0: not checked, as in commander where
    /// [`CommanderRules::deck_size`] says the size).
    pub main_min: u32,
    pub main_max: Option<u32>,
    /// The most cards the sideboard (with the companion) may hold; `None`: not checked.
    pub sideboard_max: Option<u32>,
    /// Copies of one card by name across the counted sections.
    pub copy_limit: u32,
    /// One copy of each card (overrides `copy_limit`), basic lands and "any number" cards
    /// excepted.
    pub singleton: bool,
    pub commander: Option<CommanderRules>,
    /// The most cards of the card pool: every counted section but the hero's (`fab`'s deck,
    /// arena and inventory); `None`: not checked.
    pub pool_max: Option<u32>,
    /// The deck needs exactly one hero, of this age; `None`: the format has no hero rule.
    pub hero: Option<HeroRules>,
}

/// A format's hero rule (`fab`): exactly one hero in the hero section, young or adult.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeroRules {
    /// A young hero (Blitz) or an adult one (Classic Constructed).
    pub young: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommanderRules {
    /// How many cards the commander section may hold (at least one).
    pub count_max: u32,
    /// The exact size of the deck: commander and mainboard sections together.
    pub deck_size: u32,
    /// Every card must be within the commanders' combined colour identity.
    pub color_identity: bool,
}

/// A card's legality in a format, as catalog files state it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Legality {
    Legal,
    NotLegal,
    Restricted,
    Banned,
}

impl Legality {
    pub const ALL: [Self; 4] = [Self::Legal, Self::NotLegal, Self::Restricted, Self::Banned];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Legal => "legal",
            Self::NotLegal => "not_legal",
            Self::Restricted => "restricted",
            Self::Banned => "banned",
        }
    }

    /// The status as files and the CLI spell it; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

/// How many copies of a card a deck may hold, as its rules text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum CopyAllowance {
    /// The format's limit.
    #[default]
    Format,
    /// "A deck can have any number of cards named ..."
    Any,
    /// "A deck can have up to seven cards named ..."
    UpTo(u32),
}

/// Whether a card may share the command zone (Commander's partner rules).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub enum PartnerAbility {
    #[default]
    None,
    /// "Partner": with any other card that has it.
    Any,
    /// "Partner with NAME": with that card (its name key).
    With(String),
}

/// A hero card (`fab`): the hero it is, by the name other cards' legal heroes use, and its age.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeroCard {
    /// The package's `hero`: `Dorinthea` for both Dorinthea Ironsong and young Dorinthea,
    /// `Starvo` for Bravo, Star of the Show. Cards' `legalHeroes` name heroes this way.
    pub name: String,
    pub young: bool,
}

/// What a card's rules text says about deck building, derived once (at import from
/// `oracle_text` or a game's own fields, or seeded by a migration), never per check.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct CardTextRules {
    pub copies: CopyAllowance,
    /// "... can be your commander" on a card that is no legendary creature.
    pub can_be_commander: bool,
    pub partner: PartnerAbility,
    /// The card is a hero (`fab`).
    pub hero: Option<HeroCard>,
    /// The heroes whose decks may hold the card ([`HeroCard::name`]); empty: any hero.
    pub legal_heroes: Vec<String>,
}

impl CardTextRules {
    /// Whether the text says nothing a check needs.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// One record of a card's legality history: `status` from `from` on (until the next record).
/// A record of an announcement (the shipped history) also says the status it replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LegalityChange {
    pub from: OffsetDateTime,
    pub status: Legality,
    /// The status before `from`, as an announcement states it; `None` for imported and
    /// operator records.
    pub before: Option<Legality>,
}

impl LegalityChange {
    /// A record an import or an operator made (no "before").
    pub fn recorded(from: OffsetDateTime, status: Legality) -> Self {
        Self {
            from,
            status,
            before: None,
        }
    }
}

/// The status the records of `history` (oldest first) put in force at `at`: the last one
/// from at or before it; `None` when every record is later. Imports compare with this, so
/// that a file records only what differs from what was in force on its day.
pub fn recorded_at(history: &[LegalityChange], at: OffsetDateTime) -> Option<Legality> {
    history
        .iter()
        .rev()
        .find(|change| change.from <= at)
        .map(|change| change.status)
}

/// Everything a check knows of a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardFacts {
    pub card_id: Uuid,
    pub name: String,
    pub type_line: String,
    /// In the game's colour order.
    pub color_identity: Vec<String>,
    pub text: CardTextRules,
    /// Format slug → the card's legality history in that format, oldest first. Shared: a
    /// store that holds every card's facts keeps one copy of each distinct history, which most
    /// cards share with others (docs/benchmarks/history.md, "card facts share their histories").
    pub legalities: Arc<LegalityHistory>,
}

/// Format slug → a card's legality history in that format, oldest first.
pub type LegalityHistory = BTreeMap<String, Vec<LegalityChange>>;

impl CardFacts {
    /// The legality in force in `format` at `as_of`: the last record from at or before it;
    /// when `as_of` precedes them all, the first record's "before" (an announcement's), or
    /// else its status; `None` when the format has no record (unknown, not illegal).
    pub fn legality(&self, format: &str, as_of: OffsetDateTime) -> Option<Legality> {
        let history = self.legalities.get(format)?;
        recorded_at(history, as_of).or_else(|| {
            history
                .first()
                .map(|first| first.before.unwrap_or(first.status))
        })
    }

    /// The front face's type line (a multi-face card's first part).
    fn front_type_line(&self) -> &str {
        self.type_line
            .split(" // ")
            .next()
            .unwrap_or(&self.type_line)
    }

    fn supertypes(&self) -> impl Iterator<Item = &str> {
        let line = self.front_type_line();
        let types = line.split('—').next().unwrap_or(line);
        types.split_whitespace()
    }

    /// A basic land ("Basic Land", "Basic Snow Land"): exempt from every copy limit.
    pub fn is_basic_land(&self) -> bool {
        let mut basic = false;
        let mut land = false;
        for word in self.supertypes() {
            basic |= word == "Basic";
            land |= word == "Land";
        }
        basic && land
    }

    /// Whether a deck led by `hero` may hold this card: its legal heroes name the hero, or it
    /// names none.
    pub fn legal_for(&self, hero: &HeroCard) -> bool {
        self.text.legal_heroes.is_empty() || self.text.legal_heroes.contains(&hero.name)
    }

    /// A legendary creature, or a card whose text lets it be a commander.
    pub fn can_be_commander(&self) -> bool {
        let mut legendary = false;
        let mut creature = false;
        for word in self.supertypes() {
            legendary |= word == "Legendary";
            creature |= word == "Creature";
        }
        (legendary && creature) || self.text.can_be_commander
    }
}

/// Reads the deck-building clauses of a card's rules text (English oracle text).
pub fn text_rules(oracle_text: &str) -> CardTextRules {
    let text = oracle_text.to_lowercase();
    let mut rules = CardTextRules {
        can_be_commander: text.contains("can be your commander"),
        partner: partner(&text),
        ..CardTextRules::default()
    };
    if text.contains("a deck can have any number of cards named") {
        rules.copies = CopyAllowance::Any;
    } else if let Some(rest) = text.split("a deck can have up to ").nth(1) {
        let count = rest.split_whitespace().next().unwrap_or_default();
        if let Some(count) = number(count) {
            rules.copies = CopyAllowance::UpTo(count);
        }
    }
    rules
}

/// The partner ability of a (lower-cased) rules text: a line "Partner" (reminder text aside),
/// or "Partner with NAME".
fn partner(text: &str) -> PartnerAbility {
    for line in text.lines() {
        let ability = line.split(" (").next().unwrap_or(line).trim();
        if ability == "partner" {
            return PartnerAbility::Any;
        }
        if let Some(name) = ability.strip_prefix("partner with ") {
            return PartnerAbility::With(crate::catalog::name_key(name));
        }
    }
    PartnerAbility::None
}

/// Whether two commanders may lead a deck together: both have Partner, or one is the other's
/// "Partner with".
pub fn partners(a: &CardFacts, b: &CardFacts) -> bool {
    let names = |card: &CardFacts| crate::catalog::name_key(&card.name);
    match (&a.text.partner, &b.text.partner) {
        (PartnerAbility::Any, PartnerAbility::Any) => true,
        (PartnerAbility::With(name), _) if *name == names(b) => true,
        (_, PartnerAbility::With(name)) => *name == names(a),
        _ => false,
    }
}

fn number(word: &str) -> Option<u32> {
    const WORDS: [&str; 20] = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    word.parse().ok().or_else(|| {
        WORDS
            .iter()
            .position(|known| *known == word)
            .and_then(|position| u32::try_from(position + 1).ok())
    })
}
