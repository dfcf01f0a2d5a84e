//! Deck owners' usernames, kept in process for lists and a deck's detail. A page names up to
//! 100 authors, and joining `users` for each of its rows was a fifth of what a page cost
//! PostgreSQL (docs/benchmarks/history.md, "Eighth pass"); a detail's statement runs 9 to 14%
//! faster without the join ("the detail names its author from memory"). A username never
//! changes (migration `2026-11-25-000700_usernames_never_change` refuses it), so a name once
//! read stays right and this copy needs no invalidation.

use std::collections::HashMap;

use anyhow::Context as _;
use deckhand_domain::identity::Username;
use diesel::QueryableByName;
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::error;
use crate::statement::{Bind, Statement};

/// How many users' names are kept; the least used go first (quick_cache's S3-FIFO).
const CAPACITY: usize = 100_000;

/// The usernames of users by id. A page reads one per row, so a hit must cost no more than a
/// hash lookup (docs/benchmarks.md, "Usernames by a lighter cache").
pub(crate) struct Usernames(quick_cache::sync::Cache<Uuid, Username>);

#[derive(QueryableByName)]
struct UsernameRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    username: String,
}

impl Usernames {
    pub(crate) fn new() -> Self {
        Self(quick_cache::sync::Cache::new(CAPACITY))
    }

    /// The username of `user` ([`Self::of`] for one); `None` when there is no such user.
    pub(crate) async fn of_one(
        &self,
        conn: &mut AsyncPgConnection,
        user: Uuid,
    ) -> anyhow::Result<Option<Username>> {
        if let Some(name) = self.0.get(&user) {
            return Ok(Some(name));
        }
        Ok(self.of(conn, [user]).await?.remove(&user))
    }

    /// The usernames of `users`, read over `conn` (one statement) only for those not kept yet.
    pub(crate) async fn of(
        &self,
        conn: &mut AsyncPgConnection,
        users: impl IntoIterator<Item = Uuid>,
    ) -> anyhow::Result<HashMap<Uuid, Username>> {
        let mut names = HashMap::new();
        let mut missing = Vec::new();
        for user in users {
            if names.contains_key(&user) || missing.contains(&user) {
                continue;
            }
            match self.0.get(&user) {
                Some(name) => {
                    names.insert(user, name);
                }
                None => missing.push(user),
            }
        }
        if missing.is_empty() {
            return Ok(names);
        }
        let rows: Vec<UsernameRow> = Statement::new(
            "SELECT id, username FROM users WHERE id = ANY($1)",
            vec![Bind::Uuids(missing)],
        )
        .load(conn)
        .await
        .map_err(error::query)
        .context("reading usernames")?;
        for row in rows {
            let name = Username::parse(&row.username)
                .with_context(|| format!("user {} has an invalid username", row.id))?;
            self.0.insert(row.id, name.clone());
            names.insert(row.id, name);
        }
        Ok(names)
    }
}
