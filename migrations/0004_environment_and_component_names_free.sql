DROP INDEX `components_environment_name_idx`;--> statement-breakpoint
CREATE INDEX `components_environment_name_idx` ON `components` (`environment_id`,`name`);--> statement-breakpoint
DROP INDEX `environments_project_name_idx`;--> statement-breakpoint
CREATE INDEX `environments_project_name_idx` ON `environments` (`project_id`,`name`);