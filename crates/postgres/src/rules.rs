//! The domain's rules in SQL, each written once: who may read what ([`readable_sql`], the
//! domain's `Readable`), which decks and guides a list holds and in what order (the domain's
//! `DeckQuery` and `GuideQuery`), and the trending bump of a counted view (the domain's
//! `trending::add_view`). Every statement that needs one of these rules takes it from here; the
//! memory store evaluates the domain's own predicates, and a property test
//! (`crates/testkit/tests/read_rules.rs`) holds both stores to the same answers.
//!
//! Conditions are assembled with bind parameters only ([`Conditions`]); the shapes of the page
//! statements built on them are in `decks::list_query`.

use deckhand_domain::catalog::is_game_slug;
use deckhand_domain::decks::{DeckFilters, DeckQuery, DeckSort, SortOrder};
use deckhand_domain::readable::{Reach, Readable};
use deckhand_domain::sideboards::{GuideQuery, GuideSort};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::statement::{Bind, Statement};

/// The read rule over the items aliased `alias` (columns `visibility`, `owner_id` and
/// `is_archived`) reached by `reach`, for the viewer written `viewer` (a placeholder bound to the
/// viewer's id, which may be NULL for anonymous), or for anonymous when `None`: the one SQL
/// spelling of `Readable::admits`.
pub(crate) fn readable_sql(alias: &str, reach: Reach, viewer: Option<&str>) -> String {
    let visible = match viewer {
        Some(viewer) => format!("({alias}.visibility = 'public' OR {alias}.owner_id = {viewer})"),
        None => format!("{alias}.visibility = 'public'"),
    };
    match reach {
        Reach::Listed => format!("NOT {alias}.is_archived AND {visible}"),
        Reach::ById => visible,
    }
}

/// The trending score in `score` after a view of the weight bound at `weight`: the one SQL
/// spelling of `trending::add_view` (log-sum-exp, `-Infinity` for a deck never viewed).
pub(crate) fn trending_bump_sql(score: &str, weight: &str) -> String {
    format!(
        "CASE WHEN {score} = '-Infinity' THEN {weight} \
         ELSE greatest({score}, {weight}) + ln(1 + exp(-least(abs({score} - {weight}), 700))) END"
    )
}

/// The WHERE clause of a list query and its parameters.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    binds: Vec<Bind>,
    /// Whether the best plan depends on a bound value (how common a name pattern or a card
    /// is), so the page query is better planned on every run than kept as a generic plan.
    plan_each_run: bool,
}

/// Whether the plan of a statement sees a filter's value ([`Conditions::row_filters`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    ByPlan,
    NotByPlan,
}

impl Conditions {
    /// Registers `bind` and returns its placeholder.
    pub(crate) fn param(&mut self, bind: Bind) -> String {
        self.binds.push(bind);
        format!("${}", self.binds.len())
    }

    pub(crate) fn add(&mut self, clause: String) {
        self.clauses.push(clause);
    }

    pub(crate) fn sql(&self) -> String {
        self.clauses.join(" AND ")
    }

    /// `sql`, whose placeholders are these conditions', as a statement.
    pub(crate) fn statement(&self, sql: String) -> Statement {
        Statement::new(sql, self.binds.clone())
    }

    /// Whether these conditions have no parameters: a statement without any is planned once
    /// per connection, with the very values it runs with.
    pub(crate) fn is_constant(&self) -> bool {
        self.binds.is_empty()
    }

    /// `slug` as SQL: a literal when it has a game slug's shape ([`is_game_slug`], checked here
    /// again, so nothing else is ever written into the SQL), else a parameter. A first page of
    /// an anonymous list then has no parameters at all.
    pub(crate) fn game(&mut self, slug: &str) -> String {
        if is_game_slug(slug) {
            format!("'{slug}'")
        } else {
            self.param(Bind::Text(slug.to_owned()))
        }
    }

    /// Adds the read rule `rule` over the items aliased `alias`, its viewer bound as a
    /// parameter ([`readable_sql`]).
    pub(crate) fn readable(&mut self, alias: &str, rule: Readable) {
        let viewer = rule.viewer.map(|viewer| self.param(Bind::Uuid(viewer.0)));
        self.add(readable_sql(alias, rule.reach, viewer.as_deref()));
    }

    /// Whether a page of these conditions is better planned on every run (see the field).
    pub(crate) fn plan_each_run(&self) -> bool {
        self.plan_each_run
    }

    /// `column` between the inclusive bounds that are given.
    pub(crate) fn within(
        &mut self,
        column: &str,
        after: Option<OffsetDateTime>,
        before: Option<OffsetDateTime>,
    ) {
        for (comparison, bound) in [(">=", after), ("<=", before)] {
            if let Some(bound) = bound {
                let placeholder = self.param(Bind::Time(bound));
                self.add(format!("{column} {comparison} {placeholder}"));
            }
        }
    }

    /// A placeholder for `bind`, cast to `sql_type`, as `seen` says: written for the plan to
    /// see (the statement is then planned on every run), or read through a scalar subquery, so
    /// that no plan sees it and one generic plan serves every value.
    fn value(&mut self, bind: Bind, sql_type: &str, seen: Seen) -> String {
        let placeholder = self.param(bind);
        match seen {
            Seen::ByPlan => {
                self.plan_each_run = true;
                format!("{placeholder}::{sql_type}")
            }
            Seen::NotByPlan => format!("(SELECT {placeholder}::{sql_type})"),
        }
    }

    /// `column` holds `needle` anywhere, case-insensitively, its LIKE wildcards taken literally;
    /// planned for the pattern, whose selectivity decides the best plan.
    pub(crate) fn contains(&mut self, column: &str, needle: Option<&str>) {
        if let Some(clause) = self.contains_clause(column, needle, Seen::ByPlan) {
            self.add(clause);
        }
    }

    fn contains_clause(
        &mut self,
        column: &str,
        needle: Option<&str>,
        seen: Seen,
    ) -> Option<String> {
        let pattern = self.value(Bind::Text(contains_pattern(needle?)), "text", seen);
        Some(format!("{column} ILIKE {pattern}"))
    }

    /// The card filters (the domain's `DeckFilters::admits_cards`) over the counted cards a deck
    /// keeps in `d.card_ids` (migration 2026-11-28-000300): every card of `all_of`, none of
    /// `none_of`, served by the GIN index `decks_card_ids`.
    fn card_clauses(&mut self, all_of: &[Uuid], none_of: &[Uuid], seen: Seen) -> Vec<String> {
        let mut clauses = Vec::new();
        if !all_of.is_empty() {
            let cards = self.value(Bind::Uuids(all_of.to_vec()), "uuid[]", seen);
            clauses.push(format!("d.card_ids @> {cards}"));
        }
        if !none_of.is_empty() {
            let cards = self.value(Bind::Uuids(none_of.to_vec()), "uuid[]", seen);
            clauses.push(format!("NOT d.card_ids && {cards}"));
        }
        clauses
    }

    /// The filters of a deck list that a walk of a list's index checks deck by deck (the name
    /// and the cards; see [`deck_conditions_but_row_filters`]), as clauses over `d`, their
    /// values seen by the plan or not as `seen` says. How common a name or a card is decides
    /// the best plan: planned for their values, a common card's first page walks the sort's
    /// index, a rare one's is picked from the GIN index and sorted.
    pub(crate) fn row_filters(&mut self, filters: &DeckFilters, seen: Seen) -> Vec<String> {
        let mut clauses: Vec<String> = self
            .contains_clause("d.name", filters.name_contains.as_deref(), seen)
            .into_iter()
            .collect();
        clauses.extend(self.card_clauses(&filters.cards, &filters.exclude_cards, seen));
        clauses
    }

    /// The sieve a walk of a date index passes its decks through before it reads their rows, as
    /// a clause over `walked`, a deck of the walk: no bit of the wanted cards' is missing from
    /// the deck's `card_bloom` (migration 2026-12-07-000100). Every deck holding them passes,
    /// and a few that do not, which the card filters of [`Self::row_filters`] then drop. `None`
    /// when the filters want no card. The wanted bits are named once, so computed once per
    /// statement (a scalar subquery), and no plan sees the cards.
    pub(crate) fn card_sieve(&mut self, walked: &str, filters: &DeckFilters) -> Option<String> {
        if filters.cards.is_empty() {
            return None;
        }
        let cards = self.param(Bind::Uuids(filters.cards.clone()));
        Some(format!(
            "bit_count((SELECT deck_card_bloom({cards}::uuid[])) & ~{walked}.card_bloom) = 0"
        ))
    }

    /// `column` is set (`Some(true)`) or unset (`Some(false)`).
    pub(crate) fn present(&mut self, column: &str, wanted: Option<bool>) {
        if let Some(wanted) = wanted {
            let not = if wanted { "NOT " } else { "" };
            self.add(format!("{column} IS {not}NULL"));
        }
    }
}

/// The SQL keyword of a sort direction.
pub(crate) fn direction(order: SortOrder) -> &'static str {
    match order {
        SortOrder::Asc => "ASC",
        SortOrder::Desc => "DESC",
    }
}

/// `value` as a LIKE pattern matching it anywhere, its wildcards taken literally.
pub(crate) fn contains_pattern(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// Which decks match `query`, whatever the sort and page, and the game as SQL (see
/// [`Conditions::game`]), which the counter sorts repeat on `s.game`. The name and card filters'
/// values are seen by the plan or not as `seen` says ([`Conditions::row_filters`]).
pub(crate) fn deck_conditions(query: &DeckQuery, seen: Seen) -> (Conditions, String) {
    let (mut conditions, game) = deck_conditions_but_row_filters(query);
    for clause in conditions.row_filters(&query.filters, seen) {
        conditions.add(clause);
    }
    (conditions, game)
}

/// [`deck_conditions`] without the name and card filters ([`Conditions::row_filters`]), which a
/// walked or gathered page applies apart (`decks::list_query`).
pub(crate) fn deck_conditions_but_row_filters(query: &DeckQuery) -> (Conditions, String) {
    let mut conditions = Conditions::default();
    // Only `d.` columns: the count and the date sorts read `decks` alone.
    let game = conditions.game(&query.game);
    conditions.add(format!("d.game = {game}"));
    conditions.readable("d", query.readable());
    let filters = &query.filters;
    if let Some(author) = filters.author {
        let placeholder = conditions.param(Bind::Uuid(author.0));
        conditions.add(format!("d.owner_id = {placeholder}"));
    }
    conditions.within(
        "d.created_at",
        filters.created_after,
        filters.created_before,
    );
    conditions.within("d.updated_at", filters.edited_after, filters.edited_before);
    if let Some(format_id) = filters.format_id {
        let placeholder = conditions.param(Bind::Uuid(format_id));
        conditions.add(format!("d.format_id = {placeholder}"));
    }
    let flags = [
        ("d.has_guide", filters.has_guide),
        ("d.has_sideboard_guide", filters.has_sideboard_guide),
        ("d.legal", filters.is_legal),
    ];
    for (column, wanted) in flags {
        if let Some(wanted) = wanted {
            let placeholder = conditions.param(Bind::Bool(wanted));
            conditions.add(format!("{column} = {placeholder}"));
        }
    }
    conditions.present("d.youtube_url", filters.has_video);
    if let Some(source) = filters.forked_from {
        let placeholder = conditions.param(Bind::Uuid(source.0));
        conditions.add(format!("d.forked_from_id = {placeholder}"));
    }
    (conditions, game)
}

/// The order of a deck list: by `sort` in `order`, ties broken by id.
pub(crate) fn deck_order(sort: DeckSort, order: SortOrder) -> String {
    let direction = direction(order);
    // Ties are broken by id in the same direction, so pages never overlap or skip.
    match sort {
        DeckSort::CreatedAt => format!("d.created_at {direction}, d.id {direction}"),
        DeckSort::EditedAt => format!("d.updated_at {direction}, d.id {direction}"),
        DeckSort::Views => format!("s.pageviews {direction}, s.deck_id {direction}"),
        DeckSort::Likes => format!("s.likes {direction}, s.deck_id {direction}"),
        DeckSort::Trending => format!("s.trending {direction}, s.deck_id {direction}"),
    }
}

/// Which guides match `query`, whatever the sort and page, and the game as SQL (see
/// [`Conditions::game`]).
pub(crate) fn guide_conditions(query: &GuideQuery) -> (Conditions, String) {
    let mut c = Conditions::default();
    let game = c.game(&query.game);
    c.add(format!("g.game = {game}"));
    c.readable("g", query.readable());
    let f = &query.filters;
    if let Some(author) = f.author {
        let p = c.param(Bind::Uuid(author.0));
        c.add(format!("g.owner_id = {p}"));
    }
    c.within("g.created_at", f.created_after, f.created_before);
    c.within("g.updated_at", f.edited_after, f.edited_before);
    if let Some(deck) = f.deck {
        let p = c.param(Bind::Uuid(deck.0));
        c.add(format!(
            "g.id IN (SELECT gd.guide_id FROM sideboard_guide_decks gd WHERE gd.deck_id = {p})"
        ));
    }
    if let Some(archetype) = &f.opponent_archetype_contains {
        let p = c.param(Bind::Text(contains_pattern(archetype)));
        c.add(format!(
            "EXISTS (SELECT 1 FROM sideboard_matchups m \
             WHERE m.guide_id = g.id AND m.opponent_archetype ILIKE {p})"
        ));
    }
    c.contains("g.format", f.format_contains.as_deref());
    c.present("g.youtube_url", f.has_video);
    c.contains("g.name", f.name_contains.as_deref());
    (c, game)
}

/// The order of a guide list: by `sort` in `order`, ties broken by id.
pub(crate) fn guide_order(sort: GuideSort, order: SortOrder) -> String {
    let direction = direction(order);
    let column = match sort {
        GuideSort::CreatedAt => "g.created_at",
        GuideSort::EditedAt => "g.updated_at",
        GuideSort::Likes => "g.likes",
        GuideSort::Views => "g.pageviews",
    };
    // Ties are broken by id in the same direction, so pages never overlap or skip.
    format!("{column} {direction}, g.id {direction}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_take_wildcards_literally() {
        assert_eq!(contains_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }

    #[test]
    fn only_a_slug_shaped_game_is_written_into_the_sql() {
        let mut conditions = Conditions::default();
        assert_eq!(conditions.game("mtg"), "'mtg'");
        assert!(conditions.is_constant());
        for hostile in ["mtg' OR '1'='1", "MTG", "", &"a".repeat(41)] {
            let mut conditions = Conditions::default();
            assert_eq!(conditions.game(hostile), "$1", "{hostile:?}");
            assert!(!conditions.is_constant());
        }
    }

    #[test]
    fn the_read_rule_has_one_spelling_per_reach_and_viewer() {
        assert_eq!(
            readable_sql("d", Reach::Listed, None),
            "NOT d.is_archived AND d.visibility = 'public'"
        );
        assert_eq!(
            readable_sql("i", Reach::ById, Some("$3")),
            "(i.visibility = 'public' OR i.owner_id = $3)"
        );
    }
}
