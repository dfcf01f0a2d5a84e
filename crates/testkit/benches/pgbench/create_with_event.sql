-- A deck create as crates/postgres/src/decks.rs writes it (deck, counters, history), with the
-- event folded into the history insert (numbered, written_event). See docs/benchmarks.md.
\set n random(1, 100000)
SELECT d.id AS source FROM bench_decks b JOIN decks d ON d.id = b.id WHERE b.n = :n \gset
BEGIN;
INSERT INTO decks (id, game, owner_id, name, notes, visibility, legal, cards, summary, source_provider, is_archived, has_guide, has_sideboard_guide, version, created_at, updated_at) SELECT gen_random_uuid(), game, owner_id, 'pgbench ' || :n, '', 'public', false, cards, summary, 'manual', false, false, false, 1, now(), now() FROM decks WHERE id = ':source'::uuid RETURNING id AS deck \gset
INSERT INTO deck_stats (deck_id, game) VALUES (':deck'::uuid, 'mtg');
WITH numbered AS (UPDATE event_log SET last_sequence = last_sequence + 1 RETURNING last_sequence), written_event AS (INSERT INTO events (sequence, id, type, subject_kind, game, occurred_at, subject_id, actor_user_id, actor_partner, data) SELECT last_sequence, gen_random_uuid(), 'deck.created', 'deck', 'mtg', now(), ':deck'::uuid, NULL, NULL, '{"version": 1, "forked_from": null}'::jsonb FROM numbered) INSERT INTO deck_versions (deck_id, version_number, history_type, restored_from, content, cards_from, summary, edited_at) SELECT ':deck'::uuid, 1, 'create', NULL, '{}'::json, NULL, '{}'::json, now() FROM numbered;
COMMIT;
