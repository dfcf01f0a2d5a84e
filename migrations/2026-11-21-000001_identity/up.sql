-- Users and their personal access tokens. The CHECK constraints repeat invariants the domain
-- already enforces, so that a bad row written by hand or by a buggy release is refused instead
-- of surfacing later as an error on read.

CREATE TABLE users (
    id uuid PRIMARY KEY,
    -- Lower-cased by the domain, which makes this constraint case-insensitive uniqueness.
    username text NOT NULL,
    active boolean NOT NULL,
    premium boolean NOT NULL,
    -- An argon2id PHC string; NULL for users who cannot sign in with a password.
    password_hash text,
    created_at timestamptz NOT NULL,
    CONSTRAINT users_username_key UNIQUE (username),
    CONSTRAINT users_username_format CHECK (username ~ '^[a-z0-9_-]{3,32}$')
);

CREATE TABLE personal_access_tokens (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL,
    name text,
    -- SHA-256 of the token; the token itself is never stored.
    token_hash bytea NOT NULL,
    scopes text[] NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT personal_access_tokens_user_id_fkey
        FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
    CONSTRAINT personal_access_tokens_token_hash_key UNIQUE (token_hash),
    CONSTRAINT personal_access_tokens_token_hash_length CHECK (octet_length(token_hash) = 32),
    -- The schema maps scopes as text[] without NULL elements.
    CONSTRAINT personal_access_tokens_scopes_not_null CHECK (array_position(scopes, NULL) IS NULL)
);

-- Listing and cascading deletes go by owner; the foreign key alone does not index it.
CREATE INDEX personal_access_tokens_user_id_idx ON personal_access_tokens (user_id);
