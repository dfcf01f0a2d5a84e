DROP TRIGGER webhook_deliveries_notify ON webhook_deliveries;
DROP FUNCTION webhook_deliveries_notify();
DROP TABLE webhook_dispatch;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
