-- Indexes on the times the prune jobs read (`postgres::pruning`), so each LIMITed batch finds
-- its rows without scanning the table. Partial where only some rows can ever be pruned that way.
CREATE INDEX oauth_authorization_codes_by_expiry ON oauth_authorization_codes (expires_at);
CREATE INDEX oauth_sessions_by_expiry ON oauth_sessions (expires_at);
CREATE INDEX oauth_access_tokens_by_expiry ON oauth_access_tokens (expires_at) WHERE revoked_at IS NULL;
CREATE INDEX oauth_access_tokens_by_revocation ON oauth_access_tokens (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX oauth_refresh_tokens_by_expiry ON oauth_refresh_tokens (expires_at);
CREATE INDEX oauth_grants_by_revocation ON oauth_grants (revoked_at) WHERE revoked_at IS NOT NULL;
