CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`project_id` text,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`actor_type` text NOT NULL,
	`actor_account_id` text,
	`actor_api_key_id` text,
	`request_id` text NOT NULL,
	`ip` text,
	`user_agent` text,
	`changes` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_org_created_idx` ON `audit_log` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_project_created_idx` ON `audit_log` (`project_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_created_idx` ON `audit_log` (`created_at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scopes` text DEFAULT '["*"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `project_ids` text;