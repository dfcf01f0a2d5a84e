-- An event log for the events feed's plans and load (docs/benchmarks.md). Run it after
-- decks_seed.sql (its events are about those decks); set the size first:
--
--   SET deckhand.seed_decks = 100000;    \i crates/testkit/benches/decks_seed.sql
--   SET deckhand.seed_events = 1000000;  \i crates/testkit/benches/events_seed.sql
--
-- Deterministic (setseed), plain SQL with generate_series. Shape: each event is about a random
-- deck, in that deck's game, acted by its owner, with the thin payloads the service writes:
-- 10% deck.created, 80% deck.updated, 5% deck.rolled_back, 5% deck.strategy_guide.updated;
-- one event a minute back from now, oldest first. The counter row hands out the sequences
-- after them, as if the service had written them.

SELECT setseed(0.61);

-- A million notifications nobody hears would only slow the seed down.
ALTER TABLE events DISABLE TRIGGER events_notify;

CREATE TEMP TABLE seed_event_decks AS
SELECT id, game, owner_id, row_number() OVER (ORDER BY id) AS k FROM decks;

INSERT INTO events (sequence, id, type, subject_kind, game, occurred_at, subject_id,
                    actor_user_id, actor_partner, data)
SELECT p.n,
       md5('seed-event-' || p.n)::uuid,
       p.type,
       'deck',
       d.game,
       now() - (current_setting('deckhand.seed_events')::int - p.n) * interval '1 minute',
       d.id,
       d.owner_id,
       NULL,
       CASE p.type
           WHEN 'deck.created' THEN jsonb_build_object('version', 1, 'forked_from', NULL)
           WHEN 'deck.updated' THEN jsonb_build_object('version', 2 + p.n % 40,
                                                       'changed', jsonb_build_array('notes'))
           WHEN 'deck.rolled_back' THEN jsonb_build_object('version', 2 + p.n % 40,
                                                           'restored_from', 1)
           ELSE '{}'::jsonb
       END
FROM (
    SELECT n,
           1 + floor(random() * (SELECT count(*) FROM seed_event_decks))::bigint AS k,
           CASE WHEN r < 0.10 THEN 'deck.created'
                WHEN r < 0.90 THEN 'deck.updated'
                WHEN r < 0.95 THEN 'deck.rolled_back'
                ELSE 'deck.strategy_guide.updated' END AS type
    FROM (SELECT n, random() AS r
          FROM generate_series(1, current_setting('deckhand.seed_events')::int) AS n) AS drawn
) AS p
JOIN seed_event_decks AS d ON d.k = p.k;

ALTER TABLE events ENABLE TRIGGER events_notify;
UPDATE event_log SET last_sequence = (SELECT coalesce(max(sequence), 0) FROM events);

DROP TABLE seed_event_decks;
