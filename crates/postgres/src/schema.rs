//! Written by hand to match `migrations/`; the contract suite's round trips catch a drift.

diesel::table! {
    users (id) {
        id -> Uuid,
        username -> Text,
        active -> Bool,
        premium -> Bool,
        password_hash -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    personal_access_tokens (id) {
        id -> Uuid,
        user_id -> Uuid,
        name -> Nullable<Text>,
        token_hash -> Bytea,
        // A CHECK constraint rules out NULL elements, so they need no `Nullable`.
        scopes -> Array<Text>,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(personal_access_tokens -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(users, personal_access_tokens);

diesel::table! {
    games (slug) {
        slug -> Text,
        name -> Text,
        colors -> Array<Text>,
        position -> Integer,
    }
}

diesel::table! {
    game_sections (game, key) {
        game -> Text,
        key -> Text,
        label -> Text,
        counted -> Bool,
        position -> Integer,
    }
}

diesel::table! {
    formats (id) {
        id -> Uuid,
        game -> Text,
        slug -> Text,
        name -> Text,
        position -> Integer,
    }
}

diesel::table! {
    catalog_cards (game, card_id) {
        game -> Text,
        card_id -> Uuid,
        name -> Text,
        face_names -> Array<Text>,
        name_key -> Text,
        front_face_key -> Text,
    }
}

diesel::table! {
    catalog_printings (game, variant_id) {
        game -> Text,
        variant_id -> Uuid,
        card_id -> Uuid,
        name -> Text,
        set -> Text,
        collector_number -> Text,
        type_line -> Text,
        image_url -> Nullable<Text>,
        colors -> Array<Text>,
        catalog_a_id -> Nullable<Text>,
        catalog_b_id -> Nullable<Text>,
        catalog_c_id -> Nullable<Text>,
        lang -> Text,
        released_at -> Nullable<Date>,
        preference -> SmallInt,
        legalities -> Jsonb,
    }
}

diesel::allow_tables_to_appear_in_same_query!(games, game_sections, formats);
