DROP INDEX `api_keys_org_idx`;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `parent_id` text;--> statement-breakpoint
CREATE INDEX `api_keys_org_created_idx` ON `api_keys` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `api_keys_org_account_created_idx` ON `api_keys` (`org_id`,`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `api_keys_parent_idx` ON `api_keys` (`parent_id`);--> statement-breakpoint
ALTER TABLE `deployments` ADD `redeploy_of` text;