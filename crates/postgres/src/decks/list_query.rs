//! The SQL of a deck list, assembled from the filters with bind parameters only: the WHERE
//! clause (shared by the count and the page), the order, and the page query. Plans of every
//! shape are in docs/benchmarks.md. [`Conditions`] also builds the sideboard-guide list.

use deckhand_domain::decks::{DeckQuery, DeckSort, PageRequest, RESULT_WINDOW, SortOrder};
use time::OffsetDateTime;

use crate::statement::{Bind, Statement};

/// The WHERE clause of a list query and its parameters.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    binds: Vec<Bind>,
    /// Whether the best plan depends on a bound value (a name pattern's selectivity), so the
    /// page query is better planned on every run than kept as a generic plan.
    plan_each_run: bool,
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

    /// `column` holds `needle` anywhere, case-insensitively, its LIKE wildcards taken literally.
    pub(crate) fn contains(&mut self, column: &str, needle: Option<&str>) {
        if let Some(needle) = needle {
            self.plan_each_run = true;
            let placeholder = self.param(Bind::Text(contains_pattern(needle)));
            self.add(format!("{column} ILIKE {placeholder}"));
        }
    }

    /// `column` is set (`Some(true)`) or unset (`Some(false)`).
    pub(crate) fn present(&mut self, column: &str, wanted: Option<bool>) {
        if let Some(wanted) = wanted {
            let not = if wanted { "NOT " } else { "" };
            self.add(format!("{column} IS {not}NULL"));
        }
    }
}

/// The `LIMIT` and `OFFSET` of `page`. The limit (1 to 100, validated by the domain) is written
/// into the SQL and the first page has no `OFFSET`, so PostgreSQL keeps one generic plan of the
/// prepared page query: with either as a parameter its generic plan looks costlier than a
/// custom one, and the query was planned anew on every run (docs/benchmarks.md). Deeper pages
/// bind their offset, so the statements a connection prepares stay few. A name filter keeps
/// both as parameters: a generic plan cannot see how rare the pattern is, and measured at
/// half the throughput of planning each run.
pub(crate) fn page_window(conditions: &mut Conditions, page: PageRequest) -> String {
    if conditions.plan_each_run {
        let limit = conditions.param(Bind::Int(i64::from(page.limit)));
        let offset = conditions.param(Bind::Int(i64::from(page.offset())));
        return format!("LIMIT {limit} OFFSET {offset}");
    }
    match page.offset() {
        0 => format!("LIMIT {}", page.limit),
        offset => {
            let offset = conditions.param(Bind::Int(i64::from(offset)));
            format!("LIMIT {} OFFSET {offset}", page.limit)
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

/// Which decks match `query`, whatever the sort and page.
pub(super) fn list_conditions(query: &DeckQuery) -> Conditions {
    let mut conditions = Conditions::default();
    // Only `d.` columns: the count and the date sorts read `decks` alone. The game is always
    // `$1`, which the counter sorts repeat on `s.game` (see `page_sql`).
    let game = conditions.param(Bind::Text(query.game.clone()));
    conditions.add(format!("d.game = {game} AND NOT d.is_archived"));
    match query.viewer {
        Some(viewer) => {
            let viewer = conditions.param(Bind::Uuid(viewer.0));
            conditions.add(format!(
                "(d.visibility = 'public' OR d.owner_id = {viewer})"
            ));
        }
        None => conditions.add("d.visibility = 'public'".to_owned()),
    }
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
    conditions.contains("d.name", filters.name_contains.as_deref());
    conditions
}

fn order_by(sort: DeckSort, order: SortOrder) -> String {
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

/// The count of matches, capped one past the result window. No join: every deck has exactly
/// one stats row, so counting decks is enough, and the date indexes (which include visibility
/// and owner) answer it by index-only scan.
pub(super) fn count_sql(where_clause: &str) -> String {
    format!(
        "SELECT count(*) AS matches FROM (SELECT 1 FROM decks d \
         WHERE {where_clause} LIMIT {}) AS matching",
        RESULT_WINDOW + 1
    )
}

/// The page query. The inner query picks the page's ids from the narrow index entries, so
/// the rows an OFFSET skips are never joined to users and deck_stats nor sorted whole (a deep
/// page went from ~100 ms to ~3 ms on 200,000 decks, docs/benchmarks.md); the outer one reads
/// those ids' list columns (`select`, never the card lines) and sorts them again, the order
/// being total (ties broken by id).
pub(super) fn page_sql(
    query: &DeckQuery,
    select: &str,
    where_clause: &str,
    window: &str,
) -> String {
    let order = order_by(query.sort, query.order);
    let from = match query.sort {
        DeckSort::CreatedAt | DeckSort::EditedAt => "decks d".to_owned(),
        // deck_stats drives the counter sorts through its (game, counter) indexes; a deck's
        // stats row always copies its game, so this repeats `d.game = $1`.
        DeckSort::Views | DeckSort::Likes | DeckSort::Trending => {
            "deck_stats s JOIN decks d ON d.id = s.deck_id AND s.game = $1".to_owned()
        }
    };
    format!(
        "WITH page AS (SELECT d.id FROM {from} WHERE {where_clause} \
         ORDER BY {order} {window}) \
         {select} JOIN page ON page.id = d.id ORDER BY {order}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_take_wildcards_literally() {
        assert_eq!(contains_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
