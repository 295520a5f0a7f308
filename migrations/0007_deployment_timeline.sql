CREATE TABLE `deployment_timeline` (
	`deployment_id` text NOT NULL,
	`seq` integer NOT NULL,
	`type` text NOT NULL,
	`created_at` text NOT NULL,
	`stack_id` text,
	`status` text,
	`status_reason` text,
	`stream` text,
	`message` text,
	PRIMARY KEY(`deployment_id`, `seq`),
	FOREIGN KEY (`deployment_id`) REFERENCES `deployments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deployment_timeline_finished_idx` ON `deployment_timeline` (`created_at`) WHERE stack_id IS NULL AND status IN ('succeeded', 'failed', 'cancelled');