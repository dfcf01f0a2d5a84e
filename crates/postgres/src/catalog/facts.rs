//! Format rules, card facts and legality history (migration
//! `2026-11-26-000100_format_checks`): how imports record them and how checks read them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use anyhow::Context as _;
use deckhand_domain::catalog::{CatalogEntry, name_key};
use deckhand_domain::formats::{
    CardFacts, CardTextRules, CommanderRules, CopyAllowance, FormatRules, HeroCard, HeroRules,
    Legality, LegalityChange, LegalityHistory, PartnerAbility, recorded_at,
};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Integer, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::TryStreamExt as _;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error;
use crate::statement::{Bind, Statement};

/// Every format with its rules, if any, in display order per game.
pub(super) const FORMATS_WITH_RULES: &str = "\
SELECT f.game, f.id, f.slug, f.name, r.main_section, r.main_min, r.main_max, r.sideboard_max,
       r.copy_limit, r.singleton, r.commander_count_max, r.commander_deck_size,
       r.commander_color_identity, r.pool_max, r.hero_young
FROM formats f LEFT JOIN format_rules r ON r.format_id = f.id
ORDER BY f.game, f.position";

#[derive(Debug, QueryableByName)]
pub(super) struct FormatRulesRow {
    #[diesel(sql_type = Text)]
    pub(super) game: String,
    #[diesel(sql_type = SqlUuid)]
    pub(super) id: Uuid,
    #[diesel(sql_type = Text)]
    pub(super) slug: String,
    #[diesel(sql_type = Text)]
    pub(super) name: String,
    #[diesel(sql_type = Nullable<Text>)]
    main_section: Option<String>,
    #[diesel(sql_type = Nullable<Integer>)]
    main_min: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    main_max: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    sideboard_max: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    copy_limit: Option<i32>,
    #[diesel(sql_type = Nullable<Bool>)]
    singleton: Option<bool>,
    #[diesel(sql_type = Nullable<Integer>)]
    commander_count_max: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    commander_deck_size: Option<i32>,
    #[diesel(sql_type = Nullable<Bool>)]
    commander_color_identity: Option<bool>,
    #[diesel(sql_type = Nullable<Integer>)]
    pool_max: Option<i32>,
    #[diesel(sql_type = Nullable<Bool>)]
    hero_young: Option<bool>,
}

fn count(value: i32) -> u32 {
    // The table's CHECKs keep every count non-negative.
    u32::try_from(value).unwrap_or(0)
}

impl FormatRulesRow {
    /// The rules of this row's format; `None` without a `format_rules` row.
    pub(super) fn rules(&self) -> Option<FormatRules> {
        let commander = match (
            self.commander_count_max,
            self.commander_deck_size,
            self.commander_color_identity,
        ) {
            (Some(count_max), Some(deck_size), Some(color_identity)) => Some(CommanderRules {
                count_max: count(count_max),
                deck_size: count(deck_size),
                color_identity,
            }),
            _ => None,
        };
        Some(FormatRules {
            main_section: self.main_section.clone()?,
            main_min: count(self.main_min?),
            main_max: self.main_max.map(count),
            sideboard_max: self.sideboard_max.map(count),
            copy_limit: count(self.copy_limit?),
            singleton: self.singleton?,
            commander,
            pool_max: self.pool_max.map(count),
            hero: self.hero_young.map(|young| HeroRules { young }),
        })
    }
}

/// The columns of a [`FactsRow`], over `catalog_cards c`. A card's history is its own records
/// (`card_legalities`) with the announced changes of its name (`legality_announcements`); at
/// the same time an announcement comes first, so the card's own record speaks.
macro_rules! facts_select {
    () => {
        "SELECT c.card_id, c.name, c.type_line, c.color_identity,
       coalesce(r.any_number, false) AS any_number, r.copies_max,
       coalesce(r.can_be_commander, false) AS can_be_commander,
       coalesce(r.partner, false) AS partner, r.partner_with, r.hero, r.hero_young,
       coalesce(r.legal_heroes, '{}') AS legal_heroes,
       coalesce(h.formats, '{}') AS formats, coalesce(h.statuses, '{}') AS statuses,
       coalesce(h.valid_froms, '{}') AS valid_froms, coalesce(h.befores, '{}') AS befores
FROM catalog_cards c
LEFT JOIN card_text_rules r ON r.game = c.game AND r.name_key = c.name_key
LEFT JOIN LATERAL (
    SELECT array_agg(l.format ORDER BY l.format, l.valid_from, l.rank) AS formats,
           array_agg(l.status ORDER BY l.format, l.valid_from, l.rank) AS statuses,
           array_agg(l.valid_from ORDER BY l.format, l.valid_from, l.rank) AS valid_froms,
           array_agg(l.status_before ORDER BY l.format, l.valid_from, l.rank) AS befores
    FROM (
        SELECT o.format, o.valid_from, o.status, NULL::text AS status_before, 1 AS rank
        FROM card_legalities o WHERE o.game = c.game AND o.card_id = c.card_id
        UNION ALL
        SELECT a.format, a.effective::timestamp AT TIME ZONE 'UTC', a.status_after,
               a.status_before, 0
        FROM legality_announcements a WHERE a.game = c.game AND a.name_key = c.name_key
    ) l
) h ON true
WHERE c.game = $1"
    };
}

/// The facts of every card of a game, for its resident copy.
pub(super) const ALL_FACTS: &str = facts_select!();

/// The facts of some cards of a game, when no resident copy can be trusted.
pub(super) const SOME_FACTS: &str = concat!(facts_select!(), " AND c.card_id = ANY($2::uuid[])");

#[derive(Debug, QueryableByName)]
pub(super) struct FactsRow {
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    type_line: String,
    #[diesel(sql_type = Array<Text>)]
    color_identity: Vec<String>,
    #[diesel(sql_type = Bool)]
    any_number: bool,
    #[diesel(sql_type = Nullable<Integer>)]
    copies_max: Option<i32>,
    #[diesel(sql_type = Bool)]
    can_be_commander: bool,
    #[diesel(sql_type = Bool)]
    partner: bool,
    #[diesel(sql_type = Nullable<Text>)]
    partner_with: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    hero: Option<String>,
    #[diesel(sql_type = Nullable<Bool>)]
    hero_young: Option<bool>,
    #[diesel(sql_type = Array<Text>)]
    legal_heroes: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    formats: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    statuses: Vec<String>,
    #[diesel(sql_type = Array<Timestamptz>)]
    valid_froms: Vec<OffsetDateTime>,
    #[diesel(sql_type = Array<Nullable<Text>>)]
    befores: Vec<Option<String>>,
}

/// The distinct legality histories of a game's cards, each held once.
pub(super) type SharedHistories = HashSet<Arc<LegalityHistory>>;

impl FactsRow {
    /// The card's facts, its legality history shared with the cards in `shared` that have the
    /// same.
    pub(super) fn into_domain(self, shared: &mut SharedHistories) -> anyhow::Result<CardFacts> {
        let copies = match (self.any_number, self.copies_max) {
            (true, _) => CopyAllowance::Any,
            (false, Some(max)) => CopyAllowance::UpTo(count(max)),
            (false, None) => CopyAllowance::Format,
        };
        let mut legalities = LegalityHistory::new();
        let parse = |status: &str| {
            Legality::parse(status)
                .with_context(|| format!("card {} has legality {status:?}", self.card_id))
        };
        for (((format, status), from), before) in self
            .formats
            .into_iter()
            .zip(self.statuses)
            .zip(self.valid_froms)
            .zip(self.befores)
        {
            let status = parse(&status)?;
            let before = before.as_deref().map(parse).transpose()?;
            legalities.entry(format).or_default().push(LegalityChange {
                from,
                status,
                before,
            });
        }
        Ok(CardFacts {
            card_id: self.card_id,
            name: self.name,
            type_line: self.type_line,
            color_identity: self.color_identity,
            text: CardTextRules {
                copies,
                can_be_commander: self.can_be_commander,
                partner: match (self.partner, self.partner_with) {
                    (_, Some(name)) => PartnerAbility::With(name),
                    (true, None) => PartnerAbility::Any,
                    (false, None) => PartnerAbility::None,
                },
                hero: self.hero.map(|name| HeroCard {
                    name,
                    young: self.hero_young.unwrap_or(false),
                }),
                legal_heroes: self.legal_heroes,
            },
            legalities: share(shared, legalities),
        })
    }
}

/// `history`, or the equal one `shared` holds.
fn share(shared: &mut SharedHistories, history: LegalityHistory) -> Arc<LegalityHistory> {
    if let Some(held) = shared.get(&history) {
        return held.clone();
    }
    let history = Arc::new(history);
    shared.insert(history.clone());
    history
}

/// Every card's facts of `game`, by card id, decoded as the rows arrive, the cards with the
/// same legality history sharing one copy of it.
pub(super) async fn load_facts(
    conn: &mut AsyncPgConnection,
    game: &str,
) -> anyhow::Result<HashMap<Uuid, Arc<CardFacts>>> {
    let mut rows = Statement::new(ALL_FACTS, vec![Bind::Text(game.to_owned())])
        .load_stream::<FactsRow>(conn)
        .await
        .map_err(error::query)
        .context("loading card facts")?;
    let (mut facts, mut shared) = (HashMap::new(), SharedHistories::new());
    while let Some(row) = rows
        .try_next()
        .await
        .map_err(error::query)
        .context("loading card facts")?
    {
        facts.insert(row.card_id, Arc::new(row.into_domain(&mut shared)?));
    }
    Ok(facts)
}

/// Adds a history row from the file's day `$5` for each (card, format of the game, status)
/// given: the statuses that differ from the one in force that day ([`changed_legalities`]).
const RECORD_IMPORTED_LEGALITIES: &str = "\
INSERT INTO card_legalities (game, card_id, format, valid_from, status, source)
SELECT $1, k.card_id, k.format, $5, k.status, 'import'
FROM unnest($2::uuid[], $3::text[], $4::text[]) AS k(card_id, format, status)
JOIN formats f ON f.game = $1 AND f.slug = k.format
ON CONFLICT (game, card_id, format, valid_from)
DO UPDATE SET status = excluded.status, source = excluded.source";

/// `$10` holds each card's legal heroes as one text, the names joined by a line feed (no hero
/// name holds one), since `unnest` of a two-dimensional array would flatten it.
const UPSERT_TEXT_RULES: &str = "\
INSERT INTO card_text_rules (game, name_key, any_number, copies_max, can_be_commander, partner,
                             partner_with, hero, hero_young, legal_heroes)
SELECT $1, k.name_key, k.any_number, k.copies_max, k.can_be_commander, k.partner, k.partner_with,
       k.hero, CASE WHEN k.hero IS NOT NULL THEN k.hero_young END,
       string_to_array(k.legal_heroes, E'\\n')
FROM unnest($2::text[], $3::bool[], $4::int8[], $5::bool[], $6::bool[], $7::text[], $8::text[],
            $9::bool[], $10::text[])
    AS k(name_key, any_number, copies_max, can_be_commander, partner, partner_with, hero,
         hero_young, legal_heroes)
ON CONFLICT (game, name_key) DO UPDATE SET any_number = excluded.any_number,
    copies_max = excluded.copies_max, can_be_commander = excluded.can_be_commander,
    partner = excluded.partner, partner_with = excluded.partner_with, hero = excluded.hero,
    hero_young = excluded.hero_young, legal_heroes = excluded.legal_heroes";

const DELETE_TEXT_RULES: &str =
    "DELETE FROM card_text_rules WHERE game = $1 AND name_key = ANY($2::text[])";

/// The columns of [`UPSERT_TEXT_RULES`], one element per card.
#[derive(Default)]
struct TextRulesColumns {
    name_keys: Vec<String>,
    any_numbers: Vec<bool>,
    copies_maxes: Vec<Option<i64>>,
    can_be_commanders: Vec<bool>,
    partners: Vec<bool>,
    partners_with: Vec<Option<String>>,
    heroes: Vec<Option<String>>,
    heroes_young: Vec<bool>,
    legal_heroes: Vec<String>,
}

/// The legality history of some cards of a game, records and announcements (of their names)
/// alike, each card's and format's oldest first, an announcement before a record of the same
/// time: what [`recorded_at`] reads.
const SOME_HISTORIES: &str = "\
SELECT l.card_id, l.format, l.valid_from, l.status FROM (
    SELECT o.card_id, o.format, o.valid_from, o.status, 1 AS rank FROM card_legalities o
    WHERE o.game = $1 AND o.card_id = ANY($2::uuid[])
    UNION ALL
    SELECT c.card_id, a.format, a.effective::timestamp AT TIME ZONE 'UTC', a.status_after, 0
    FROM catalog_cards c
    JOIN legality_announcements a ON a.game = c.game AND a.name_key = c.name_key
    WHERE c.game = $1 AND c.card_id = ANY($2::uuid[])
) l
ORDER BY l.card_id, l.format, l.valid_from, l.rank";

#[derive(QueryableByName)]
struct HistoryRow {
    #[diesel(sql_type = SqlUuid)]
    card_id: Uuid,
    #[diesel(sql_type = Text)]
    format: String,
    #[diesel(sql_type = Timestamptz)]
    valid_from: OffsetDateTime,
    #[diesel(sql_type = Text)]
    status: String,
}

/// The (card, format, status) triples of `speaking` whose status differs from the one in force
/// on the file's day `at` ([`recorded_at`] of the card's history, read in one statement): a
/// re-import of the same file records nothing.
async fn changed_legalities(
    conn: &mut AsyncPgConnection,
    game: &str,
    speaking: &[&CatalogEntry],
    at: OffsetDateTime,
) -> anyhow::Result<(Vec<Uuid>, Vec<String>, Vec<String>)> {
    let (mut ids, mut formats, mut statuses) = (Vec::new(), Vec::new(), Vec::new());
    if speaking.is_empty() {
        return Ok((ids, formats, statuses));
    }
    let card_ids = speaking
        .iter()
        .map(|entry| entry.printing.card_id)
        .collect();
    let rows: Vec<HistoryRow> = Statement::new(
        SOME_HISTORIES,
        vec![Bind::Text(game.to_owned()), Bind::Uuids(card_ids)],
    )
    .load(conn)
    .await
    .map_err(error::query)
    .context("reading the legalities in force")?;
    let mut histories: HashMap<(Uuid, String), Vec<LegalityChange>> = HashMap::new();
    for row in rows {
        let status = Legality::parse(&row.status)
            .with_context(|| format!("a legality history holds status {:?}", row.status))?;
        histories
            .entry((row.card_id, row.format))
            .or_default()
            .push(LegalityChange::recorded(row.valid_from, status));
    }
    for entry in speaking {
        let card_id = entry.printing.card_id;
        for (format, status) in entry.legalities.iter() {
            let Some(legality) = Legality::parse(status) else {
                continue;
            };
            let in_force = histories
                .get(&(card_id, format.clone()))
                .and_then(|changes| recorded_at(changes, at));
            if in_force != Some(legality) {
                ids.push(card_id);
                formats.push(format.clone());
                statuses.push(status.clone());
            }
        }
    }
    Ok((ids, formats, statuses))
}

/// Records the legalities of `speaking` (per card, the entry that speaks for its legality)
/// that differ from those in force on the file's day `imported_at`, from that day on.
pub(super) async fn record_imported_legalities(
    conn: &mut AsyncPgConnection,
    game: &str,
    speaking: &[&CatalogEntry],
    imported_at: OffsetDateTime,
) -> anyhow::Result<()> {
    let (ids, formats, statuses) = changed_legalities(conn, game, speaking, imported_at).await?;
    if ids.is_empty() {
        return Ok(());
    }
    Statement::new(
        RECORD_IMPORTED_LEGALITIES,
        vec![
            Bind::Text(game.to_owned()),
            Bind::Uuids(ids),
            Bind::Texts(formats),
            Bind::Texts(statuses),
            Bind::Time(imported_at),
        ],
    )
    .execute(conn)
    .await
    .map_err(error::query)
    .context("recording imported legalities")?;
    Ok(())
}

/// Stores the rules-text clauses of `cards` (one entry per card, the last of the batch).
pub(super) async fn store_text_rules(
    conn: &mut AsyncPgConnection,
    game: &str,
    cards: &[&CatalogEntry],
) -> anyhow::Result<()> {
    let mut upserted = TextRulesColumns::default();
    let mut cleared = Vec::new();
    for entry in cards {
        let Some(rules) = &entry.text_rules else {
            continue;
        };
        let key = name_key(&entry.printing.name);
        if rules.is_default() {
            cleared.push(key);
            continue;
        }
        let (any, max) = match rules.copies {
            CopyAllowance::Any => (true, None),
            CopyAllowance::UpTo(max) => (false, Some(i64::from(max))),
            CopyAllowance::Format => (false, None),
        };
        upserted.name_keys.push(key);
        upserted.any_numbers.push(any);
        upserted.copies_maxes.push(max);
        upserted.can_be_commanders.push(rules.can_be_commander);
        let (partner, partner_with) = match &rules.partner {
            PartnerAbility::None => (false, None),
            PartnerAbility::Any => (true, None),
            PartnerAbility::With(name) => (false, Some(name.clone())),
        };
        upserted.partners.push(partner);
        upserted.partners_with.push(partner_with);
        upserted
            .heroes
            .push(rules.hero.as_ref().map(|hero| hero.name.clone()));
        upserted
            .heroes_young
            .push(rules.hero.as_ref().is_some_and(|hero| hero.young));
        upserted.legal_heroes.push(rules.legal_heroes.join("\n"));
    }
    if !upserted.name_keys.is_empty() {
        Statement::new(
            UPSERT_TEXT_RULES,
            vec![
                Bind::Text(game.to_owned()),
                Bind::Texts(upserted.name_keys),
                Bind::Bools(upserted.any_numbers),
                Bind::OptionalInts(upserted.copies_maxes),
                Bind::Bools(upserted.can_be_commanders),
                Bind::Bools(upserted.partners),
                Bind::OptionalTexts(upserted.partners_with),
                Bind::OptionalTexts(upserted.heroes),
                Bind::Bools(upserted.heroes_young),
                Bind::Texts(upserted.legal_heroes),
            ],
        )
        .execute(conn)
        .await
        .map_err(error::query)
        .context("storing rules-text clauses")?;
    }
    if !cleared.is_empty() {
        Statement::new(
            DELETE_TEXT_RULES,
            vec![Bind::Text(game.to_owned()), Bind::Texts(cleared)],
        )
        .execute(conn)
        .await
        .map_err(error::query)
        .context("clearing rules-text clauses")?;
    }
    Ok(())
}

/// An operator's record: replaces one of the same card, format and time.
pub(super) const RECORD_LEGALITY: &str = "\
INSERT INTO card_legalities (game, card_id, format, valid_from, status, source)
VALUES ($1, $2, $3, $4, $5, 'operator')
ON CONFLICT (game, card_id, format, valid_from)
DO UPDATE SET status = excluded.status, source = excluded.source";

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn history(status: Legality) -> LegalityHistory {
        LegalityHistory::from([(
            "modern".to_owned(),
            vec![LegalityChange::recorded(
                datetime!(2019-06-01 00:00 UTC),
                status,
            )],
        )])
    }

    #[test]
    fn equal_histories_are_held_once_and_different_ones_apart() {
        let mut shared = SharedHistories::new();
        let first = share(&mut shared, history(Legality::Legal));
        let same = share(&mut shared, history(Legality::Legal));
        let banned = share(&mut shared, history(Legality::Banned));
        assert!(Arc::ptr_eq(&first, &same));
        assert!(!Arc::ptr_eq(&first, &banned));
        assert_eq!(*banned, history(Legality::Banned));
        assert_eq!(shared.len(), 2);
    }
}
