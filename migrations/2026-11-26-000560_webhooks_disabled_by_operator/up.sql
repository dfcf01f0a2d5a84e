-- An operator disables an endpoint (`deckhand admin webhook disable`): `operator`, beside the
-- service's `failing`.
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled_reason_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check
    CHECK (disabled_reason IN ('failing', 'operator'));
