-- An operator may disable an OAuth client (`admin oauth-client disable`): it authorizes nothing
-- more and its tokens stop working at once, since every use of a token reads its client.
ALTER TABLE oauth_clients ADD COLUMN disabled_at timestamptz;
