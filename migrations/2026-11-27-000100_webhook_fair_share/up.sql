-- Fair share between webhook endpoints (contract "Webhooks", `postgres::webhooks::claim`): a
-- claim goes round the endpoints, taking each one's oldest due deliveries, and counts each
-- one's deliveries in flight, so that no endpoint has more than two at a time.

-- An endpoint's pending deliveries, oldest due first: a claim reads at most the few in flight
-- and the two it may take of each endpoint, however long the endpoint's queue.
CREATE INDEX webhook_deliveries_endpoint_due
    ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
-- Deliveries in flight (leased), per endpoint. A recorded attempt ends its lease (NULL), so this
-- holds the attempts running now and the leases of instances that died mid-attempt: a few rows.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id, lease_until)
    WHERE lease_until IS NOT NULL;
-- An endpoint's pending pings: a disabled endpoint gets only those, and a ping while one is
-- pending answers with it.
CREATE INDEX webhook_deliveries_pending_pings ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'pending' AND event_type = 'webhook.ping';
