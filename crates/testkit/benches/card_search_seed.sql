-- Card lists with a realistic popularity curve, for card search and card statistics
-- (docs/benchmarks.md, "Card search and card statistics"). Run after decks_seed.sql and an import
-- of the mtg catalog, with triggers off (`SET session_replication_role = replica`): it writes
-- each mtg deck's counted cards (`card_ids`, `card_copies`, and their sieve `card_bloom`, which
-- the trigger `deck_counted_cards` keeps from the card list in a real save) directly.
--
-- Every mtg card gets a popularity rank (a fixed shuffle of the catalog). A deck draws 40 ranks
-- from a Zipf-Mandelbrot law, P(rank r) proportional to 1 / (r + 20), as the inverse of its
-- continuous CDF (so one draw is one random() call), and holds each distinct card drawn, with 1
-- to 4 copies. With the 2019 catalog (about 20,000 cards) the most common card is in about a
-- quarter of the decks, the 30th in about a tenth, the 1,000th in about 0.5% and most cards in
-- a handful: a few staples everywhere, a long tail of cards almost nobody plays.

SELECT setseed(0.45);

CREATE TEMP TABLE seed_ranks AS
SELECT card_id, row_number() OVER (ORDER BY md5(card_id::text)) AS rank
FROM catalog_cards WHERE game = 'mtg';
CREATE UNIQUE INDEX ON seed_ranks (rank);
ANALYZE seed_ranks;

CREATE TEMP TABLE seed_draws AS
SELECT d.id,
       -- Zipf-Mandelbrot with offset 20 over n cards: rank = 20 * ((n + 20) / 20)^u - 19.
       least(floor(20 * power((n.cards + 20) / 20.0, random()))::bigint - 19, n.cards) AS rank,
       1 + floor(random() * 4)::int AS copies
FROM decks d
CROSS JOIN (SELECT count(*) AS cards FROM seed_ranks) AS n
CROSS JOIN generate_series(1, 40) AS draw
WHERE d.game = 'mtg';

UPDATE decks d
SET card_ids = picked.ids, card_copies = picked.copies,
    card_bloom = deck_card_bloom(picked.ids)
FROM (
    SELECT s.id,
           array_agg(r.card_id ORDER BY r.card_id) AS ids,
           array_agg(s.copies ORDER BY r.card_id) AS copies
    FROM (SELECT id, rank, max(copies) AS copies FROM seed_draws GROUP BY id, rank) AS s
    JOIN seed_ranks r ON r.rank = s.rank
    GROUP BY s.id
) AS picked
WHERE d.id = picked.id;

DROP TABLE seed_draws, seed_ranks;
