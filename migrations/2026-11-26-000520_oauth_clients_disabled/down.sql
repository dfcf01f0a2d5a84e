ALTER TABLE oauth_clients DROP COLUMN disabled_at;
