CREATE TABLE `variable_version_values` (
	`project_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`component_id` text,
	`scope` text NOT NULL,
	`name` text NOT NULL,
	`version` integer NOT NULL,
	`type` text,
	`value` text,
	`key_version` integer,
	`sealed_for` text,
	PRIMARY KEY(`environment_id`, `scope`, `name`, `version`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`component_id`) REFERENCES `components`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `variable_version_values_project_idx` ON `variable_version_values` (`project_id`);--> statement-breakpoint
CREATE INDEX `variable_version_values_component_idx` ON `variable_version_values` (`component_id`);--> statement-breakpoint
CREATE INDEX `variable_version_values_key_idx` ON `variable_version_values` (`key_version`);--> statement-breakpoint
CREATE TABLE `variable_versions` (
	`project_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`component_id` text,
	`scope` text NOT NULL,
	`version` integer NOT NULL,
	`actor_type` text NOT NULL,
	`actor_account_id` text,
	`actor_api_key_id` text,
	`request_id` text NOT NULL,
	`changes` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`environment_id`, `scope`, `version`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`component_id`) REFERENCES `components`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `variable_versions_project_idx` ON `variable_versions` (`project_id`);--> statement-breakpoint
CREATE INDEX `variable_versions_component_idx` ON `variable_versions` (`component_id`);--> statement-breakpoint
-- The baseline (version 0) of every scope: what it holds before its history begins, stored as the
-- variable row stores it (the same envelope, sealed for the same variable), so a restore of any
-- later version finds every value it needs.
INSERT INTO `variable_version_values` (`project_id`, `environment_id`, `component_id`, `scope`, `name`, `version`, `type`, `value`, `key_version`, `sealed_for`)
SELECT `project_id`, `environment_id`, `component_id`, `scope`, `name`, 0, `type`, `value`, `key_version`, CASE WHEN `type` = 'string' THEN NULL ELSE `id` END FROM `variables`;
