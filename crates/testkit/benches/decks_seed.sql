-- A realistic deck data set for the deck list benchmark and the query plans in
-- docs/benchmarks.md. Set the size first, then run this file on a migrated schema:
--
--   SET deckhand.seed_decks = 200000;   -- the plans; the criterion bench uses 20000
--   \i crates/testkit/benches/decks_seed.sql
--
-- Deterministic (setseed), in plain SQL with generate_series so 200,000 decks load in seconds
-- rather than through the service. Shape: one user per 50 decks with a skewed number of decks
-- each; 85% mtg, 15% lorcana; 90% public, 6% unlisted, 4% private; 5% archived; views
-- log-uniform (most decks have few, a handful very many), likes a fraction of views, trending
-- set for viewed decks only; names from guild/colour x archetype words so `q` has both common
-- and rare substrings. The card lists are copies of a few real-sized JSON documents (about 40
-- lines each) in the domain's serialised form, so rows have their real width and TOAST.

SELECT setseed(0.42);

CREATE TEMP TABLE seed_size AS
SELECT current_setting('deckhand.seed_decks')::int AS decks,
       greatest(current_setting('deckhand.seed_decks')::int / 50, 10) AS users;

INSERT INTO users (id, username, active, premium, password_hash, created_at)
SELECT md5('seed-user-' || n)::uuid, 'player_' || n, true, n % 10 = 0, NULL,
       now() - interval '4 years' + n * interval '1 minute'
FROM seed_size, generate_series(1, seed_size.users) AS n;

-- Ten card lists, forty lines each, and their summaries: every deck shares one of them.
CREATE TEMP TABLE seed_cards AS
SELECT k,
       jsonb_agg(jsonb_build_object(
           'section', CASE WHEN line <= 32 THEN 'main' ELSE 'sideboard' END,
           'quantity', 1 + (line * 7 + k) % 4,
           'foil', (line + k) % 9 = 0,
           'card', jsonb_build_object(
               'variant_id', md5('variant-' || k || '-' || line)::uuid,
               'card_id', md5('card-' || k || '-' || line)::uuid,
               'name', 'Seed Card ' || k || '-' || line,
               'set', 'set' || (line % 12),
               'collector_number', (100 + line)::text,
               'type_line', CASE WHEN line % 3 = 0 THEN 'Creature — Human Wizard'
                                 ELSE 'Instant' END,
               'image_url', 'https://cards.example.org/' || md5('img-' || k || '-' || line) || '.jpg',
               'colors', jsonb_build_array((ARRAY['W','U','B','R','G'])[1 + (line + k) % 5])))
           ORDER BY line) AS cards,
       jsonb_build_object('section_counts', jsonb_build_object('main', 60, 'sideboard', 15),
                          'colors', jsonb_build_array('U', 'R'),
                          'featured_cards', jsonb_build_array()) AS summary
FROM generate_series(0, 9) AS k, generate_series(1, 40) AS line
GROUP BY k;

CREATE TEMP TABLE seed_decks AS
SELECT n,
       md5('seed-deck-' || n)::uuid AS id,
       CASE WHEN random() < 0.85 THEN 'mtg' ELSE 'lorcana' END AS game,
       -- Skewed authorship: low user numbers own many decks.
       1 + floor(power(random(), 2) * (SELECT users FROM seed_size))::int AS owner,
       random() AS r_visibility,
       random() AS r_format,
       random() AS r_flags,
       random() AS r_name,
       -- Created over three years; 40% never edited, the rest edited some time after.
       now() - random() * interval '3 years' AS created_at,
       random() AS r_edit,
       -- Log-uniform views: exp(0..13) with a product of two uniforms, so most are small.
       floor(exp(random() * random() * 13))::bigint - 1 AS pageviews,
       random() AS r_likes,
       random() AS r_recent
FROM seed_size, generate_series(1, seed_size.decks) AS n;

INSERT INTO decks (id, game, owner_id, name, notes, visibility, format_id, youtube_url, thumbnail,
                   legal, archetype, cards, featured, summary, source_provider, is_archived,
                   has_guide, has_sideboard_guide, version, created_at, updated_at)
SELECT s.id, s.game, md5('seed-user-' || s.owner)::uuid,
       CASE WHEN s.game = 'mtg' THEN
           (ARRAY['Mono-Red','Mono-Green','Mono-Black','Izzet','Azorius','Dimir','Rakdos',
                  'Golgari','Boros','Selesnya','Orzhov','Simic','Gruul','Esper','Jund','Grixis',
                  'Naya','Bant','Temur','Abzan','Mardu','Jeskai','Sultai','Five-Color'])
               [1 + (s.n * 7) % 24] || ' ' ||
           (ARRAY['Aggro','Control','Midrange','Combo','Tempo','Ramp','Burn','Tron','Elves',
                  'Phoenix','Affinity','Storm','Reanimator','Tokens','Delver','Prowess','Dragons',
                  'Zoo','Merfolk','Spirits'])[1 + (s.n * 13) % 20]
       ELSE
           (ARRAY['Amber','Amethyst','Emerald','Ruby','Sapphire','Steel'])[1 + (s.n * 5) % 6]
               || '-' ||
           (ARRAY['Amber','Amethyst','Emerald','Ruby','Sapphire','Steel'])[1 + (s.n * 11) % 6]
               || ' ' ||
           (ARRAY['Songs','Items','Discard','Evasive','Bounce','Locations','Princesses'])
               [1 + (s.n * 3) % 7]
       END
       -- Personal touches, so names are not all alike.
       || CASE WHEN s.r_name < 0.3 THEN ' #' || (s.n % 1000)
               WHEN s.r_name < 0.4 THEN ' (budget)'
               WHEN s.r_name < 0.45 THEN ' — tournament ' || (2020 + s.n % 7)
               ELSE '' END,
       'Sideboard plan and mulligan notes for deck ' || s.n || '.',
       CASE WHEN s.r_visibility < 0.90 THEN 'public'
            WHEN s.r_visibility < 0.96 THEN 'unlisted' ELSE 'private' END,
       CASE WHEN s.r_format < 0.1 THEN NULL
            ELSE (SELECT f.id FROM formats f WHERE f.game = s.game
                  ORDER BY f.position, f.slug
                  OFFSET floor(s.r_format * 1000)::int
                      % (SELECT count(*) FROM formats g WHERE g.game = s.game)
                  LIMIT 1) END,
       CASE WHEN s.r_flags < 0.1 THEN 'https://www.youtube.com/watch?v=' || left(md5(s.id::text), 11) END,
       NULL,
       s.r_flags < 0.8,
       NULL,
       c.cards, NULL, c.summary, 'manual',
       s.r_flags > 0.95,
       s.r_flags BETWEEN 0.5 AND 0.65,
       s.r_flags BETWEEN 0.55 AND 0.63,
       1,
       s.created_at,
       CASE WHEN s.r_edit < 0.4 THEN s.created_at
            ELSE s.created_at + s.r_edit * (now() - s.created_at) END
FROM seed_decks s JOIN seed_cards c ON c.k = s.n % 10;

INSERT INTO deck_stats (deck_id, game, pageviews, likes, trending)
SELECT s.id, s.game, s.pageviews,
       floor(s.pageviews * s.r_likes * 0.05)::bigint,
       -- A viewed deck's score: the weight of its last view plus the log of its decayed count
       -- (docs: domain decks::trending), the last view within the past 90 days.
       CASE WHEN s.pageviews = 0 THEN '-Infinity'::float8
            ELSE ln(2) * extract(epoch FROM now() - s.r_recent * interval '90 days') / 86400
                 + ln(1 + s.pageviews * s.r_recent * 0.1) END
FROM seed_decks s;

DROP TABLE seed_decks, seed_cards, seed_size;
ANALYZE users;
ANALYZE decks;
ANALYZE deck_stats;
