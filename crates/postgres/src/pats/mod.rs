//! Personal access tokens over PostgreSQL.

mod cache;

use std::sync::Arc;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{InsertPatError, PatRepository};
use deckhand_domain::identity::{PatId, PersonalAccessToken, User, UserId};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::schema::{personal_access_tokens as pats, users};
use crate::scopes::stored_scopes;
use crate::user_row::UserRow;

use cache::Cached;
pub(crate) use cache::PatCache;

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = pats, check_for_backend(diesel::pg::Pg))]
struct PatRow {
    id: Uuid,
    user_id: Uuid,
    name: Option<String>,
    token_hash: Vec<u8>,
    scopes: Vec<String>,
    created_at: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    revoked_at: Option<OffsetDateTime>,
}

impl PatRow {
    fn into_domain(self) -> anyhow::Result<PersonalAccessToken> {
        let token_hash = <[u8; 32]>::try_from(self.token_hash.as_slice())
            .map(TokenHash)
            .with_context(|| format!("token {} has a stored hash that is not 32 bytes", self.id))?;
        let scopes = stored_scopes(&self.scopes, format_args!("token {}", self.id));
        Ok(PersonalAccessToken {
            id: PatId(self.id),
            user_id: UserId(self.user_id),
            name: self.name,
            token_hash,
            scopes,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = pats)]
struct NewPatRow<'a> {
    id: Uuid,
    user_id: Uuid,
    name: Option<&'a str>,
    token_hash: &'a [u8],
    scopes: Vec<String>,
    created_at: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    revoked_at: Option<OffsetDateTime>,
}

impl<'a> From<&'a PersonalAccessToken> for NewPatRow<'a> {
    fn from(pat: &'a PersonalAccessToken) -> Self {
        Self {
            id: pat.id.0,
            user_id: pat.user_id.0,
            name: pat.name.as_deref(),
            token_hash: pat.token_hash.as_bytes(),
            scopes: pat.scopes.names(),
            created_at: pat.created_at,
            expires_at: pat.expires_at,
            revoked_at: pat.revoked_at,
        }
    }
}

async fn insert_pat(conn: &mut AsyncPgConnection, pat: &PersonalAccessToken) -> QueryResult<()> {
    diesel::insert_into(pats::table)
        .values(NewPatRow::from(pat))
        .execute(conn)
        .await
        .map(drop)
}

async fn find_pat_by_hash(
    conn: &mut AsyncPgConnection,
    hash: &TokenHash,
) -> QueryResult<Option<(PatRow, UserRow)>> {
    pats::table
        .inner_join(users::table)
        .filter(pats::token_hash.eq(hash.as_bytes().as_slice()))
        .select((PatRow::as_select(), UserRow::as_select()))
        .first(conn)
        .await
        .optional()
}

pub(crate) struct PgPatRepository {
    pub(crate) pool: Pool,
    pub(crate) cache: Arc<PatCache>,
}

#[async_trait]
impl PatRepository for PgPatRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, pat: &PersonalAccessToken) -> Result<(), InsertPatError> {
        let mut conn = checkout(&self.pool).await?;
        insert_pat(&mut conn, pat).await.map_err(error::insert_pat)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_hash(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(PersonalAccessToken, User)>> {
        let generation = match self.cache.lookup(hash) {
            Cached::Found(found) => return Ok(Some(Arc::unwrap_or_clone(found))),
            Cached::Unknown { generation } => generation,
        };
        let mut conn = checkout(&self.pool).await?;
        let row = find_pat_by_hash(&mut conn, hash)
            .await
            .map_err(error::query)
            .context("finding a personal access token by hash")?;
        drop(conn);
        let Some((pat, user)) = row else {
            return Ok(None);
        };
        let found = (pat.into_domain()?, user.into_domain()?);
        self.cache.keep(hash, &found, generation);
        Ok(Some(found))
    }
}
