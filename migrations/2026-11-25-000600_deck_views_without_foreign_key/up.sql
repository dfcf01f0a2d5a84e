-- A view record no longer names its deck through a foreign key. The key's check ran on every
-- counted view: a query of its own and a KEY SHARE lock on the deck's row, which writes to the
-- deck's heap page and WAL. It was a fifth of what a counted view cost PostgreSQL (158 against
-- 175 to 220 µs a view with `pgbench`, docs/benchmarks.md, "Eighth pass"). What it guarded is
-- kept otherwise: the counting statement only inserts a record for a deck it has just found
-- visible, decks are archived, never deleted, by the service, and a record outlives its deck at
-- most until the next prune (`DeckRepository::prune_views`) drops it with the expired ones.
ALTER TABLE deck_views DROP CONSTRAINT deck_views_deck_id_fkey;
