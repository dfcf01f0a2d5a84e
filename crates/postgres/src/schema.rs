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

diesel::joinable!(partner_api_keys -> partners (partner_slug));
diesel::allow_tables_to_appear_in_same_query!(partners, partner_api_keys);
