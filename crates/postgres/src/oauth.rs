//! The OAuth server's records over PostgreSQL. The two races that matter are settled by the
//! database: a code is redeemed and a refresh token rotated by one conditional `UPDATE` each
//! (`... WHERE redeemed_at IS NULL`, `... WHERE rotated_at IS NULL`), whose row lock makes a
//! concurrent second statement re-check its condition and find nothing to update.

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::{PartnerSlug, UserId};
use deckhand_domain::oauth::ports::{
    CodeRedemption, GrantContext, InsertClientError, IssuedTokens, OAuthRepository,
};
use deckhand_domain::oauth::{
    AccessToken, AuthorizationCode, ClientId, ClientKind, FailureCount, Grant, GrantId, GrantType,
    OAuthClient, RedirectUri, RefreshToken, Session, ThrottleKey,
};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, Integer, Text, Timestamptz};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error;
use crate::partners::PartnerRow;
use crate::pool::{Pool, checkout};
use crate::replays::ReplayTable;
use crate::schema::{
    oauth_access_tokens as access_tokens, oauth_authorization_codes as codes,
    oauth_clients as clients, oauth_grants as grants, oauth_refresh_tokens as refresh_tokens,
    oauth_sessions as sessions, partners, users,
};
use crate::scopes::stored_scopes;
use crate::user_row::UserRow;

const CLIENTS_PARTNER_FKEY: &str = "oauth_clients_partner_slug_fkey";

const DPOP_PROOFS: ReplayTable = ReplayTable {
    name: "dpop_proofs",
    owner_column: "jkt",
    hash_column: "jti_hash",
};

pub(crate) struct PgOAuthRepository {
    pub(crate) pool: Pool,
}

fn stored_hash(bytes: &[u8], what: &str) -> anyhow::Result<TokenHash> {
    <[u8; 32]>::try_from(bytes)
        .map(TokenHash)
        .with_context(|| format!("a stored {what} hash is not 32 bytes"))
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = clients, check_for_backend(diesel::pg::Pg))]
struct ClientRow {
    id: Uuid,
    partner_slug: String,
    name: String,
    secret_hash: Option<Vec<u8>>,
    redirect_uris: Vec<String>,
    scopes: Vec<String>,
    grant_types: Vec<String>,
    created_at: OffsetDateTime,
    disabled_at: Option<OffsetDateTime>,
}

impl ClientRow {
    fn from_domain(client: &OAuthClient) -> Self {
        Self {
            id: client.id.0,
            partner_slug: client.partner.as_str().to_owned(),
            name: client.name.clone(),
            secret_hash: match &client.kind {
                ClientKind::Confidential { secret_hash } => Some(secret_hash.0.to_vec()),
                ClientKind::Public => None,
            },
            redirect_uris: client
                .redirect_uris
                .iter()
                .map(|uri| uri.as_str().to_owned())
                .collect(),
            scopes: client.scopes.names(),
            grant_types: client
                .grant_types
                .iter()
                .map(|kind| kind.as_str().to_owned())
                .collect(),
            created_at: client.created_at,
            disabled_at: client.disabled_at,
        }
    }

    fn into_domain(self) -> anyhow::Result<OAuthClient> {
        let id = self.id;
        Ok(OAuthClient {
            id: ClientId(id),
            partner: PartnerSlug::parse(&self.partner_slug)
                .with_context(|| format!("client {id} has an invalid partner slug"))?,
            name: self.name,
            kind: match self.secret_hash {
                Some(hash) => ClientKind::Confidential {
                    secret_hash: stored_hash(&hash, "client secret")?,
                },
                None => ClientKind::Public,
            },
            redirect_uris: self
                .redirect_uris
                .iter()
                .map(|uri| RedirectUri::parse(uri))
                .collect::<Result<_, _>>()
                .with_context(|| format!("client {id} has an invalid redirect URI"))?,
            scopes: stored_scopes(&self.scopes, format_args!("OAuth client {id}")),
            grant_types: self
                .grant_types
                .iter()
                .filter_map(|kind| GrantType::parse(kind))
                .collect(),
            created_at: self.created_at,
            disabled_at: self.disabled_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = grants, check_for_backend(diesel::pg::Pg))]
struct GrantRow {
    id: Uuid,
    client_id: Uuid,
    user_id: Uuid,
    scopes: Vec<String>,
    jkt: Option<String>,
    created_at: OffsetDateTime,
    revoked_at: Option<OffsetDateTime>,
}

impl GrantRow {
    fn from_domain(grant: &Grant) -> Self {
        Self {
            id: grant.id.0,
            client_id: grant.client_id.0,
            user_id: grant.user_id.0,
            scopes: grant.scopes.names(),
            jkt: grant.jkt.clone(),
            created_at: grant.created_at,
            revoked_at: grant.revoked_at,
        }
    }

    fn into_domain(self) -> Grant {
        Grant {
            id: GrantId(self.id),
            client_id: ClientId(self.client_id),
            user_id: UserId(self.user_id),
            scopes: stored_scopes(&self.scopes, format_args!("grant {}", self.id)),
            jkt: self.jkt,
            created_at: self.created_at,
            revoked_at: self.revoked_at,
        }
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = codes, check_for_backend(diesel::pg::Pg))]
struct CodeRow {
    code_hash: Vec<u8>,
    client_id: Uuid,
    user_id: Uuid,
    redirect_uri: String,
    scopes: Vec<String>,
    code_challenge: String,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    redeemed_at: Option<OffsetDateTime>,
    grant_id: Option<Uuid>,
}

impl CodeRow {
    fn from_domain(code: &AuthorizationCode) -> Self {
        Self {
            code_hash: code.code_hash.0.to_vec(),
            client_id: code.client_id.0,
            user_id: code.user_id.0,
            redirect_uri: code.redirect_uri.clone(),
            scopes: code.scopes.names(),
            code_challenge: code.code_challenge.clone(),
            created_at: code.created_at,
            expires_at: code.expires_at,
            redeemed_at: code.redeemed_at,
            grant_id: code.grant_id.map(|id| id.0),
        }
    }

    fn into_domain(self) -> anyhow::Result<AuthorizationCode> {
        Ok(AuthorizationCode {
            code_hash: stored_hash(&self.code_hash, "authorization code")?,
            client_id: ClientId(self.client_id),
            user_id: UserId(self.user_id),
            scopes: stored_scopes(&self.scopes, format_args!("an authorization code")),
            redirect_uri: self.redirect_uri,
            code_challenge: self.code_challenge,
            created_at: self.created_at,
            expires_at: self.expires_at,
            redeemed_at: self.redeemed_at,
            grant_id: self.grant_id.map(GrantId),
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens, check_for_backend(diesel::pg::Pg))]
struct RefreshRow {
    token_hash: Vec<u8>,
    grant_id: Uuid,
    issued_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    rotated_at: Option<OffsetDateTime>,
}

impl RefreshRow {
    fn from_domain(token: &RefreshToken) -> Self {
        Self {
            token_hash: token.token_hash.0.to_vec(),
            grant_id: token.grant_id.0,
            issued_at: token.issued_at,
            expires_at: token.expires_at,
            rotated_at: token.rotated_at,
        }
    }

    fn into_domain(self) -> anyhow::Result<RefreshToken> {
        Ok(RefreshToken {
            token_hash: stored_hash(&self.token_hash, "refresh token")?,
            grant_id: GrantId(self.grant_id),
            issued_at: self.issued_at,
            expires_at: self.expires_at,
            rotated_at: self.rotated_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = access_tokens, check_for_backend(diesel::pg::Pg))]
struct AccessRow {
    token_hash: Vec<u8>,
    grant_id: Uuid,
    scopes: Vec<String>,
    issued_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    revoked_at: Option<OffsetDateTime>,
}

impl AccessRow {
    fn from_domain(token: &AccessToken) -> Self {
        Self {
            token_hash: token.token_hash.0.to_vec(),
            grant_id: token.grant_id.0,
            scopes: token.scopes.names(),
            issued_at: token.issued_at,
            expires_at: token.expires_at,
            revoked_at: token.revoked_at,
        }
    }

    fn into_domain(self) -> anyhow::Result<AccessToken> {
        Ok(AccessToken {
            token_hash: stored_hash(&self.token_hash, "access token")?,
            grant_id: GrantId(self.grant_id),
            scopes: stored_scopes(
                &self.scopes,
                format_args!("an access token of grant {}", self.grant_id),
            ),
            issued_at: self.issued_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::pg::Pg))]
struct SessionRow {
    token_hash: Vec<u8>,
    user_id: Uuid,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
}

/// What ends a redemption transaction, rolling it back.
enum RedeemFailure {
    /// The code was taken or missing: nothing may be stored.
    NotRedeemed(CodeRedemption),
    Database(DieselError),
}

impl From<DieselError> for RedeemFailure {
    fn from(error: DieselError) -> Self {
        Self::Database(error)
    }
}

type ContextRow = (GrantRow, ClientRow, PartnerRow, UserRow);

/// A grant joined to its client, the client's partner and its user: what every token is
/// checked against.
#[diesel::dsl::auto_type]
fn grant_context() -> _ {
    grants::table
        .inner_join(clients::table.inner_join(partners::table))
        .inner_join(users::table)
}

fn into_context((grant, client, partner, user): ContextRow) -> anyhow::Result<GrantContext> {
    Ok(GrantContext {
        grant: grant.into_domain(),
        client: client.into_domain()?,
        partner: partner.into_domain()?,
        user: user.into_domain()?,
    })
}

/// Stores the tokens of an exchange or a refresh.
async fn insert_tokens(conn: &mut AsyncPgConnection, tokens: &IssuedTokens) -> QueryResult<()> {
    diesel::insert_into(access_tokens::table)
        .values(AccessRow::from_domain(&tokens.access))
        .execute(conn)
        .await?;
    if let Some(refresh) = &tokens.refresh {
        diesel::insert_into(refresh_tokens::table)
            .values(RefreshRow::from_domain(refresh))
            .execute(conn)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl OAuthRepository for PgOAuthRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError> {
        let mut conn = checkout(&self.pool).await?;
        match diesel::insert_into(clients::table)
            .values(ClientRow::from_domain(client))
            .execute(&mut conn)
            .await
        {
            Ok(_) => Ok(()),
            Err(DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, info))
                if info.constraint_name() == Some(CLIENTS_PARTNER_FKEY) =>
            {
                Err(InsertClientError::UnknownPartner)
            }
            Err(other) => Err(error::query(other)
                .context("inserting an OAuth client")
                .into()),
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list_clients(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<OAuthClient>> {
        let mut conn = checkout(&self.pool).await?;
        let mut query = clients::table
            .select(ClientRow::as_select())
            .order((clients::created_at, clients::id))
            .into_boxed();
        if let Some(partner) = partner {
            query = query.filter(clients::partner_slug.eq(partner.as_str().to_owned()));
        }
        let rows: Vec<ClientRow> = query
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("listing OAuth clients")?;
        rows.into_iter().map(ClientRow::into_domain).collect()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn disable_client(
        &self,
        id: ClientId,
        at: OffsetDateTime,
    ) -> anyhow::Result<Option<OAuthClient>> {
        let mut conn = checkout(&self.pool).await?;
        // COALESCE in the statement keeps a first disabling time without a read first.
        diesel::update(clients::table.find(id.0))
            .set(
                clients::disabled_at.eq(
                    diesel::dsl::sql::<diesel::sql_types::Nullable<Timestamptz>>(
                        "COALESCE(disabled_at, ",
                    )
                    .bind::<Timestamptz, _>(at)
                    .sql(")"),
                ),
            )
            .returning(ClientRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("disabling an OAuth client")?
            .map(ClientRow::into_domain)
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_client(
        &self,
        id: ClientId,
    ) -> anyhow::Result<Option<(OAuthClient, deckhand_domain::identity::Partner)>> {
        let mut conn = checkout(&self.pool).await?;
        let found: Option<(ClientRow, PartnerRow)> = clients::table
            .inner_join(partners::table)
            .filter(clients::id.eq(id.0))
            .select((ClientRow::as_select(), PartnerRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding an OAuth client")?;
        found
            .map(|(client, partner)| Ok((client.into_domain()?, partner.into_domain()?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_code(&self, code: &AuthorizationCode) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::insert_into(codes::table)
            .values(CodeRow::from_domain(code))
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("inserting an authorization code")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_code(&self, hash: &TokenHash) -> anyhow::Result<Option<AuthorizationCode>> {
        let mut conn = checkout(&self.pool).await?;
        codes::table
            .find(hash.0.as_slice())
            .select(CodeRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding an authorization code")?
            .map(CodeRow::into_domain)
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn redeem_code(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        grant: &Grant,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<CodeRedemption> {
        let mut conn = checkout(&self.pool).await?;
        let outcome = conn
            .transaction::<_, RedeemFailure, _>(async |conn| {
                // The grant row first: the code's foreign key points at it. If the code turns
                // out to be taken, the transaction rolls back and the grant goes with it.
                diesel::insert_into(grants::table)
                    .values(GrantRow::from_domain(grant))
                    .execute(conn)
                    .await?;
                let redeemed = diesel::update(
                    codes::table
                        .find(hash.0.as_slice())
                        .filter(codes::redeemed_at.is_null()),
                )
                .set((codes::redeemed_at.eq(now), codes::grant_id.eq(grant.id.0)))
                .execute(conn)
                .await?;
                if redeemed == 1 {
                    insert_tokens(conn, tokens).await?;
                    return Ok(CodeRedemption::Redeemed);
                }
                let earlier: Option<Option<Uuid>> = codes::table
                    .find(hash.0.as_slice())
                    .select(codes::grant_id)
                    .first(conn)
                    .await
                    .optional()?;
                Err(RedeemFailure::NotRedeemed(match earlier {
                    Some(grant_id) => CodeRedemption::AlreadyRedeemed {
                        grant_id: grant_id.map(GrantId),
                    },
                    None => CodeRedemption::Missing,
                }))
            })
            .await;
        match outcome {
            Ok(outcome) | Err(RedeemFailure::NotRedeemed(outcome)) => Ok(outcome),
            Err(RedeemFailure::Database(error)) => {
                Err(error::query(error).context("redeeming an authorization code"))
            }
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_refresh_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(RefreshToken, GrantContext)>> {
        let mut conn = checkout(&self.pool).await?;
        let found: Option<(RefreshRow, ContextRow)> = refresh_tokens::table
            .inner_join(grant_context())
            .filter(refresh_tokens::token_hash.eq(hash.0.as_slice()))
            .select((RefreshRow::as_select(), ContextRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding a refresh token")?;
        found
            .map(|(token, context)| Ok((token.into_domain()?, into_context(context)?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn rotate_refresh_token(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<bool> {
        let mut conn = checkout(&self.pool).await?;
        conn.transaction::<_, DieselError, _>(async |conn| {
            // One conditional UPDATE: of two concurrent rotations the second waits for the
            // first's row lock, re-checks `rotated_at IS NULL` on the new row version and
            // updates nothing.
            let live_grant = grants::table
                .filter(grants::revoked_at.is_null())
                .select(grants::id);
            let rotated = diesel::update(
                refresh_tokens::table
                    .find(hash.0.as_slice())
                    .filter(refresh_tokens::rotated_at.is_null())
                    .filter(refresh_tokens::expires_at.gt(now))
                    .filter(refresh_tokens::grant_id.eq_any(live_grant)),
            )
            .set(refresh_tokens::rotated_at.eq(now))
            .execute(conn)
            .await?;
            if rotated == 1 {
                insert_tokens(conn, tokens).await?;
            }
            Ok(rotated == 1)
        })
        .await
        .map_err(error::query)
        .context("rotating a refresh token")
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_access_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(AccessToken, GrantContext)>> {
        let mut conn = checkout(&self.pool).await?;
        let found: Option<(AccessRow, ContextRow)> = access_tokens::table
            .inner_join(grant_context())
            .filter(access_tokens::token_hash.eq(hash.0.as_slice()))
            .select((AccessRow::as_select(), ContextRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding an access token")?;
        found
            .map(|(token, context)| Ok((token.into_domain()?, into_context(context)?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke_grant(&self, id: GrantId, at: OffsetDateTime) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::update(
            grants::table
                .find(id.0)
                .filter(grants::revoked_at.is_null()),
        )
        .set(grants::revoked_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("revoking a grant")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke_access_token(
        &self,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::update(
            access_tokens::table
                .find(hash.0.as_slice())
                .filter(access_tokens::revoked_at.is_null()),
        )
        .set(access_tokens::revoked_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("revoking an access token")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_dpop_proof_once(
        &self,
        jkt: &str,
        jti_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        DPOP_PROOFS
            .record_once(&self.pool, jkt, jti_hash, now, expires_at)
            .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_session(&self, session: &Session) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::insert_into(sessions::table)
            .values(SessionRow {
                token_hash: session.token_hash.0.to_vec(),
                user_id: session.user_id.0,
                created_at: session.created_at,
                expires_at: session.expires_at,
            })
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("inserting a sign-in session")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_session(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(Session, deckhand_domain::identity::User)>> {
        let mut conn = checkout(&self.pool).await?;
        let found: Option<(SessionRow, UserRow)> = sessions::table
            .inner_join(users::table)
            .filter(sessions::token_hash.eq(hash.0.as_slice()))
            .select((SessionRow::as_select(), UserRow::as_select()))
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("finding a sign-in session")?;
        found
            .map(|(session, user)| {
                Ok((
                    Session {
                        token_hash: stored_hash(&session.token_hash, "session")?,
                        user_id: UserId(session.user_id),
                        created_at: session.created_at,
                        expires_at: session.expires_at,
                    },
                    user.into_domain()?,
                ))
            })
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn sign_in_failures(
        &self,
        keys: &[ThrottleKey],
    ) -> anyhow::Result<Vec<Option<FailureCount>>> {
        let stored: Vec<String> = keys.iter().map(ThrottleKey::stored).collect();
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<FailureRow> = diesel::sql_query(
            "SELECT key, failures, last_failure_at FROM sign_in_failures WHERE key = ANY ($1)",
        )
        .bind::<Array<Text>, _>(&stored)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("reading failed sign-ins")?;
        Ok(stored
            .iter()
            .map(|key| {
                rows.iter()
                    .find(|row| row.key == *key)
                    .map(FailureRow::count)
            })
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_sign_in_failure(
        &self,
        keys: &[ThrottleKey],
        now: OffsetDateTime,
        restart_before: OffsetDateTime,
    ) -> anyhow::Result<Vec<FailureCount>> {
        let stored: Vec<String> = keys.iter().map(ThrottleKey::stored).collect();
        let mut conn = checkout(&self.pool).await?;
        // One statement: concurrent failures on other instances each add theirs.
        let rows: Vec<FailureRow> = diesel::sql_query(
            "INSERT INTO sign_in_failures AS counted (key, failures, last_failure_at)
             SELECT key, 1, $2 FROM unnest($1::text[]) AS key
             ON CONFLICT (key) DO UPDATE SET
                 failures = CASE WHEN counted.last_failure_at <= $3 THEN 1
                                 ELSE counted.failures + 1 END,
                 last_failure_at = EXCLUDED.last_failure_at
             RETURNING key, failures, last_failure_at",
        )
        .bind::<Array<Text>, _>(&stored)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(restart_before)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("counting a failed sign-in")?;
        stored
            .iter()
            .map(|key| {
                rows.iter()
                    .find(|row| row.key == *key)
                    .map(FailureRow::count)
                    .with_context(|| format!("no count returned for {key}"))
            })
            .collect()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn clear_sign_in_failures(&self, key: &ThrottleKey) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::sql_query("DELETE FROM sign_in_failures WHERE key = $1")
            .bind::<Text, _>(key.stored())
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("forgetting failed sign-ins")?;
        Ok(())
    }
}

#[derive(QueryableByName)]
struct FailureRow {
    #[diesel(sql_type = Text)]
    key: String,
    #[diesel(sql_type = Integer)]
    failures: i32,
    #[diesel(sql_type = Timestamptz)]
    last_failure_at: OffsetDateTime,
}

impl FailureRow {
    fn count(&self) -> FailureCount {
        FailureCount {
            failures: u32::try_from(self.failures).unwrap_or(0),
            last_failure_at: self.last_failure_at,
        }
    }
}
