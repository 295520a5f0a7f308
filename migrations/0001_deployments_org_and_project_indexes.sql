DROP INDEX `deployments_created_idx`;--> statement-breakpoint
ALTER TABLE `deployments` ADD `org_id` text;--> statement-breakpoint
CREATE INDEX `deployments_org_created_idx` ON `deployments` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `components_project_idx` ON `components` (`project_id`);--> statement-breakpoint
CREATE INDEX `stack_resources_project_idx` ON `stack_resources` (`project_id`);--> statement-breakpoint
CREATE INDEX `stacks_project_idx` ON `stacks` (`project_id`);--> statement-breakpoint
CREATE INDEX `variables_project_idx` ON `variables` (`project_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_project_idx` ON `webhook_deliveries` (`project_id`);--> statement-breakpoint
-- Backfill: every deployment's organization is its project's.
UPDATE `deployments` SET `org_id` = (SELECT `org_id` FROM `projects` WHERE `projects`.`id` = `deployments`.`project_id`) WHERE `org_id` IS NULL;
