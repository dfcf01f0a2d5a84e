//! Partners, their API keys and used signatures over PostgreSQL.

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{
    ApiKeyRepository, InsertApiKeyError, InsertPartnerError, PartnerRepository,
    SignatureReplayRepository,
};
use deckhand_domain::identity::{ApiKey, ApiKeyId, GameScopes, Partner, PartnerSlug, Tier, UserId};
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::replays::ReplayTable;
use crate::schema::{partner_api_keys as keys, partners};
use crate::scopes::stored_scopes;

#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = partners, check_for_backend(diesel::pg::Pg))]
pub(crate) struct PartnerRow {
    slug: String,
    created_by: Uuid,
    scopes: Vec<String>,
    game_scopes: Vec<String>,
    tier: String,
    secret_sealed: Vec<u8>,
    active: bool,
    created_at: OffsetDateTime,
}

impl PartnerRow {
    pub(crate) fn into_domain(self) -> anyhow::Result<Partner> {
        let slug = PartnerSlug::parse(&self.slug)
            .with_context(|| format!("partner {:?} has an invalid stored slug", self.slug))?;
        let scopes = stored_scopes(&self.scopes, format_args!("partner {slug}"));
        let game_scopes = GameScopes::parse_list(&self.game_scopes.join(" "))
            .with_context(|| format!("partner {slug} has invalid stored game scopes"))?;
        let tier = Tier::parse(&self.tier)
            .with_context(|| format!("partner {slug} has an invalid stored tier"))?;
        Ok(Partner {
            slug,
            created_by: UserId(self.created_by),
            scopes,
            game_scopes,
            tier,
            sealed_secret: self.secret_sealed,
            active: self.active,
            created_at: self.created_at,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = partners)]
struct NewPartnerRow<'a> {
    slug: &'a str,
    created_by: Uuid,
    scopes: Vec<String>,
    game_scopes: Vec<String>,
    tier: &'a str,
    secret_sealed: &'a [u8],
    active: bool,
    created_at: OffsetDateTime,
}

impl<'a> From<&'a Partner> for NewPartnerRow<'a> {
    fn from(partner: &'a Partner) -> Self {
        Self {
            slug: partner.slug.as_str(),
            created_by: partner.created_by.0,
            scopes: partner.scopes.names(),
            game_scopes: partner.game_scopes.names(),
            tier: partner.tier.as_str(),
            secret_sealed: &partner.sealed_secret,
            active: partner.active,
            created_at: partner.created_at,
        }
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = keys, check_for_backend(diesel::pg::Pg))]
struct ApiKeyRow {
    id: Uuid,
    partner_slug: String,
    key_hash: Vec<u8>,
    created_at: OffsetDateTime,
    revoked_at: Option<OffsetDateTime>,
}

impl ApiKeyRow {
    fn from_domain(key: &ApiKey) -> Self {
        Self {
            id: key.id.0,
            partner_slug: key.partner.as_str().to_owned(),
            key_hash: key.key_hash.as_bytes().to_vec(),
            created_at: key.created_at,
            revoked_at: key.revoked_at,
        }
    }

    fn into_domain(self) -> anyhow::Result<ApiKey> {
        let key_hash = <[u8; 32]>::try_from(self.key_hash.as_slice())
            .map(TokenHash)
            .with_context(|| {
                format!("API key {} has a stored hash that is not 32 bytes", self.id)
            })?;
        Ok(ApiKey {
            id: ApiKeyId(self.id),
            partner: PartnerSlug::parse(&self.partner_slug)
                .with_context(|| format!("API key {} has an invalid partner slug", self.id))?,
            key_hash,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
        })
    }
}

pub(crate) struct PgPartnerRepository {
    pub(crate) pool: Pool,
}

async fn find_partner(
    conn: &mut AsyncPgConnection,
    slug: &PartnerSlug,
) -> QueryResult<Option<PartnerRow>> {
    partners::table
        .find(slug.as_str())
        .select(PartnerRow::as_select())
        .first(conn)
        .await
        .optional()
}

#[async_trait]
impl PartnerRepository for PgPartnerRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, partner: &Partner) -> Result<(), InsertPartnerError> {
        let mut conn = checkout(&self.pool).await?;
        diesel::insert_into(partners::table)
            .values(NewPartnerRow::from(partner))
            .execute(&mut conn)
            .await
            .map(drop)
            .map_err(error::insert_partner)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self) -> anyhow::Result<Vec<Partner>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<PartnerRow> = partners::table
            .select(PartnerRow::as_select())
            .order(partners::slug)
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("listing partners")?;
        rows.into_iter().map(PartnerRow::into_domain).collect()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_slug(&self, slug: &PartnerSlug) -> anyhow::Result<Option<Partner>> {
        let mut conn = checkout(&self.pool).await?;
        find_partner(&mut conn, slug)
            .await
            .map_err(error::query)
            .context("finding a partner by slug")?
            .map(PartnerRow::into_domain)
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn set_active(
        &self,
        slug: &PartnerSlug,
        active: bool,
    ) -> anyhow::Result<Option<Partner>> {
        let mut conn = checkout(&self.pool).await?;
        diesel::update(partners::table.find(slug.as_str()))
            .set(partners::active.eq(active))
            .returning(PartnerRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("setting a partner's active flag")?
            .map(PartnerRow::into_domain)
            .transpose()
    }
}

pub(crate) struct PgApiKeyRepository {
    pub(crate) pool: Pool,
}

#[async_trait]
impl ApiKeyRepository for PgApiKeyRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, key: &ApiKey) -> Result<(), InsertApiKeyError> {
        let mut conn = checkout(&self.pool).await?;
        diesel::insert_into(keys::table)
            .values(ApiKeyRow::from_domain(key))
            .execute(&mut conn)
            .await
            .map(drop)
            .map_err(error::insert_api_key)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_hash(&self, hash: &TokenHash) -> anyhow::Result<Option<(ApiKey, Partner)>> {
        let mut conn = checkout(&self.pool).await?;
        let found: Option<(ApiKeyRow, PartnerRow)> = keys::table
            .inner_join(partners::table)
            .filter(keys::key_hash.eq(hash.as_bytes().as_slice()))
            .select((ApiKeyRow::as_select(), PartnerRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding an API key by hash")?;
        found
            .map(|(key, partner)| Ok((key.into_domain()?, partner.into_domain()?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke(&self, id: ApiKeyId, at: OffsetDateTime) -> anyhow::Result<Option<ApiKey>> {
        let mut conn = checkout(&self.pool).await?;
        // COALESCE in the statement keeps a first revocation time without a read first.
        diesel::update(keys::table.find(id.0))
            .set(
                keys::revoked_at.eq(
                    diesel::dsl::sql::<diesel::sql_types::Nullable<Timestamptz>>(
                        "COALESCE(revoked_at, ",
                    )
                    .bind::<Timestamptz, _>(at)
                    .sql(")"),
                ),
            )
            .returning(ApiKeyRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("revoking an API key")?
            .map(ApiKeyRow::into_domain)
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<ApiKey>> {
        let mut conn = checkout(&self.pool).await?;
        let mut query = keys::table
            .select(ApiKeyRow::as_select())
            .order((keys::created_at, keys::id))
            .into_boxed();
        if let Some(partner) = partner {
            query = query.filter(keys::partner_slug.eq(partner.as_str().to_owned()));
        }
        let rows: Vec<ApiKeyRow> = query
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("listing API keys")?;
        rows.into_iter().map(ApiKeyRow::into_domain).collect()
    }
}

pub(crate) struct PgSignatureReplayRepository {
    pub(crate) pool: Pool,
}

const SIGNATURE_REPLAYS: ReplayTable = ReplayTable {
    name: "partner_signature_replays",
    owner_column: "partner_slug",
    hash_column: "signature_hash",
};

#[async_trait]
impl SignatureReplayRepository for PgSignatureReplayRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_signature_once(
        &self,
        partner: &PartnerSlug,
        signature_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        SIGNATURE_REPLAYS
            .record_once(
                &self.pool,
                partner.as_str(),
                signature_hash,
                now,
                expires_at,
            )
            .await
    }
}
