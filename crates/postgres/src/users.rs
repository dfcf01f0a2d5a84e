//! Users over PostgreSQL.

use std::sync::Arc;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::identity::ports::{InsertUserError, UserRepository};
use deckhand_domain::identity::{User, UserId, Username};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::pats::PatCache;
use crate::pool::{Pool, checkout};
use crate::user_row::UserRow;
use crate::{error, schema::users};

#[derive(Insertable)]
#[diesel(table_name = users)]
struct NewUserRow<'a> {
    id: Uuid,
    username: &'a str,
    active: bool,
    premium: bool,
    password_hash: Option<&'a str>,
    created_at: OffsetDateTime,
}

impl<'a> From<&'a User> for NewUserRow<'a> {
    fn from(user: &'a User) -> Self {
        Self {
            id: user.id.0,
            username: user.username.as_str(),
            active: user.active,
            premium: user.premium,
            password_hash: user.password_hash.as_deref(),
            created_at: user.created_at,
        }
    }
}

async fn insert_user(conn: &mut AsyncPgConnection, user: &User) -> QueryResult<()> {
    diesel::insert_into(users::table)
        .values(NewUserRow::from(user))
        .execute(conn)
        .await
        .map(drop)
}

async fn find_user_by_id(conn: &mut AsyncPgConnection, id: UserId) -> QueryResult<Option<UserRow>> {
    users::table
        .find(id.0)
        .select(UserRow::as_select())
        .first(conn)
        .await
        .optional()
}

async fn find_user_by_username(
    conn: &mut AsyncPgConnection,
    username: &Username,
) -> QueryResult<Option<UserRow>> {
    users::table
        .filter(users::username.eq(username.as_str()))
        .select(UserRow::as_select())
        .first(conn)
        .await
        .optional()
}

async fn set_user_active(
    conn: &mut AsyncPgConnection,
    id: UserId,
    active: bool,
) -> QueryResult<Option<UserRow>> {
    diesel::update(users::table.find(id.0))
        .set(users::active.eq(active))
        .returning(UserRow::as_returning())
        .get_result(conn)
        .await
        .optional()
}

pub(crate) struct PgUserRepository {
    pub(crate) pool: Pool,
    /// Dropped when a user changes here, so a deactivation stops the user's PATs at once.
    pub(crate) pats: Arc<PatCache>,
}

#[async_trait]
impl UserRepository for PgUserRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, user: &User) -> Result<(), InsertUserError> {
        let mut conn = checkout(&self.pool).await?;
        insert_user(&mut conn, user)
            .await
            .map_err(error::insert_user)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_id(&self, id: UserId) -> anyhow::Result<Option<User>> {
        let mut conn = checkout(&self.pool).await?;
        let row = find_user_by_id(&mut conn, id)
            .await
            .map_err(error::query)
            .context("finding a user by id")?;
        row.map(UserRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_username(&self, username: &Username) -> anyhow::Result<Option<User>> {
        let mut conn = checkout(&self.pool).await?;
        let row = find_user_by_username(&mut conn, username)
            .await
            .map_err(error::query)
            .context("finding a user by username")?;
        row.map(UserRow::into_domain).transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn set_active(&self, id: UserId, active: bool) -> anyhow::Result<Option<User>> {
        let mut conn = checkout(&self.pool).await?;
        let row = set_user_active(&mut conn, id, active)
            .await
            .map_err(error::query)
            .context("setting whether a user is active")?;
        self.pats.forget();
        row.map(UserRow::into_domain).transpose()
    }
}
