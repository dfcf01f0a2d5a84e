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
        featured_slot -> Nullable<Text>,
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
        type_line -> Text,
        color_identity -> Array<Text>,
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

diesel::table! {
    decks (id) {
        id -> Uuid,
        game -> Text,
        owner_id -> Uuid,
        name -> Text,
        notes -> Text,
        visibility -> Text,
        format_id -> Nullable<Uuid>,
        youtube_url -> Nullable<Text>,
        thumbnail -> Nullable<Text>,
        legal -> Bool,
        archetype -> Nullable<Text>,
        cards -> Json,
        featured -> Nullable<Json>,
        summary -> Json,
        source_provider -> Text,
        source_external_id -> Nullable<Text>,
        source_external_version -> Nullable<Text>,
        source_external_url -> Nullable<Text>,
        source_imported_at -> Nullable<Timestamptz>,
        is_archived -> Bool,
        has_guide -> Bool,
        has_sideboard_guide -> Bool,
        version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        forked_from_id -> Nullable<Uuid>,
        forked_from_version -> Nullable<Int4>,
    }
}

diesel::table! {
    deck_versions (deck_id, version_number) {
        deck_id -> Uuid,
        version_number -> Int4,
        history_type -> Text,
        restored_from -> Nullable<Int4>,
        content -> Json,
        summary -> Json,
        edited_at -> Timestamptz,
        cards_from -> Nullable<Int4>,
    }
}

diesel::table! {
    deck_stats (deck_id) {
        deck_id -> Uuid,
        game -> Text,
        pageviews -> Int8,
        likes -> Int8,
        trending -> Float8,
        forks -> Int8,
    }
}

diesel::table! {
    deck_views (deck_id, visitor) {
        deck_id -> Uuid,
        visitor -> Bytea,
        counted_at -> Timestamptz,
    }
}

diesel::joinable!(decks -> users (owner_id));
diesel::joinable!(deck_versions -> decks (deck_id));
diesel::joinable!(deck_stats -> decks (deck_id));
diesel::joinable!(deck_views -> decks (deck_id));

// Decks are read with their owner's username and counters in one query.
diesel::allow_tables_to_appear_in_same_query!(users, decks, deck_versions, deck_stats, deck_views);

diesel::table! {
    partners (slug) {
        slug -> Text,
        created_by -> Uuid,
        scopes -> Array<Text>,
        game_scopes -> Array<Text>,
        tier -> Text,
        secret_sealed -> Bytea,
        active -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    partner_api_keys (id) {
        id -> Uuid,
        partner_slug -> Text,
        key_hash -> Bytea,
        created_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    partner_signature_replays (partner_slug, signature_hash) {
        partner_slug -> Text,
        signature_hash -> Bytea,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    dpop_proofs (jkt, jti_hash) {
        jkt -> Text,
        jti_hash -> Bytea,
        expires_at -> Timestamptz,
    }
}

diesel::joinable!(partner_api_keys -> partners (partner_slug));
diesel::allow_tables_to_appear_in_same_query!(partners, partner_api_keys);

diesel::table! {
    deck_guides (deck_id) {
        deck_id -> Uuid,
        id -> Uuid,
        content_type -> Text,
        content -> Text,
        is_premium -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(deck_guides -> decks (deck_id));
diesel::allow_tables_to_appear_in_same_query!(decks, deck_guides);

diesel::table! {
    sideboard_guides (id) {
        id -> Uuid,
        game -> Text,
        owner_id -> Uuid,
        primary_deck_id -> Uuid,
        name -> Text,
        description -> Text,
        notes -> Text,
        visibility -> Text,
        // The adapter never stores NULL elements, so they need no `Nullable`.
        tags -> Array<Text>,
        format -> Nullable<Text>,
        thumbnail -> Nullable<Text>,
        youtube_url -> Nullable<Text>,
        premium -> Bool,
        is_archived -> Bool,
        pageviews -> Int8,
        likes -> Int8,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    sideboard_guide_decks (guide_id, deck_id) {
        guide_id -> Uuid,
        deck_id -> Uuid,
        is_primary -> Bool,
        attached_at -> Timestamptz,
    }
}

diesel::table! {
    sideboard_matchups (id) {
        id -> Uuid,
        guide_id -> Uuid,
        opponent_deck_name -> Text,
        opponent_archetype -> Nullable<Text>,
        difficulty -> Text,
        notes -> Text,
        play_notes -> Text,
        draw_notes -> Text,
        sort_order -> Int4,
        thumbnail -> Nullable<Text>,
        is_featured -> Bool,
        special_card_overrides -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(sideboard_guide_decks -> sideboard_guides (guide_id));
diesel::joinable!(sideboard_matchups -> sideboard_guides (guide_id));
diesel::allow_tables_to_appear_in_same_query!(
    sideboard_guides,
    sideboard_guide_decks,
    sideboard_matchups,
    decks
);

diesel::table! {
    oauth_clients (id) {
        id -> Uuid,
        partner_slug -> Text,
        name -> Text,
        secret_hash -> Nullable<Bytea>,
        redirect_uris -> Array<Text>,
        scopes -> Array<Text>,
        grant_types -> Array<Text>,
        created_at -> Timestamptz,
        disabled_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_grants (id) {
        id -> Uuid,
        client_id -> Uuid,
        user_id -> Uuid,
        scopes -> Array<Text>,
        jkt -> Nullable<Text>,
        created_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_authorization_codes (code_hash) {
        code_hash -> Bytea,
        client_id -> Uuid,
        user_id -> Uuid,
        redirect_uri -> Text,
        scopes -> Array<Text>,
        code_challenge -> Text,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        redeemed_at -> Nullable<Timestamptz>,
        grant_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    oauth_refresh_tokens (token_hash) {
        token_hash -> Bytea,
        grant_id -> Uuid,
        issued_at -> Timestamptz,
        expires_at -> Timestamptz,
        rotated_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_access_tokens (token_hash) {
        token_hash -> Bytea,
        grant_id -> Uuid,
        scopes -> Array<Text>,
        issued_at -> Timestamptz,
        expires_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_sessions (token_hash) {
        token_hash -> Bytea,
        user_id -> Uuid,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
    }
}

diesel::joinable!(oauth_clients -> partners (partner_slug));
diesel::joinable!(oauth_grants -> oauth_clients (client_id));
diesel::joinable!(oauth_grants -> users (user_id));
diesel::joinable!(oauth_refresh_tokens -> oauth_grants (grant_id));
diesel::joinable!(oauth_access_tokens -> oauth_grants (grant_id));
diesel::joinable!(oauth_sessions -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(
    oauth_clients,
    oauth_grants,
    oauth_authorization_codes,
    oauth_refresh_tokens,
    oauth_access_tokens,
    oauth_sessions,
    users,
    partners,
);
