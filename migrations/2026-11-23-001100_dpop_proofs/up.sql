-- Spent DPoP proof ids (RFC 9449 `jti`), one per key and proof for 5 minutes, shared by every
-- instance. The id itself is stored as its SHA-256 so rows stay small whatever a client sends.
CREATE TABLE dpop_proofs (
    -- RFC 7638 thumbprint (SHA-256, base64url) of the proof's public key.
    jkt text NOT NULL,
    jti_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (jkt, jti_hash)
);

-- Serves the expiry sweep each insert runs (`WHERE expires_at <= now LIMIT n`).
CREATE INDEX dpop_proofs_expires_at_idx ON dpop_proofs (expires_at);
