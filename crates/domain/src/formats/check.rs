//! The format check: one pure function over the deck's lines, the format's rules, the cards'
//! facts and a date. Both check endpoints (stored deck, inline list) call it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use time::OffsetDateTime;
use uuid::Uuid;

use super::{CardFacts, CopyAllowance, FormatRules, Legality};
use crate::catalog::{Format, Game};

/// The sections a check reads by name; a game without them simply has none of those cards.
pub const COMMANDER_SECTION: &str = "commander";
pub const COMPANION_SECTION: &str = "companion";
pub const HERO_SECTION: &str = "hero";
pub const MAIN_SECTION: &str = "mainboard";
pub const SIDEBOARD_SECTION: &str = "sideboard";

/// One line of the deck being checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckLine {
    pub section: String,
    pub quantity: u32,
    /// The catalog card; `None` when the entry did not resolve.
    pub card_id: Option<Uuid>,
    /// The card's name, or what the entry asked for when it did not resolve.
    pub name: String,
    /// Where the entry came from, for messages: `cards[2]`, `line 3`, or empty.
    pub place: String,
}

/// The rule a problem breaks; `as_str` is its wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    MainSize,
    SideboardSize,
    DeckSize,
    CopyLimit,
    Banned,
    NotLegal,
    Restricted,
    Commander,
    ColorIdentity,
    Unresolved,
    LegalityUnknown,
    Hero,
    HeroLegality,
    PoolSize,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MainSize => "main_size",
            Self::SideboardSize => "sideboard_size",
            Self::DeckSize => "deck_size",
            Self::CopyLimit => "copy_limit",
            Self::Banned => "banned",
            Self::NotLegal => "not_legal",
            Self::Restricted => "restricted",
            Self::Commander => "commander",
            Self::ColorIdentity => "color_identity",
            Self::Unresolved => "unresolved",
            Self::LegalityUnknown => "legality_unknown",
            Self::Hero => "hero",
            Self::HeroLegality => "hero_legality",
            Self::PoolSize => "pool_size",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemCard {
    pub card_id: Uuid,
    pub name: String,
}

/// One reason the deck is not legal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub rule: Rule,
    pub section: Option<String>,
    pub card: Option<ProblemCard>,
    pub count: Option<u32>,
    pub limit: Option<u32>,
    pub message: String,
}

/// Every problem of a deck in `format` (whose rules are `rules`) at `as_of`, sorted by rule
/// code as text, then by card name (problems naming no card first), then section and message.
/// Maybeboard (any uncounted section) is never checked. A card missing from `facts` counts as
/// unresolved.
pub fn check(
    game: &Game,
    format: &Format,
    rules: &FormatRules,
    lines: &[CheckLine],
    facts: &HashMap<Uuid, Arc<CardFacts>>,
    as_of: OffsetDateTime,
) -> Vec<Problem> {
    let counted: Vec<&CheckLine> = lines
        .iter()
        .filter(|line| {
            game.section(&line.section)
                .is_some_and(|section| section.counted)
        })
        .collect();
    let mut problems = Vec::new();
    let mut known: Vec<(&CheckLine, &CardFacts)> = Vec::new();
    for line in &counted {
        match line.card_id.and_then(|id| facts.get(&id)).map(Arc::as_ref) {
            Some(card) => known.push((line, card)),
            None => problems.push(unresolved(line)),
        }
    }
    let total = |sections: &[&str]| -> u32 {
        counted
            .iter()
            .filter(|line| sections.contains(&line.section.as_str()))
            .map(|line| line.quantity)
            .sum()
    };
    sizes(game, format, rules, &total, &mut problems);
    // Copies by card, across every counted section.
    let mut copies: BTreeMap<Uuid, (u32, &CardFacts)> = BTreeMap::new();
    for (line, card) in &known {
        copies.entry(card.card_id).or_insert((0, card)).0 += line.quantity;
    }
    for (count, card) in copies.values() {
        card_rules(format, rules, *count, card, as_of, &mut problems);
    }
    if let Some(commander) = &rules.commander {
        commanders(game, commander, &known, &mut problems);
    }
    if let Some(hero) = &rules.hero {
        heroes(format, *hero, &known, total(&[HERO_SECTION]), &mut problems);
    }
    problems.sort_by(|a, b| {
        let name = |problem: &Problem| problem.card.as_ref().map(|card| card.name.clone());
        (a.rule.as_str(), name(a), &a.section, &a.message).cmp(&(
            b.rule.as_str(),
            name(b),
            &b.section,
            &b.message,
        ))
    });
    problems
}

fn unresolved(line: &CheckLine) -> Problem {
    let place = if line.place.is_empty() {
        String::new()
    } else {
        format!("{}: ", line.place)
    };
    Problem {
        rule: Rule::Unresolved,
        section: Some(line.section.clone()),
        card: None,
        count: Some(line.quantity),
        limit: None,
        message: format!("{place}no card found for {:?}", line.name),
    }
}

fn size_problem(
    rule: Rule,
    section: Option<&str>,
    count: u32,
    limit: u32,
    message: String,
) -> Problem {
    Problem {
        rule,
        section: section.map(str::to_owned),
        card: None,
        count: Some(count),
        limit: Some(limit),
        message,
    }
}

fn sizes(
    game: &Game,
    format: &Format,
    rules: &FormatRules,
    total: &dyn Fn(&[&str]) -> u32,
    problems: &mut Vec<Problem>,
) {
    let name = &format.name;
    let section = rules.main_section.as_str();
    // `mtg`'s mainboard is "the main deck"; another game's main section goes by its label.
    let what = match game.section(section) {
        Some(found) if section != MAIN_SECTION => found.label.to_lowercase(),
        _ => "main deck".to_owned(),
    };
    let main = total(&[section]);
    if main < rules.main_min {
        problems.push(size_problem(
            Rule::MainSize,
            Some(section),
            main,
            rules.main_min,
            format!(
                "the {what} has {main} cards; {name} needs at least {}",
                rules.main_min
            ),
        ));
    }
    if let Some(max) = rules.main_max.filter(|max| main > *max) {
        problems.push(size_problem(
            Rule::MainSize,
            Some(section),
            main,
            max,
            format!("the {what} has {main} cards; {name} allows at most {max}"),
        ));
    }
    if let Some(max) = rules.pool_max {
        // Every counted section but the hero's.
        let sections: Vec<&str> = game
            .sections
            .iter()
            .filter(|section| section.counted && section.key != HERO_SECTION)
            .map(|section| section.key.as_str())
            .collect();
        let pool = total(&sections);
        if pool > max {
            problems.push(size_problem(
                Rule::PoolSize,
                None,
                pool,
                max,
                format!(
                    "the card pool ({}) has {pool} cards; {name} allows at most {max}",
                    sections.join(", ")
                ),
            ));
        }
    }
    // Outside commander, a companion is one of the sideboard's cards.
    let sideboard = if rules.commander.is_some() {
        total(&[SIDEBOARD_SECTION])
    } else {
        total(&[SIDEBOARD_SECTION, COMPANION_SECTION])
    };
    if let Some(max) = rules.sideboard_max.filter(|max| sideboard > *max) {
        problems.push(size_problem(
            Rule::SideboardSize,
            Some(SIDEBOARD_SECTION),
            sideboard,
            max,
            format!("the sideboard has {sideboard} cards; {name} allows at most {max}"),
        ));
    }
    if let Some(commander) = &rules.commander {
        let deck = total(&[COMMANDER_SECTION, section]);
        if deck != commander.deck_size {
            problems.push(size_problem(
                Rule::DeckSize,
                None,
                deck,
                commander.deck_size,
                format!(
                    "the deck has {deck} cards with its commanders; {name} needs exactly {}",
                    commander.deck_size
                ),
            ));
        }
    }
}

fn card_problem(
    rule: Rule,
    card: &CardFacts,
    count: Option<u32>,
    limit: Option<u32>,
    message: String,
) -> Problem {
    Problem {
        rule,
        section: None,
        card: Some(ProblemCard {
            card_id: card.card_id,
            name: card.name.clone(),
        }),
        count,
        limit,
        message,
    }
}

/// Copies and legality of one card, `count` copies across the counted sections.
fn card_rules(
    format: &Format,
    rules: &FormatRules,
    count: u32,
    card: &CardFacts,
    as_of: OffsetDateTime,
    problems: &mut Vec<Problem>,
) {
    let (name, format_name) = (&card.name, &format.name);
    let limit = match card.text.copies {
        _ if card.is_basic_land() => None,
        CopyAllowance::Any => None,
        CopyAllowance::UpTo(limit) => Some(limit),
        CopyAllowance::Format if rules.singleton => Some(1),
        CopyAllowance::Format => Some(rules.copy_limit),
    };
    if let Some(limit) = limit.filter(|limit| count > *limit) {
        problems.push(card_problem(
            Rule::CopyLimit,
            card,
            Some(count),
            Some(limit),
            format!("{count} copies of {name}; at most {limit} allowed"),
        ));
    }
    match card.legality(&format.slug, as_of) {
        Some(Legality::Legal) => {}
        Some(Legality::Banned) => problems.push(card_problem(
            Rule::Banned,
            card,
            Some(count),
            Some(0),
            format!("{name} is banned in {format_name}"),
        )),
        Some(Legality::Restricted) if count > 1 => problems.push(card_problem(
            Rule::Restricted,
            card,
            Some(count),
            Some(1),
            format!("{name} is restricted in {format_name}: at most 1 copy, not {count}"),
        )),
        Some(Legality::Restricted) => {}
        Some(Legality::NotLegal) => problems.push(card_problem(
            Rule::NotLegal,
            card,
            Some(count),
            Some(0),
            format!("{name} is not legal in {format_name}"),
        )),
        // Unknown is not illegal: the history holds nothing for this card and format then
        // (a catalog file older than the format, say).
        None => problems.push(card_problem(
            Rule::LegalityUnknown,
            card,
            Some(count),
            None,
            format!(
                "{name}: no legality in {format_name} is recorded as of {}",
                as_of.date()
            ),
        )),
    }
}

fn commanders(
    game: &Game,
    rules: &super::CommanderRules,
    known: &[(&CheckLine, &CardFacts)],
    problems: &mut Vec<Problem>,
) {
    let chosen: Vec<&(&CheckLine, &CardFacts)> = known
        .iter()
        .filter(|(line, _)| line.section == COMMANDER_SECTION)
        .collect();
    let count: u32 = chosen.iter().map(|(line, _)| line.quantity).sum();
    if count == 0 || count > rules.count_max {
        problems.push(size_problem(
            Rule::Commander,
            Some(COMMANDER_SECTION),
            count,
            rules.count_max,
            format!(
                "the deck has {count} commanders; it needs 1 to {}",
                rules.count_max
            ),
        ));
    }
    // Two commanders only as partners; the second is the problem.
    if let [(_, first), (_, second)] = chosen.as_slice()
        && count == 2
        && first.card_id != second.card_id
        && !super::partners(first, second)
    {
        let mut problem = card_problem(
            Rule::Commander,
            second,
            None,
            None,
            format!(
                "{} cannot be a second commander beside {}: neither has Partner with the other, \
                 and they do not both have Partner",
                second.name, first.name
            ),
        );
        problem.section = Some(COMMANDER_SECTION.to_owned());
        problems.push(problem);
    }
    let mut seen = BTreeSet::new();
    for (_, card) in &chosen {
        if !card.can_be_commander() && seen.insert(card.card_id) {
            let mut problem = card_problem(
                Rule::Commander,
                card,
                None,
                None,
                format!(
                    "{} cannot be a commander: it is no legendary creature and its text does not allow it",
                    card.name
                ),
            );
            problem.section = Some(COMMANDER_SECTION.to_owned());
            problems.push(problem);
        }
    }
    if !rules.color_identity || chosen.is_empty() {
        return;
    }
    let identity: BTreeSet<&str> = chosen
        .iter()
        .flat_map(|(_, card)| card.color_identity.iter().map(String::as_str))
        .collect();
    let shown = game.order_colors(identity.iter().copied()).join("");
    let mut reported = BTreeSet::new();
    for (line, card) in known {
        if line.section == COMMANDER_SECTION || reported.contains(&card.card_id) {
            continue;
        }
        let outside: Vec<&str> = card
            .color_identity
            .iter()
            .map(String::as_str)
            .filter(|color| !identity.contains(color))
            .collect();
        if !outside.is_empty() {
            reported.insert(card.card_id);
            let shown = if shown.is_empty() {
                "colorless"
            } else {
                &shown
            };
            problems.push(card_problem(
                Rule::ColorIdentity,
                card,
                None,
                None,
                format!(
                    "{} has {} outside the commanders' color identity ({shown})",
                    card.name,
                    outside.join("")
                ),
            ));
        }
    }
}

/// The hero rule (`fab`): exactly one hero in the hero section, of the format's age, and every
/// other card legal for that hero.
fn heroes(
    format: &Format,
    rules: super::HeroRules,
    known: &[(&CheckLine, &CardFacts)],
    count: u32,
    problems: &mut Vec<Problem>,
) {
    let format_name = &format.name;
    if count != 1 {
        problems.push(size_problem(
            Rule::Hero,
            Some(HERO_SECTION),
            count,
            1,
            format!("the deck has {count} heroes; {format_name} needs exactly 1"),
        ));
    }
    let age = |young: bool| if young { "a young" } else { "an adult" };
    let mut seen = BTreeSet::new();
    let mut chosen = Vec::new();
    for (line, card) in known {
        let in_hero_section = line.section == HERO_SECTION;
        let message = match &card.text.hero {
            Some(hero) if in_hero_section => {
                chosen.push((*card, hero));
                (hero.young != rules.young).then(|| {
                    format!(
                        "{} is {} hero; {format_name} needs {} hero",
                        card.name,
                        age(hero.young),
                        age(rules.young)
                    )
                })
            }
            Some(_) => Some(format!(
                "{} is a hero: it belongs in the hero section, not {}",
                card.name, line.section
            )),
            None if in_hero_section => Some(format!("{} is not a hero", card.name)),
            None => None,
        };
        if let Some(message) = message
            && seen.insert((card.card_id, line.section.as_str()))
        {
            let mut problem = card_problem(Rule::Hero, card, None, None, message);
            problem.section = Some(line.section.clone());
            problems.push(problem);
        }
    }
    // The cards' legal heroes are checked against the deck's one hero only.
    let ([(hero_card, hero)], 1) = (chosen.as_slice(), count) else {
        return;
    };
    let mut reported = BTreeSet::new();
    for (line, card) in known {
        if line.section == HERO_SECTION || card.legal_for(hero) || !reported.insert(card.card_id) {
            continue;
        }
        problems.push(card_problem(
            Rule::HeroLegality,
            card,
            None,
            None,
            format!(
                "{} is not legal in a deck of {} ({}): its legal heroes do not name {}",
                card.name, hero_card.name, hero.name, hero.name
            ),
        ));
    }
}
