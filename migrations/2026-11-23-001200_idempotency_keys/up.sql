-- Idempotency keys of the creating POSTs (docs/api.md, "Idempotent creates"), shared by every
-- instance: the primary key decides which of two racing first requests runs.
CREATE TABLE idempotency_keys (
    -- The caller string (`user:<id>`, `partner:<slug>`, ...): keys are scoped to it.
    caller text NOT NULL,
    key text NOT NULL CONSTRAINT idempotency_keys_key_length CHECK (octet_length(key) BETWEEN 1 AND 255),
    -- SHA-256 over the method, path and body of the first request.
    fingerprint bytea NOT NULL CONSTRAINT idempotency_keys_fingerprint_length CHECK (octet_length(fingerprint) = 32),
    -- Which claim holds the key, so that an overtaken request cannot finish its successor's.
    claim_id uuid NOT NULL,
    claimed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    -- The kept response; all null while the first request runs.
    response_status smallint,
    response_headers jsonb,
    response_body bytea,
    PRIMARY KEY (caller, key),
    CONSTRAINT idempotency_keys_response_whole CHECK (
        (response_status IS NULL) = (response_body IS NULL)
        AND (response_status IS NULL) = (response_headers IS NULL))
);
-- Serves the pruning of expired keys that each claim does.
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
