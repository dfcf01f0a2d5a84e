-- Webhooks (contract "Webhooks"): a partner's endpoints, the deliveries of events to them, and
-- the dispatch watermark: the last event sequence fanned out into deliveries.

CREATE TABLE webhook_endpoints (
    id uuid PRIMARY KEY,
    partner_slug text NOT NULL REFERENCES partners (slug) ON DELETE CASCADE,
    url text NOT NULL,
    -- As the partner wrote them: `{*}` for every type / every game of its scopes.
    types text[] NOT NULL,
    games text[] NOT NULL,
    description text,
    enabled boolean NOT NULL DEFAULT true,
    disabled_reason text CHECK (disabled_reason IN ('failing')),
    -- Deliveries that ended failed since the last that succeeded; 50 disable the endpoint.
    consecutive_failures integer NOT NULL DEFAULT 0,
    -- AES-256-GCM under DECKHAND_SECRET_KEY, the endpoint id as associated data.
    secret_sealed bytea NOT NULL,
    -- The secret before the last rotation, signing beside the new one until the given time.
    previous_secret_sealed bytea,
    previous_secret_until timestamptz,
    created_at timestamptz NOT NULL,
    CHECK ((previous_secret_sealed IS NULL) = (previous_secret_until IS NULL))
);

CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (partner_slug, created_at, id);

CREATE TABLE webhook_deliveries (
    -- v7: time-ordered, so the log pages newest first by id.
    id uuid PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- The event's id is the `webhook-id` of every attempt.
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    -- NULL for pings, which are not in the feed.
    sequence bigint,
    game text NOT NULL,
    subject_id uuid,
    -- The event's JSON as first sent; every attempt sends and signs these bytes.
    body text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    retries_used integer NOT NULL DEFAULT 0,
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    response_status integer,
    -- At most 1 KiB.
    response_body text,
    duration_ms bigint,
    error text,
    attempted_at timestamptz,
    next_attempt_at timestamptz,
    -- While set and in the future, one worker holds the delivery; when it passes (the worker
    -- died mid-attempt) any worker may claim it again: at least once.
    lease_until timestamptz,
    created_at timestamptz NOT NULL,
    -- A dispatch that runs again after a crash cannot deliver an event twice to one endpoint.
    UNIQUE (endpoint_id, event_id),
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);

-- The worker's claim and its next wake-up: pending deliveries by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';
-- The delivery log of an endpoint, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, id DESC);
-- Pruning past retention.
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

-- One row: every event up to `last_sequence` has been fanned out. Starts at the events already
-- logged: endpoints registered from now on receive what happens from now on.
CREATE TABLE webhook_dispatch (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    last_sequence bigint NOT NULL
);
INSERT INTO webhook_dispatch (last_sequence) SELECT last_sequence FROM event_log;

-- Workers LISTEN on `deckhand_webhooks` (and `deckhand_events`) to learn of work at once: a
-- ping or a manual retry made on another instance. Sent once per statement, on commit.
CREATE FUNCTION webhook_deliveries_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_webhooks', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER webhook_deliveries_notify AFTER INSERT OR UPDATE OF next_attempt_at
    ON webhook_deliveries FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_notify();
