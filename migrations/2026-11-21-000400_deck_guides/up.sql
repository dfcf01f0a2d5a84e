-- A deck's strategy guide: at most one per deck. `decks.has_guide` mirrors its existence and is
-- kept in the same transaction, so lists can filter on it without a join.
CREATE TABLE deck_guides (
    deck_id uuid PRIMARY KEY REFERENCES decks (id) ON DELETE CASCADE,
    id uuid NOT NULL UNIQUE,
    content_type text NOT NULL CHECK (content_type IN ('markdown', 'text')),
    content text NOT NULL CHECK (char_length(content) <= 200000),
    is_premium boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
