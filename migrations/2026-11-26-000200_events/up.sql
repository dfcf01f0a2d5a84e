-- The event log (contract "Events"): one row per committed change, written in the change's own
-- transaction. `sequence` is handed out in commit order by the single counter row of
-- `event_log`: the statement that writes an event bumps the counter, and the row lock it takes
-- is held until the transaction ends, so a lower sequence always commits before a higher one
-- and no reader ever finds an event behind a cursor it was given (docs/events.md).
CREATE TABLE event_log (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    -- The highest sequence handed out.
    last_sequence bigint NOT NULL DEFAULT 0,
    -- The highest sequence pruned: cursors below it have lost events and are expired.
    pruned_through bigint NOT NULL DEFAULT 0
);
INSERT INTO event_log DEFAULT VALUES;

CREATE TABLE events (
    sequence bigint PRIMARY KEY CHECK (sequence > 0),
    id uuid NOT NULL UNIQUE,
    type text NOT NULL,
    subject_kind text NOT NULL CHECK (subject_kind IN ('deck', 'sideboard_guide', 'catalog')),
    game text NOT NULL,
    occurred_at timestamptz NOT NULL,
    subject_id uuid,
    actor_user_id uuid,
    actor_partner text,
    data jsonb NOT NULL
);

-- A game's feed page: the events after a cursor, in order.
CREATE INDEX events_feed ON events (game, sequence);

-- Every instance LISTENs on `deckhand_events` to wake its long-polling feed readers; the
-- payload is the new sequence. Notifications are sent only when the transaction commits.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_events', NEW.sequence::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_notify();
