DROP TABLE deck_views;
DROP TABLE deck_stats;
DROP TABLE deck_versions;
DROP TABLE decks;
-- pg_trgm stays: other schemas of the database may use it.
