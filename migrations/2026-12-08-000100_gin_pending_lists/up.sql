-- A GIN index adds new entries to a pending list, which every search of the index reads in full
-- before its tree, until the list outgrows gin_pending_list_limit (4 MB by default) or a vacuum
-- merges it. At 4 MB that is up to about 500 pages read by every rare card's page, card count
-- and statistics gathering, and by every name search planned on the trigram index: a rare card's
-- page read 1.6 ms where it reads 0.17 ms with the list merged. Where autovacuum comes seldom
-- (a large table) the list is seldom short. Capped at 512 kB (64 pages) a search reads at most
-- an eighth of that, and the merges, smaller and more frequent, cost the saves nothing that
-- could be measured (docs/benchmarks.md, "GIN pending lists"). Every GIN index of the schema,
-- so that no search keeps the trap.
ALTER INDEX decks_card_ids SET (gin_pending_list_limit = 512);
ALTER INDEX decks_name_trigram SET (gin_pending_list_limit = 512);
ALTER INDEX sideboard_guides_name_trigram SET (gin_pending_list_limit = 512);
ALTER INDEX sideboard_guides_format_trigram SET (gin_pending_list_limit = 512);
ALTER INDEX sideboard_matchups_archetype_trigram SET (gin_pending_list_limit = 512);
