CREATE TABLE `api_key_index` (
	`key_hash` text PRIMARY KEY NOT NULL,
	`key_id` text NOT NULL,
	`org_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `organizations` ADD `database` text DEFAULT 'DB' NOT NULL;--> statement-breakpoint
-- Every key issued before the directory's index existed lives in this database, with its organization.
INSERT INTO `api_key_index` (`key_hash`, `key_id`, `org_id`, `created_at`)
SELECT `key_hash`, `id`, `org_id`, `created_at` FROM `api_keys`;
