-- An event log for the feed's query plans in docs/benchmarks.md: run after decks_seed.sql on a
-- migrated schema. Set the size first:
--
--   SET deckhand.seed_events = 1000000;
--   \i crates/testkit/benches/events_seed.sql
--
-- Deterministic (setseed). Shape: events of the seeded decks in their games (85% mtg), 97% deck
-- events (deck.updated most), 2% sideboard guide events, 1% catalog imports; one forked deck in
-- twenty (forked from a random older deck) so the `forkedFrom` filter has work. The insert
-- trigger's NOTIFY is off while loading (a million notifications in one transaction). Rows are
-- stored in sequence order, as the service appends them: the join below, left unordered,
-- scattered each feed window's events over the whole table (docs/benchmarks.md, "Ten times the
-- data").

SELECT setseed(0.27);

UPDATE decks d SET forked_from_id = src.id, forked_from_version = 1
FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM decks) numbered
JOIN LATERAL (SELECT id FROM decks OFFSET (numbered.n * 7919) % 1000 LIMIT 1) src ON true
WHERE d.id = numbered.id AND numbered.n % 20 = 0 AND src.id <> d.id;

CREATE TEMP TABLE seed_subjects AS
SELECT row_number() OVER (ORDER BY id) AS n, id, game FROM decks;

ALTER TABLE events DISABLE TRIGGER events_notify;

INSERT INTO events (sequence, id, type, subject_kind, game, occurred_at, subject_id,
                    actor_user_id, actor_partner, data)
SELECT e.n,
       md5('seed-event-' || e.n)::uuid,
       CASE WHEN e.r < 0.01 THEN 'catalog.imported'
            WHEN e.r < 0.03 THEN 'sideboard_guide.updated'
            WHEN e.r < 0.13 THEN 'deck.created'
            WHEN e.r < 0.16 THEN 'deck.rolled_back'
            ELSE 'deck.updated' END,
       CASE WHEN e.r < 0.01 THEN 'catalog'
            WHEN e.r < 0.03 THEN 'sideboard_guide'
            ELSE 'deck' END,
       CASE WHEN e.r < 0.01 THEN 'mtg' ELSE s.game END,
       now() - interval '30 days' + e.n * interval '2 seconds',
       CASE WHEN e.r < 0.01 THEN NULL
            WHEN e.r < 0.03 THEN md5('seed-guide-' || e.n)::uuid
            ELSE s.id END,
       NULL, NULL,
       '{"version": 2, "changed": ["notes"]}'::jsonb
FROM (SELECT n, random() AS r,
             1 + floor(random() * (SELECT count(*) FROM seed_subjects))::int AS subject
      FROM generate_series(1, current_setting('deckhand.seed_events')::int) AS n) e
JOIN seed_subjects s ON s.n = e.subject
ORDER BY e.n;

UPDATE event_log SET last_sequence = (SELECT max(sequence) FROM events);
ALTER TABLE events ENABLE TRIGGER events_notify;
