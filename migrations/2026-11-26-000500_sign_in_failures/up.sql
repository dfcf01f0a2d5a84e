-- Failed sign-ins of the consent page, counted per username (`user:<name>`) and per client
-- address (`ip:<key>`, an IPv6 /64), shared by every instance (contract §5, sign-in
-- throttling). The delays themselves are the domain's (`oauth::SignInThrottle`): a row holds
-- only the count and when its last failure was.
CREATE TABLE sign_in_failures (
    key text PRIMARY KEY CONSTRAINT sign_in_failures_key_length CHECK (octet_length(key) BETWEEN 1 AND 200),
    failures integer NOT NULL CONSTRAINT sign_in_failures_positive CHECK (failures > 0),
    last_failure_at timestamptz NOT NULL
);

-- Serves the pruning of counts that no longer count.
CREATE INDEX sign_in_failures_by_last_failure ON sign_in_failures (last_failure_at);
