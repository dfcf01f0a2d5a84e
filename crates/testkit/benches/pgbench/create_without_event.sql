-- A deck create as crates/postgres/src/decks.rs writes it (deck, counters, history), without
-- the event: the cost of a create before events. See docs/benchmarks.md.
\set n random(1, 100000)
SELECT d.id AS source FROM bench_decks b JOIN decks d ON d.id = b.id WHERE b.n = :n \gset
BEGIN;
INSERT INTO decks (id, game, owner_id, name, notes, visibility, legal, cards, summary, source_provider, is_archived, has_guide, has_sideboard_guide, version, created_at, updated_at) SELECT gen_random_uuid(), game, owner_id, 'pgbench ' || :n, '', 'public', false, cards, summary, 'manual', false, false, false, 1, now(), now() FROM decks WHERE id = ':source'::uuid RETURNING id AS deck \gset
INSERT INTO deck_stats (deck_id, game) VALUES (':deck'::uuid, 'mtg');
INSERT INTO deck_versions (deck_id, version_number, history_type, restored_from, content, cards_from, summary, edited_at) SELECT ':deck'::uuid, 1, 'create', NULL, '{}'::json, NULL, '{}'::json, now();
COMMIT;
