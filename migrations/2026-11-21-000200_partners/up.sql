-- Partners, their API keys, and the signatures already used on unsafe methods. The CHECK
-- constraints repeat invariants the domain enforces, so that a bad row is refused on write.

CREATE TABLE partners (
    slug text PRIMARY KEY,
    created_by uuid NOT NULL,
    scopes text[] NOT NULL,
    -- Game slugs, or the single element '*' for every game.
    game_scopes text[] NOT NULL,
    tier text NOT NULL,
    -- nonce || AES-256-GCM ciphertext || tag of the HMAC secret, sealed under
    -- DECKHAND_SECRET_KEY with the slug as associated data. The secret itself is never stored.
    secret_sealed bytea NOT NULL,
    active boolean NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT partners_created_by_fkey FOREIGN KEY (created_by) REFERENCES users (id),
    CONSTRAINT partners_slug_format CHECK (slug ~ '^[a-z0-9-]{2,40}$'),
    CONSTRAINT partners_tier_format CHECK (tier ~ '^[a-z0-9_-]{1,32}$'),
    CONSTRAINT partners_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL),
    CONSTRAINT partners_game_scopes_not_null CHECK (array_position(game_scopes, NULL) IS NULL),
    -- 12-byte nonce + 16-byte tag + at least one byte of secret.
    CONSTRAINT partners_secret_sealed_length CHECK (octet_length(secret_sealed) > 28)
);

CREATE INDEX partners_created_by_idx ON partners (created_by);

CREATE TABLE partner_api_keys (
    id uuid PRIMARY KEY,
    partner_slug text NOT NULL,
    -- SHA-256 of the key; the key itself is never stored.
    key_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT partner_api_keys_partner_slug_fkey
        FOREIGN KEY (partner_slug) REFERENCES partners (slug) ON DELETE CASCADE,
    CONSTRAINT partner_api_keys_key_hash_key UNIQUE (key_hash),
    CONSTRAINT partner_api_keys_key_hash_length CHECK (octet_length(key_hash) = 32)
);

CREATE INDEX partner_api_keys_partner_slug_idx ON partner_api_keys (partner_slug);

-- One row per signature used on an unsafe method, shared by every instance. Rows are pruned by
-- the inserts themselves (a few expired rows per insert), through the expiry index.
CREATE TABLE partner_signature_replays (
    partner_slug text NOT NULL,
    signature_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (partner_slug, signature_hash)
);

CREATE INDEX partner_signature_replays_expires_at_idx ON partner_signature_replays (expires_at);
