ALTER TABLE `deployments` ADD `created_by` text;--> statement-breakpoint
CREATE INDEX `deployments_environment_finished_idx` ON `deployments` (`environment_id`,`status`,`finished_at`,`id`);--> statement-breakpoint
ALTER TABLE `environments` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `environments` ADD `updated_at` text;--> statement-breakpoint
-- API_CONTRACT §23: names unique within a project, case-insensitive, from now on, environments that
-- already share a name keep it. Each name's oldest holder (by created_at, then id) takes its key, a
-- later environment of the same name keeps its name with a null key, which holds nothing against
-- others (SQLite's unique index lets NULLs repeat) until it is renamed. The key is the name
-- lower-cased, for names with non-ASCII capitals SQLite's lower() folds only ASCII, so such an
-- environment's key is written by the service (NFC, Unicode lower case) at its next rename.
UPDATE `environments` SET `updated_at` = `created_at`;--> statement-breakpoint
UPDATE `environments` SET `name_key` = lower(`name`)
WHERE NOT EXISTS (
  SELECT 1 FROM `environments` AS older
  WHERE older.`project_id` = `environments`.`project_id`
    AND lower(older.`name`) = lower(`environments`.`name`)
    AND (older.`created_at` < `environments`.`created_at`
      OR (older.`created_at` = `environments`.`created_at` AND older.`id` < `environments`.`id`))
);--> statement-breakpoint
CREATE UNIQUE INDEX `environments_project_name_key_idx` ON `environments` (`project_id`,`name_key`);--> statement-breakpoint
CREATE INDEX `environments_project_created_idx` ON `environments` (`project_id`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `components_environment_created_idx` ON `components` (`environment_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `stacks_environment_created_idx` ON `stacks` (`environment_id`,`created_at`,`id`);