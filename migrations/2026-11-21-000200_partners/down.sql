DROP TABLE partner_signature_replays;
DROP TABLE partner_api_keys;
DROP TABLE partners;
