CREATE TABLE `deployment_reviews` (
	`deployment_id` text NOT NULL,
	`account_id` text NOT NULL,
	`project_id` text NOT NULL,
	`state` text NOT NULL,
	`comment` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`deployment_id`, `account_id`),
	FOREIGN KEY (`deployment_id`) REFERENCES `deployments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deployment_reviews_created_idx` ON `deployment_reviews` (`deployment_id`,`created_at`,`account_id`);--> statement-breakpoint
CREATE INDEX `deployment_reviews_project_idx` ON `deployment_reviews` (`project_id`);--> statement-breakpoint
CREATE TABLE `environment_protections` (
	`environment_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`required_approvals` integer NOT NULL,
	`reviewer_role` text NOT NULL,
	`prevent_self_review` integer NOT NULL,
	`wait_timer` integer NOT NULL,
	`concurrency` text NOT NULL,
	`locked_reason` text,
	`locked_account_id` text,
	`locked_at` text,
	`updated_at` text,
	FOREIGN KEY (`environment_id`) REFERENCES `environments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `environment_protections_project_idx` ON `environment_protections` (`project_id`);--> statement-breakpoint
ALTER TABLE `deployments` ADD `promoted_from` text;--> statement-breakpoint
ALTER TABLE `deployments` ADD `gate` text;