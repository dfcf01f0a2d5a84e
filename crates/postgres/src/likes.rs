//! Likes of decks and guides: the like row and the counter it moves, written in one statement
//! that also checks the liker may read the item (the domain's read rule, `rules::readable_sql`), so
//! concurrent likes lose nothing and the likes sort follows at once.

use anyhow::Context as _;
use deckhand_domain::readable::Reach;
use diesel::QueryableByName;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::rules::readable_sql;
use crate::statement::{Bind, Statement};

/// Where the likes of one kind of item live.
pub(crate) struct LikeTables {
    /// The item table, with `id`, `game`, `visibility` and `owner_id`.
    pub(crate) items: &'static str,
    /// The like rows: (`<item column>`, `user_id`, `liked_at`), keyed by the first two.
    pub(crate) likes: &'static str,
    pub(crate) item_column: &'static str,
    /// The table and key column of the `likes` counter.
    pub(crate) counter: &'static str,
    pub(crate) counter_key: &'static str,
}

#[derive(QueryableByName)]
struct Visible {
    #[diesel(sql_type = Bool)]
    visible: bool,
}

fn statement(tables: &LikeTables, liked: bool) -> String {
    let LikeTables {
        items,
        likes,
        item_column,
        counter,
        counter_key,
    } = tables;
    let (change, step) = if liked {
        (
            format!(
                "INSERT INTO {likes} ({item_column}, user_id, liked_at) SELECT id, $3, $4 FROM target
                 ON CONFLICT ({item_column}, user_id) DO NOTHING RETURNING {item_column}"
            ),
            "+ 1",
        )
    } else {
        (
            format!(
                "DELETE FROM {likes} WHERE {item_column} IN (SELECT id FROM target) AND user_id = $3
                 RETURNING {item_column}"
            ),
            "- 1",
        )
    };
    let readable = readable_sql("i", Reach::ById, Some("$3"));
    format!(
        "WITH target AS (
             SELECT i.id FROM {items} i WHERE i.id = $1 AND i.game = $2 AND {readable}
         ), changed AS ({change}
         ), counted AS (
             UPDATE {counter} SET likes = likes {step}
             WHERE {counter_key} IN (SELECT {item_column} FROM changed) RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM target) AS visible"
    )
}

/// Records or withdraws `user`'s like of item `id` of `game`; false when there is no such
/// item or `user` may not see it.
pub(crate) async fn set_like(
    pool: &Pool,
    tables: &LikeTables,
    (id, game): (Uuid, &str),
    user: Uuid,
    liked: bool,
    at: OffsetDateTime,
) -> anyhow::Result<bool> {
    let mut conn = checkout(pool).await?;
    let row: Visible = Statement::new(
        statement(tables, liked),
        vec![
            Bind::Uuid(id),
            Bind::Text(game.to_owned()),
            Bind::Uuid(user),
            Bind::Time(at),
        ],
    )
    .get_result(&mut conn)
    .await
    .map_err(error::query)
    .with_context(|| format!("setting a like in {}", tables.likes))?;
    Ok(row.visible)
}
