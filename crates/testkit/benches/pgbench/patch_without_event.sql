-- A deck PATCH's save statement as crates/postgres/src/decks.rs (SaveStatement) sends it,
-- without the event CTEs: the cost of a save before events. See docs/benchmarks.md.
\set n random(1, 100000)
SELECT d.id AS deck, d.version AS v FROM bench_decks b JOIN decks d ON d.id = b.id WHERE b.n = :n \gset
WITH target AS (SELECT id FROM decks WHERE id = ':deck'::uuid AND version = :v FOR UPDATE SKIP LOCKED), saved AS (UPDATE decks SET notes = 'pgbench ' || :n, version = version + 1, updated_at = now() FROM target WHERE decks.id = target.id RETURNING decks.id) INSERT INTO deck_versions (deck_id, version_number, history_type, restored_from, content, cards_from, summary, edited_at) SELECT saved.id, :v + 1, 'update', NULL, '{}'::json, NULL, '{}'::json, now() FROM saved;
