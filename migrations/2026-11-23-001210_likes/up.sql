-- Likes of decks and sideboard guides: one row per user and item. The counters they move
-- (`deck_stats.likes`, `sideboard_guides.likes`) are changed in the statement that writes the
-- row, so the likes sort follows at once.
CREATE TABLE deck_likes (
    deck_id uuid NOT NULL REFERENCES decks (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users (id),
    liked_at timestamptz NOT NULL,
    PRIMARY KEY (deck_id, user_id)
);

CREATE TABLE sideboard_guide_likes (
    guide_id uuid NOT NULL REFERENCES sideboard_guides (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users (id),
    liked_at timestamptz NOT NULL,
    PRIMARY KEY (guide_id, user_id)
);
