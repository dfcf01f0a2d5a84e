//! The SQL of a deck list, assembled from the filters with bind parameters only: the WHERE
//! clause (shared by the count and the page), the order, and the page query. Plans of every
//! shape are in docs/benchmarks.md. [`Conditions`] also builds the sideboard-guide list.

use deckhand_domain::catalog::is_game_slug;
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

/// Which decks match `query`, whatever the sort and page, and the game as SQL (see
/// [`Conditions::game`]), which the counter sorts repeat on `s.game`.
pub(super) fn list_conditions(query: &DeckQuery) -> (Conditions, String) {
    let (mut conditions, game) = conditions_but_name(query);
    conditions.contains("d.name", query.filters.name_contains.as_deref());
    (conditions, game)
}

/// [`list_conditions`] without the name filter, which a walked page applies apart
/// ([`walked_page_sql`]).
pub(super) fn conditions_but_name(query: &DeckQuery) -> (Conditions, String) {
    let mut conditions = Conditions::default();
    // Only `d.` columns: the count and the date sorts read `decks` alone.
    let game = conditions.game(&query.game);
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
    (conditions, game)
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

/// Whether `sort` is by a counter, which `deck_stats` holds.
fn by_counter(sort: DeckSort) -> bool {
    matches!(sort, DeckSort::Views | DeckSort::Likes | DeckSort::Trending)
}

/// The query of a page's ids, in the page's order: it reads the narrow index entries only, so
/// the rows an OFFSET skips are never joined to users and deck_stats nor sorted whole (a deep
/// page went from ~100 ms to ~3 ms on 200,000 decks, docs/benchmarks.md).
pub(super) fn page_ids_sql(
    query: &DeckQuery,
    game: &str,
    where_clause: &str,
    window: &str,
) -> String {
    let order = order_by(query.sort, query.order);
    // deck_stats drives the counter sorts through its (game, counter) indexes; a deck's stats
    // row always copies its game, so this repeats `d.game`.
    let from = if by_counter(query.sort) {
        format!("deck_stats s JOIN decks d ON d.id = s.deck_id AND s.game = {game}")
    } else {
        "decks d".to_owned()
    };
    format!("SELECT d.id FROM {from} WHERE {where_clause} ORDER BY {order} {window}")
}

/// The page query: [`page_ids_sql`] as its inner query, and `select` (the list columns, never
/// the card lines) of those ids, sorted again (the order is total: ties broken by id).
pub(super) fn page_sql(
    query: &DeckQuery,
    select: &str,
    game: &str,
    where_clause: &str,
    window: &str,
) -> String {
    let ids = page_ids_sql(query, game, where_clause, window);
    let order = order_by(query.sort, query.order);
    format!("WITH page AS ({ids}) {select} JOIN page ON page.id = d.id ORDER BY {order}")
}

/// A first page as one plain query, for conditions without parameters: PostgreSQL plans it
/// once per connection with its very values, and reads each row once as the index gives it
/// (editedAt 108 buffers and 0.08 ms against [`page_sql`]'s 224 and 0.25 ms; views 183 and
/// 0.12 ms against 320 and 0.23 ms; docs/benchmarks.md). With a parameter PostgreSQL plans this
/// form on every run, so [`page_sql`] serves those.
pub(super) fn first_page_sql(
    query: &DeckQuery,
    select: &str,
    game: &str,
    where_clause: &str,
    window: &str,
) -> String {
    let order = order_by(query.sort, query.order);
    let stats_game = if by_counter(query.sort) {
        format!(" AND s.game = {game}")
    } else {
        String::new()
    };
    format!("{select} WHERE {where_clause}{stats_game} ORDER BY {order} {window}")
}

/// How many decks of a date-sorted list a name-filtered page walks, in the list's order, looking
/// for its matches before it hands over to statements planned for the pattern.
pub(super) const NAME_WALK: u32 = 2_000;

/// The date a sort orders by, for the sorts whose index also holds each deck's name.
fn walked_date(sort: DeckSort) -> Option<&'static str> {
    match sort {
        DeckSort::CreatedAt => Some("d.created_at"),
        DeckSort::EditedAt => Some("d.updated_at"),
        DeckSort::Views | DeckSort::Likes | DeckSort::Trending => None,
    }
}

/// A name-filtered page of a date sort as one statement on a generic plan: it walks the first
/// [`NAME_WALK`] decks of the list (`where_clause` without the name) in order, an index-only
/// scan of the date index, which holds the names, and keeps those whose name matches the
/// pattern bound at `pattern`. The pattern is read through a scalar subquery, so no plan sees
/// it: every plan of this statement is the same walk, and PostgreSQL keeps a generic one instead
/// of planning each run for the pattern (0.12 ms, more than the walk takes). A page the walk
/// fills is the page; one it leaves short may have matches further down the list, which
/// [`page_ids_sql`] finds. `None` for the counter sorts, whose indexes do not hold names, and
/// for a page that ends past the walked head, which no walk could fill.
pub(super) fn walked_page_sql(
    query: &DeckQuery,
    select: &str,
    where_clause: &str,
    pattern: &str,
    window: &str,
) -> Option<String> {
    let date = walked_date(query.sort)?;
    if query.page.offset() + query.page.limit > NAME_WALK {
        return None;
    }
    let order = order_by(query.sort, query.order);
    Some(format!(
        "WITH page AS (SELECT d.id FROM (SELECT d.id, d.name, {date} FROM decks d \
         WHERE {where_clause} ORDER BY {order} LIMIT {NAME_WALK}) AS d \
         WHERE d.name ILIKE (SELECT {pattern}::text) ORDER BY {order} {window}) \
         {select} JOIN page ON page.id = d.id ORDER BY {order}"
    ))
}

/// `select` of the decks whose ids are `$1`, in the page's order: the second half of
/// [`page_sql`] on its own, for pages whose ids are picked by a statement of their own. The ids
/// are read through a scalar subquery, so no plan sees how many there are: a page of one or two
/// ids planned cheaper than the generic plan, and PostgreSQL then planned it on every run.
pub(super) fn rows_by_ids_sql(query: &DeckQuery, select: &str) -> String {
    let order = order_by(query.sort, query.order);
    format!("{select} WHERE d.id = ANY((SELECT $1::uuid[])::uuid[]) ORDER BY {order}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_take_wildcards_literally() {
        assert_eq!(contains_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }

    #[test]
    fn only_date_sorted_pages_within_the_walked_head_are_walked() {
        let walked = |sort, page, limit| {
            let query = DeckQuery {
                game: "mtg".into(),
                viewer: None,
                filters: deckhand_domain::decks::DeckFilters::default(),
                sort,
                order: SortOrder::Desc,
                page: PageRequest { page, limit },
            };
            walked_page_sql(&query, "SELECT d.id FROM decks d", "true", "$1", "LIMIT 1").is_some()
        };
        assert!(walked(DeckSort::EditedAt, 1, 20));
        assert!(walked(DeckSort::CreatedAt, 20, 100));
        assert!(!walked(DeckSort::CreatedAt, 21, 100));
        for counter in [DeckSort::Views, DeckSort::Likes, DeckSort::Trending] {
            assert!(!walked(counter, 1, 20));
        }
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
}
