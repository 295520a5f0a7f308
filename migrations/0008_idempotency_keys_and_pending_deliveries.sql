ALTER TABLE `audit_log` ADD `idempotency_key` text;--> statement-breakpoint
ALTER TABLE `audit_log` ADD `idempotency_fingerprint` text;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_log_idempotency_key_idx` ON `audit_log` (`actor_api_key_id`,`idempotency_key`) WHERE idempotency_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `audit_log_idempotency_created_idx` ON `audit_log` (`created_at`) WHERE idempotency_key IS NOT NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending_due_idx` ON `webhook_deliveries` (`integration_id`,`next_attempt_at`) WHERE status = 'pending';