UPDATE webhook_endpoints SET disabled_reason = NULL WHERE disabled_reason = 'operator';
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_disabled_reason_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check
    CHECK (disabled_reason IN ('failing'));
