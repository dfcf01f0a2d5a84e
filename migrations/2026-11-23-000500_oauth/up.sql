-- The OAuth 2.0 server: clients (owned by partners), authorization codes, grants with their
-- rotating refresh tokens and their access tokens, and the consent page's sign-in sessions.
-- Every secret is stored as its SHA-256 only. The CHECK constraints repeat invariants the
-- domain enforces, so that a bad row is refused on write.

CREATE TABLE oauth_clients (
    id uuid PRIMARY KEY,
    partner_slug text NOT NULL,
    name text NOT NULL,
    -- SHA-256 of the client secret; NULL for public clients.
    secret_hash bytea,
    redirect_uris text[] NOT NULL,
    scopes text[] NOT NULL,
    grant_types text[] NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT oauth_clients_partner_slug_fkey
        FOREIGN KEY (partner_slug) REFERENCES partners (slug) ON DELETE CASCADE,
    CONSTRAINT oauth_clients_secret_hash_length CHECK (octet_length(secret_hash) = 32),
    CONSTRAINT oauth_clients_name_length CHECK (char_length(name) BETWEEN 1 AND 100),
    CONSTRAINT oauth_clients_redirect_uris_present
        CHECK (cardinality(redirect_uris) > 0 AND array_position(redirect_uris, NULL) IS NULL),
    CONSTRAINT oauth_clients_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL),
    CONSTRAINT oauth_clients_grant_types_valid
        CHECK (grant_types <@ ARRAY['authorization_code', 'refresh_token'] AND cardinality(grant_types) > 0)
);

CREATE INDEX oauth_clients_partner_slug_idx ON oauth_clients (partner_slug);

-- One authorization of a client by a user. Revoking it revokes every token it issued: token
-- checks read `revoked_at` here, so revocation is one UPDATE of one row.
CREATE TABLE oauth_grants (
    id uuid PRIMARY KEY,
    client_id uuid NOT NULL,
    user_id uuid NOT NULL,
    scopes text[] NOT NULL,
    -- RFC 7638 thumbprint of the DPoP key the grant is bound to; NULL for Bearer grants.
    jkt text,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT oauth_grants_client_id_fkey
        FOREIGN KEY (client_id) REFERENCES oauth_clients (id) ON DELETE CASCADE,
    CONSTRAINT oauth_grants_user_id_fkey
        FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    CONSTRAINT oauth_grants_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL)
);

CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);
CREATE INDEX oauth_grants_user_id_idx ON oauth_grants (user_id);

CREATE TABLE oauth_authorization_codes (
    code_hash bytea PRIMARY KEY,
    client_id uuid NOT NULL,
    user_id uuid NOT NULL,
    redirect_uri text NOT NULL,
    scopes text[] NOT NULL,
    code_challenge text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    -- Set once, by the exchange that wins; a second exchange is a replay.
    redeemed_at timestamptz,
    -- The grant the exchange started, revoked when the code is replayed.
    grant_id uuid,
    CONSTRAINT oauth_authorization_codes_client_id_fkey
        FOREIGN KEY (client_id) REFERENCES oauth_clients (id) ON DELETE CASCADE,
    CONSTRAINT oauth_authorization_codes_user_id_fkey
        FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    CONSTRAINT oauth_authorization_codes_grant_id_fkey
        FOREIGN KEY (grant_id) REFERENCES oauth_grants (id) ON DELETE CASCADE,
    CONSTRAINT oauth_authorization_codes_code_hash_length CHECK (octet_length(code_hash) = 32),
    CONSTRAINT oauth_authorization_codes_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL)
);

CREATE INDEX oauth_authorization_codes_client_id_idx ON oauth_authorization_codes (client_id);
CREATE INDEX oauth_authorization_codes_user_id_idx ON oauth_authorization_codes (user_id);
CREATE INDEX oauth_authorization_codes_grant_id_idx ON oauth_authorization_codes (grant_id);

CREATE TABLE oauth_refresh_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id uuid NOT NULL,
    issued_at timestamptz NOT NULL,
    -- Idle expiry: each rotation issues a successor with a fresh lifetime.
    expires_at timestamptz NOT NULL,
    -- Set by the one rotation that replaced this token; a later use is a replay.
    rotated_at timestamptz,
    CONSTRAINT oauth_refresh_tokens_grant_id_fkey
        FOREIGN KEY (grant_id) REFERENCES oauth_grants (id) ON DELETE CASCADE,
    CONSTRAINT oauth_refresh_tokens_token_hash_length CHECK (octet_length(token_hash) = 32)
);

CREATE INDEX oauth_refresh_tokens_grant_id_idx ON oauth_refresh_tokens (grant_id);

CREATE TABLE oauth_access_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id uuid NOT NULL,
    scopes text[] NOT NULL,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT oauth_access_tokens_grant_id_fkey
        FOREIGN KEY (grant_id) REFERENCES oauth_grants (id) ON DELETE CASCADE,
    CONSTRAINT oauth_access_tokens_token_hash_length CHECK (octet_length(token_hash) = 32),
    CONSTRAINT oauth_access_tokens_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL)
);

CREATE INDEX oauth_access_tokens_grant_id_idx ON oauth_access_tokens (grant_id);

CREATE TABLE oauth_sessions (
    token_hash bytea PRIMARY KEY,
    user_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT oauth_sessions_user_id_fkey
        FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    CONSTRAINT oauth_sessions_token_hash_length CHECK (octet_length(token_hash) = 32)
);

CREATE INDEX oauth_sessions_user_id_idx ON oauth_sessions (user_id);
