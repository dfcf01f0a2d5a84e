-- A sideboard guide data set for the guide list query plans in docs/benchmarks.md. Run it
-- after decks_seed.sql (it puts guides on those decks); set the size first:
--
--   SET deckhand.seed_decks = 200000;   \i crates/testkit/benches/decks_seed.sql
--   SET deckhand.seed_guides = 100000;  \i crates/testkit/benches/sideboard_guides_seed.sql
--
-- Deterministic (setseed), plain SQL with generate_series. Shape: each guide is on a random
-- non-archived deck and owned by that deck's owner, in its game; 85% public, 10% unlisted, 5%
-- private (guides are written to be shared); 5% archived; 30% link a video; a format string
-- for 90%; views log-uniform and likes a fraction of them, as for decks; one to six matchups
-- each with an opponent archetype from a small vocabulary; a third of the guides have one or
-- two decks attached besides the primary one. decks.has_sideboard_guide is then set as the
-- adapter keeps it.

SELECT setseed(0.24);

CREATE TEMP TABLE seed_guides AS
WITH candidates AS (
    SELECT id, game, owner_id, row_number() OVER (ORDER BY id) AS k
    FROM decks WHERE NOT is_archived
), sized AS (
    SELECT count(*) AS decks FROM candidates
), picks AS (
    -- The random deck is drawn once per guide, before the join.
    SELECT n, 1 + floor(random() * sized.decks)::bigint AS k
    FROM generate_series(1, current_setting('deckhand.seed_guides')::int) AS n, sized
)
SELECT p.n,
       md5('seed-guide-' || p.n)::uuid AS id,
       c.id AS deck_id, c.game, c.owner_id,
       random() AS r_visibility, random() AS r_flags, random() AS r_name,
       now() - random() * interval '2 years' AS created_at,
       random() AS r_edit,
       floor(exp(random() * random() * 12))::bigint - 1 AS pageviews,
       random() AS r_likes,
       1 + floor(random() * 6)::int AS matchups
FROM picks p JOIN candidates c ON c.k = p.k;

INSERT INTO sideboard_guides (id, game, owner_id, primary_deck_id, name, description, notes,
                              visibility, tags, format, thumbnail, youtube_url, premium,
                              is_archived, pageviews, likes, created_at, updated_at)
SELECT s.id, s.game, s.owner_id, s.deck_id,
       (ARRAY['Sideboard plan','Matchup guide','Boarding notes','Tournament prep',
              'Ladder sideboarding','Meta answers'])[1 + s.n % 6] || ': ' ||
       (ARRAY['Izzet','Azorius','Rakdos','Golgari','Boros','Mono-Red','Amber-Steel',
              'Esper','Jund','Five-Color'])[1 + (s.n * 7) % 10] || ' ' ||
       (ARRAY['Phoenix','Control','Aggro','Midrange','Tempo','Ramp','Combo','Burn'])[1 + (s.n * 3) % 8]
       || CASE WHEN s.r_name < 0.3 THEN ' #' || (s.n % 1000) ELSE '' END,
       'How to sideboard this deck against the field, matchup by matchup. ' || repeat('Plan. ', 50),
       'Notes for guide ' || s.n || '.',
       CASE WHEN s.r_visibility < 0.85 THEN 'public'
            WHEN s.r_visibility < 0.95 THEN 'unlisted' ELSE 'private' END,
       ARRAY['competitive', (ARRAY['bo3','ladder','paper','online'])[1 + s.n % 4]],
       CASE WHEN s.r_flags < 0.1 THEN NULL
            ELSE (ARRAY['Modern','Pioneer','Standard','Legacy','Pauper','Vintage','Core'])[1 + s.n % 7] END,
       NULL,
       CASE WHEN s.r_flags > 0.7 THEN 'https://www.youtube.com/watch?v=' || left(md5(s.id::text), 11) END,
       s.r_flags BETWEEN 0.4 AND 0.5,
       s.r_flags BETWEEN 0.5 AND 0.55,
       s.pageviews,
       floor(s.pageviews * s.r_likes * 0.05)::bigint,
       s.created_at,
       CASE WHEN s.r_edit < 0.3 THEN s.created_at
            ELSE s.created_at + s.r_edit * (now() - s.created_at) END
FROM seed_guides s;

INSERT INTO sideboard_guide_decks (guide_id, deck_id, is_primary, attached_at)
SELECT id, deck_id, true, created_at FROM seed_guides;

-- A third of the guides get one or two more decks of their game.
INSERT INTO sideboard_guide_decks (guide_id, deck_id, is_primary, attached_at)
SELECT DISTINCT ON (s.id, d.id) s.id, d.id, false, s.created_at + interval '1 day'
FROM seed_guides s
CROSS JOIN LATERAL generate_series(1, 1 + s.n % 2) AS extra
JOIN decks d ON d.id = md5('seed-deck-' || (1 + (s.n * 31 + extra * 17) % 1000))::uuid
WHERE s.n % 3 = 0 AND d.id <> s.deck_id AND d.game = s.game
ON CONFLICT DO NOTHING;

INSERT INTO sideboard_matchups (id, guide_id, opponent_deck_name, opponent_archetype,
                                difficulty, notes, play_notes, draw_notes, sort_order, thumbnail,
                                is_featured, special_card_overrides, created_at)
SELECT md5('seed-matchup-' || s.n || '-' || m)::uuid, s.id,
       (ARRAY['Mono-Red Burn','Azorius Control','Amulet Titan','Hammer Time','Living End',
              'Yawgmoth','Rakdos Scam','Domain Zoo'])[1 + (s.n + m) % 8],
       (ARRAY['Aggro','Control','Combo','Midrange','Tempo','Ramp','Prison','Big Mana'])[1 + (s.n * m) % 8],
       (ARRAY['VERY_EASY','EASY','MEDIUM','HARD','VERY_HARD'])[1 + (s.n + m * 3) % 5],
       'General plan.', 'On the play.', 'On the draw.',
       m, NULL, m = 1,
       jsonb_build_array(
           jsonb_build_object('special_card_type', 'in', 'card_id', 'card-' || m,
                              'card_name', 'Sideboard Card ' || m, 'quantity', 2, 'sort_order', 0),
           jsonb_build_object('special_card_type', 'out', 'card_id', 'card-x' || m,
                              'card_name', 'Main Card ' || m, 'quantity', 2, 'sort_order', 1)),
       s.created_at
FROM seed_guides s CROSS JOIN LATERAL generate_series(1, s.matchups) AS m;

-- decks_seed.sql flags decks at random; from here on the flag follows the guides.
UPDATE decks d SET has_sideboard_guide = attached.value
FROM (SELECT d2.id, EXISTS (SELECT 1 FROM sideboard_guide_decks gd
                            JOIN sideboard_guides g ON g.id = gd.guide_id
                            WHERE gd.deck_id = d2.id AND NOT g.is_archived) AS value
      FROM decks d2) AS attached
WHERE d.id = attached.id AND d.has_sideboard_guide <> attached.value;

DROP TABLE seed_guides;
ANALYZE sideboard_guides;
ANALYZE sideboard_guide_decks;
ANALYZE sideboard_matchups;
