ALTER TABLE `notification_integrations` ADD `previous_signing_secret` text;--> statement-breakpoint
ALTER TABLE `notification_integrations` ADD `previous_secret_expires_at` text;--> statement-breakpoint
ALTER TABLE `notification_integrations` ADD `enabled` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `notification_integrations` ADD `disabled_reason` text;--> statement-breakpoint
ALTER TABLE `notification_integrations` ADD `disabled_at` text;--> statement-breakpoint
ALTER TABLE `notification_integrations` ADD `failing_since` text;--> statement-breakpoint
CREATE INDEX `notification_integrations_previous_secret_idx` ON `notification_integrations` (`previous_secret_expires_at`) WHERE previous_secret_expires_at IS NOT NULL;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `series` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `events_created_idx` ON `events` (`created_at`,`id`);