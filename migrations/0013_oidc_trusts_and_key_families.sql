CREATE TABLE `oidc_trust_index` (
	`trust_id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oidc_trusts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`account_id` text NOT NULL,
	`parent_id` text NOT NULL,
	`name` text NOT NULL,
	`issuer` text NOT NULL,
	`audience` text NOT NULL,
	`conditions` text NOT NULL,
	`scopes` text NOT NULL,
	`project_ids` text,
	`ttl` integer NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oidc_trusts_org_created_idx` ON `oidc_trusts` (`org_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `limiter` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `oidc_trust_id` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `oidc_subject` text;--> statement-breakpoint
CREATE INDEX `api_keys_oidc_trust_idx` ON `api_keys` (`oidc_trust_id`);--> statement-breakpoint
-- Written by hand (API_CONTRACT §28, a key family shares one rate limit): every existing key
-- counts in the limiter object of the key at the top of its parent_id chain. The family is walked
-- down from each root once; each key is then found by its primary key.
WITH RECURSIVE `family`(`id`, `root`) AS (
	SELECT `id`, `id` FROM `api_keys` WHERE `parent_id` IS NULL
	UNION ALL
	SELECT `child`.`id`, `family`.`root` FROM `api_keys` AS `child` JOIN `family` ON `child`.`parent_id` = `family`.`id`
)
UPDATE `api_keys` SET `limiter` = 'key:' || `family`.`root` FROM `family` WHERE `family`.`id` = `api_keys`.`id`;
