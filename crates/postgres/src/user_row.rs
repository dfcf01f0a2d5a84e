//! A user as the `users` table holds it, read by the user, PAT and OAuth adapters alike.

use anyhow::Context as _;
use deckhand_domain::identity::{User, UserId, Username};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::users;

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserRow {
    id: Uuid,
    username: String,
    active: bool,
    premium: bool,
    password_hash: Option<String>,
    created_at: OffsetDateTime,
}

impl UserRow {
    pub(crate) fn into_domain(self) -> anyhow::Result<User> {
        let username = Username::parse(&self.username)
            .with_context(|| format!("user {} has an invalid stored username", self.id))?;
        Ok(User {
            id: UserId(self.id),
            username,
            active: self.active,
            premium: self.premium,
            password_hash: self.password_hash,
            created_at: self.created_at,
        })
    }
}
