//! The resolution rules, as pure functions over what the store returned: which fields of an
//! identifier are tried, in which order, and what counts as a match.
//!
//! Precedence (contract, "Card resolution"): `variantId`, `catalog_a_id`, `catalog_b_id`,
//! `catalog_c_id`, `set` + `collector_number`, `cardId` (+ `set`), `name` (+ `set`). Each present
//! field is tried in that order and the first that identifies exactly one card wins; a field
//! that finds nothing hands over to the next, so a stale id next to a good name still resolves.
//! When none wins the reason is `ambiguous` if some field matched several cards, else
//! `not_found`; `empty` when every field is blank.
//!
//! The fields other names stand for (contract, "A second game: Flesh and Blood") take their
//! place in that order: `tcgplayer_id` as `catalog_a_id`, `cardIdentifier` as `catalog_b_id`,
//! `print` (`WTR216`) as `set` + `collector_number`, `set_code` as `set`. A `pitch` with a
//! `name` names the card `<name> (<colour>)`, the colour being the game's colour at that
//! position (1 is the first) or given as such.

use std::collections::HashMap;

use uuid::Uuid;

use super::{
    CardIdentifier, CardName, CardPick, CatalogEntry, Format, MatchedBy, PrintingKeys, Resolution,
    Resolved, Unresolved, UnresolvedReason, name_key,
};

/// One field (or pair of fields) of an identifier to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Attempt {
    Variant(Uuid),
    CatalogA(String),
    CatalogB(String),
    CatalogC(String),
    SetNumber(String, String),
    Card(CardPick),
    Name(String, Option<String>),
}

fn present(field: &Option<String>) -> Option<&str> {
    field
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// The colour a pitch names among the game's `colors`: a position from 1, or the colour itself
/// in any case. `None` for anything else.
fn pitch_color<'a>(pitch: &str, colors: &'a [String]) -> Option<&'a str> {
    let by_position = pitch
        .parse::<usize>()
        .ok()
        .and_then(|at| at.checked_sub(1))
        .and_then(|at| colors.get(at));
    by_position
        .or_else(|| {
            colors
                .iter()
                .find(|color| color.eq_ignore_ascii_case(pitch))
        })
        .map(String::as_str)
}

/// The attempts of one identifier of a game with `colors`, in precedence order. Empty when
/// every field is blank. A malformed UUID cannot match anything: it is no attempt, but the
/// identifier is not empty; nor can an unknown pitch or a malformed print.
pub(super) fn attempts(identifier: &CardIdentifier, colors: &[String]) -> (Vec<Attempt>, bool) {
    let set = present(&identifier.set)
        .or_else(|| present(&identifier.set_code))
        .map(str::to_lowercase);
    let mut attempts = Vec::new();
    if let Some(id) = present(&identifier.variant_id).and_then(|id| Uuid::parse_str(id).ok()) {
        attempts.push(Attempt::Variant(id));
    }
    for id in [&identifier.catalog_a_id, &identifier.tcgplayer_id] {
        if let Some(id) = present(id) {
            attempts.push(Attempt::CatalogA(id.to_owned()));
        }
    }
    for id in [&identifier.catalog_b_id, &identifier.card_identifier] {
        if let Some(id) = present(id) {
            attempts.push(Attempt::CatalogB(id.to_owned()));
        }
    }
    if let Some(id) = present(&identifier.catalog_c_id) {
        attempts.push(Attempt::CatalogC(id.to_owned()));
    }
    if let (Some(set), Some(number)) = (&set, present(&identifier.collector_number)) {
        attempts.push(Attempt::SetNumber(set.clone(), number.to_owned()));
    }
    if let Some((set, number)) = present(&identifier.print).and_then(super::source::split_print) {
        attempts.push(Attempt::SetNumber(set, number));
    }
    if let Some(id) = present(&identifier.card_id).and_then(|id| Uuid::parse_str(id).ok()) {
        attempts.push(Attempt::Card(CardPick {
            card_id: id,
            set: set.clone(),
        }));
    }
    if let Some(name) = present(&identifier.name) {
        match present(&identifier.pitch) {
            None => attempts.push(Attempt::Name(name_key(name), set.clone())),
            Some(pitch) => {
                if let Some(color) = pitch_color(pitch, colors) {
                    let named = super::source::pitched_name(name, Some(color));
                    attempts.push(Attempt::Name(name_key(&named), set.clone()));
                }
            }
        }
    }
    let blank = [
        &identifier.variant_id,
        &identifier.catalog_a_id,
        &identifier.catalog_b_id,
        &identifier.catalog_c_id,
        &identifier.card_id,
        &identifier.name,
        &identifier.set,
        &identifier.collector_number,
        &identifier.pitch,
        &identifier.card_identifier,
        &identifier.print,
        &identifier.set_code,
        &identifier.tcgplayer_id,
    ]
    .into_iter()
    .all(|field| present(field).is_none());
    (attempts, blank)
}

/// The exact keys of every attempt, for one `find_printings` call.
pub(super) fn printing_keys<'a>(all: impl IntoIterator<Item = &'a Attempt>) -> PrintingKeys {
    let mut keys = PrintingKeys::default();
    for attempt in all {
        match attempt {
            Attempt::Variant(id) => keys.variant_ids.push(*id),
            Attempt::CatalogA(id) => keys.catalog_a_ids.push(id.clone()),
            Attempt::CatalogB(id) => keys.catalog_b_ids.push(id.clone()),
            Attempt::CatalogC(id) => keys.catalog_c_ids.push(id.clone()),
            Attempt::SetNumber(set, number) => keys.set_numbers.push((set.clone(), number.clone())),
            Attempt::Card(_) | Attempt::Name(..) => {}
        }
    }
    dedup(&mut keys.variant_ids);
    dedup(&mut keys.catalog_a_ids);
    dedup(&mut keys.catalog_b_ids);
    dedup(&mut keys.catalog_c_ids);
    dedup(&mut keys.set_numbers);
    keys
}

pub(super) fn name_keys<'a>(all: impl IntoIterator<Item = &'a Attempt>) -> Vec<String> {
    let mut keys: Vec<String> = all
        .into_iter()
        .filter_map(|attempt| match attempt {
            Attempt::Name(key, _) => Some(key.clone()),
            _ => None,
        })
        .collect();
    dedup(&mut keys);
    keys
}

fn dedup<T: Ord>(values: &mut Vec<T>) {
    values.sort_unstable();
    values.dedup();
}

/// The cards each name key of a request means, indexed once.
pub(super) struct Names<'a> {
    full: HashMap<&'a str, Vec<Uuid>>,
    front: HashMap<&'a str, Vec<Uuid>>,
}

impl<'a> Names<'a> {
    pub(super) fn new(cards: &'a [CardName]) -> Self {
        let mut full: HashMap<&str, Vec<Uuid>> = HashMap::new();
        let mut front: HashMap<&str, Vec<Uuid>> = HashMap::new();
        for card in cards {
            full.entry(&card.name_key).or_default().push(card.card_id);
            front
                .entry(&card.front_face_key)
                .or_default()
                .push(card.card_id);
        }
        for ids in full.values_mut().chain(front.values_mut()) {
            dedup(ids);
        }
        Self { full, front }
    }

    /// The cards a name key means: those whose full name is the key; failing that, those whose
    /// front face is (so `Fire` finds `Fire // Ice` unless a card is named just `Fire`).
    fn cards(&self, key: &str) -> &[Uuid] {
        self.full
            .get(key)
            .or_else(|| self.front.get(key))
            .map_or(&[], Vec::as_slice)
    }
}

/// The picks whose preferred printing is needed: every `cardId`, and every name that means
/// exactly one card.
pub(super) fn card_picks<'a>(
    all: impl IntoIterator<Item = &'a Attempt>,
    names: &Names<'_>,
) -> Vec<CardPick> {
    let mut picks: Vec<CardPick> = all
        .into_iter()
        .filter_map(|attempt| match attempt {
            Attempt::Card(pick) => Some(pick.clone()),
            Attempt::Name(key, set) => match names.cards(key) {
                [card_id] => Some(CardPick {
                    card_id: *card_id,
                    set: set.clone(),
                }),
                _ => None,
            },
            _ => None,
        })
        .collect();
    dedup(&mut picks);
    picks
}

/// What the store returned for one request.
pub(super) struct Found {
    pub printings: Vec<CatalogEntry>,
    pub cards: Vec<CardName>,
    pub preferred: HashMap<CardPick, CatalogEntry>,
}

enum Outcome<'a> {
    Match(&'a CatalogEntry),
    Ambiguous,
    Miss,
}

/// Among `candidates`, the preferred printing when they are all of one card.
fn single_card<'a>(candidates: &[&'a CatalogEntry]) -> Outcome<'a> {
    let Some(first) = candidates.first() else {
        return Outcome::Miss;
    };
    if candidates
        .iter()
        .any(|entry| entry.printing.card_id != first.printing.card_id)
    {
        return Outcome::Ambiguous;
    }
    candidates
        .iter()
        .copied()
        .min_by_key(|entry| entry.preference_order())
        .map_or(Outcome::Miss, Outcome::Match)
}

/// What the store returned, indexed by every key an attempt looks up, so that deciding 1000
/// identifiers costs 1000 lookups rather than 1000 scans of every printing found.
struct Index<'a> {
    by_variant: HashMap<Uuid, &'a CatalogEntry>,
    /// `catalog_a_id`, `catalog_b_id`, `catalog_c_id`.
    by_catalog: [HashMap<&'a str, Vec<&'a CatalogEntry>>; 3],
    by_set_number: HashMap<(&'a str, &'a str), Vec<&'a CatalogEntry>>,
    names: Names<'a>,
    preferred: &'a HashMap<CardPick, CatalogEntry>,
}

impl<'a> Index<'a> {
    fn new(found: &'a Found) -> Self {
        let mut index = Self {
            by_variant: HashMap::with_capacity(found.printings.len()),
            by_catalog: Default::default(),
            by_set_number: HashMap::with_capacity(found.printings.len()),
            names: Names::new(&found.cards),
            preferred: &found.preferred,
        };
        for entry in &found.printings {
            let printing = &entry.printing;
            index.by_variant.entry(printing.variant_id).or_insert(entry);
            for (by_id, id) in index.by_catalog.iter_mut().zip(printing.catalog_ids()) {
                if let Some(id) = id {
                    by_id.entry(id).or_default().push(entry);
                }
            }
            index
                .by_set_number
                .entry((&printing.set, &printing.collector_number))
                .or_default()
                .push(entry);
        }
        index
    }

    fn try_attempt(&self, attempt: &Attempt) -> Outcome<'a> {
        let candidates =
            |found: Option<&Vec<&'a CatalogEntry>>| single_card(found.map_or(&[], Vec::as_slice));
        match attempt {
            Attempt::Variant(id) => self
                .by_variant
                .get(id)
                .map_or(Outcome::Miss, |entry| Outcome::Match(entry)),
            Attempt::CatalogA(id) => candidates(self.by_catalog[0].get(id.as_str())),
            Attempt::CatalogB(id) => candidates(self.by_catalog[1].get(id.as_str())),
            Attempt::CatalogC(id) => candidates(self.by_catalog[2].get(id.as_str())),
            Attempt::SetNumber(set, number) => {
                candidates(self.by_set_number.get(&(set.as_str(), number.as_str())))
            }
            Attempt::Card(pick) => self.preferred(pick),
            Attempt::Name(key, set) => match self.names.cards(key) {
                [] => Outcome::Miss,
                [card_id] => self.preferred(&CardPick {
                    card_id: *card_id,
                    set: set.clone(),
                }),
                _ => Outcome::Ambiguous,
            },
        }
    }

    fn preferred(&self, pick: &CardPick) -> Outcome<'a> {
        self.preferred
            .get(pick)
            .map_or(Outcome::Miss, Outcome::Match)
    }
}

fn matched_by(attempt: &Attempt) -> MatchedBy {
    match attempt {
        Attempt::Variant(_) => MatchedBy::VariantId,
        Attempt::CatalogA(_) => MatchedBy::CatalogAId,
        Attempt::CatalogB(_) => MatchedBy::CatalogBId,
        Attempt::CatalogC(_) => MatchedBy::CatalogCId,
        Attempt::SetNumber(..) => MatchedBy::SetAndCollectorNumber,
        Attempt::Card(_) => MatchedBy::CardId,
        Attempt::Name(..) => MatchedBy::Name,
    }
}

/// Decides every identifier from what the store returned.
pub(super) fn decide(
    identifiers: &[CardIdentifier],
    planned: &[(Vec<Attempt>, bool)],
    found: &Found,
    format: Option<&Format>,
) -> Resolution {
    let found = Index::new(found);
    let mut resolution = Resolution::default();
    for (index, (input, (attempts, blank))) in identifiers.iter().zip(planned).enumerate() {
        let mut reason = if *blank {
            UnresolvedReason::Empty
        } else {
            UnresolvedReason::NotFound
        };
        let mut winner = None;
        for attempt in attempts {
            match found.try_attempt(attempt) {
                Outcome::Match(entry) => {
                    winner = Some((matched_by(attempt), entry));
                    break;
                }
                Outcome::Ambiguous => reason = UnresolvedReason::Ambiguous,
                Outcome::Miss => {}
            }
        }
        match winner {
            Some((_, entry)) if format.is_some_and(|format| !entry.is_legal_in(format)) => {
                resolution.unresolved.push(Unresolved {
                    index,
                    input: input.clone(),
                    reason: UnresolvedReason::NotLegalInFormat,
                });
            }
            Some((matched_by, entry)) => resolution.resolved.push(Resolved {
                index,
                input: input.clone(),
                matched_by,
                printing: entry.printing.clone(),
            }),
            None => resolution.unresolved.push(Unresolved {
                index,
                input: input.clone(),
                reason,
            }),
        }
    }
    resolution
}
