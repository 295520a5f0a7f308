CREATE TABLE `audit_streams` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`signing_secret` text NOT NULL,
	`delivered_through` integer NOT NULL,
	`epoch` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`last_error_at` text,
	`last_error_status_code` integer,
	`last_error_message` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_streams_org_created_idx` ON `audit_streams` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `org_limits` (
	`org_id` text PRIMARY KEY NOT NULL,
	`projects_limit` integer DEFAULT 100 NOT NULL,
	`environments_limit` integer DEFAULT 1000 NOT NULL,
	`variables_limit` integer DEFAULT 20000 NOT NULL,
	`api_keys_limit` integer DEFAULT 1000 NOT NULL,
	`integrations_limit` integer DEFAULT 200 NOT NULL,
	`audit_streams_limit` integer DEFAULT 5 NOT NULL,
	`deployments_per_day_limit` integer DEFAULT 2000 NOT NULL,
	`projects_used` integer DEFAULT 0 NOT NULL,
	`environments_used` integer DEFAULT 0 NOT NULL,
	`variables_used` integer DEFAULT 0 NOT NULL,
	`integrations_used` integer DEFAULT 0 NOT NULL,
	`audit_streams_used` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `audit_log` ADD `sequence` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_log_org_sequence_idx` ON `audit_log` (`org_id`,`sequence`);--> statement-breakpoint
CREATE INDEX `audit_log_project_sequence_idx` ON `audit_log` (`project_id`,`sequence`);--> statement-breakpoint
ALTER TABLE `environment_protections` ADD `checks` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE INDEX `api_keys_org_live_idx` ON `api_keys` (`org_id`,`expires_at`) WHERE revoked_at IS NULL;--> statement-breakpoint
-- Written by hand from here (API_CONTRACT §30): every existing entry of an organization is numbered
-- in `created_at`, `id` order, 1 for its first; an entry of no organization has no sequence.
UPDATE `audit_log` SET `sequence` = `numbered`.`n` FROM (
	SELECT `id`, row_number() OVER (PARTITION BY `org_id` ORDER BY `created_at`, `id`) AS `n` FROM `audit_log` WHERE `org_id` IS NOT NULL
) AS `numbered` WHERE `numbered`.`id` = `audit_log`.`id`;
--> statement-breakpoint
-- API_CONTRACT §29: every organization gets its limits row, with the counts of what it holds now.
-- A database that is only the directory of an organization holds its row too, with counts of 0;
-- it is never read there (an organization's requests run on its own database).
INSERT INTO `org_limits` (`org_id`, `projects_used`, `environments_used`, `variables_used`, `integrations_used`)
SELECT `o`.`id`,
	(SELECT count(*) FROM `projects` AS `p` WHERE `p`.`org_id` = `o`.`id`),
	(SELECT count(*) FROM `environments` AS `e` JOIN `projects` AS `p` ON `p`.`id` = `e`.`project_id` WHERE `p`.`org_id` = `o`.`id`),
	(SELECT count(*) FROM `variables` AS `v` JOIN `projects` AS `p` ON `p`.`id` = `v`.`project_id` WHERE `p`.`org_id` = `o`.`id`),
	(SELECT count(*) FROM `notification_integrations` AS `i` JOIN `projects` AS `p` ON `p`.`id` = `i`.`project_id` WHERE `p`.`org_id` = `o`.`id`)
FROM `organizations` AS `o`;
--> statement-breakpoint
-- A new organization's row, however the organization is written.
CREATE TRIGGER `org_limits_made` AFTER INSERT ON `organizations` BEGIN
	INSERT OR IGNORE INTO `org_limits` (`org_id`) VALUES (NEW.`id`);
END;
--> statement-breakpoint
-- The counts, kept by the statement that inserts or deletes a counted row. A project's delete
-- takes what it holds off the counts before it goes; the rows its cascade then deletes find no
-- project, and so count nothing twice.
CREATE TRIGGER `projects_counted` AFTER INSERT ON `projects` BEGIN
	UPDATE `org_limits` SET `projects_used` = `projects_used` + 1 WHERE `org_id` = NEW.`org_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_uncounted` BEFORE DELETE ON `projects` BEGIN
	UPDATE `org_limits` SET
		`projects_used` = `projects_used` - 1,
		`environments_used` = `environments_used` - (SELECT count(*) FROM `environments` WHERE `project_id` = OLD.`id`),
		`variables_used` = `variables_used` - (SELECT count(*) FROM `variables` WHERE `project_id` = OLD.`id`),
		`integrations_used` = `integrations_used` - (SELECT count(*) FROM `notification_integrations` WHERE `project_id` = OLD.`id`)
	WHERE `org_id` = OLD.`org_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `environments_counted` AFTER INSERT ON `environments` BEGIN
	UPDATE `org_limits` SET `environments_used` = `environments_used` + 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = NEW.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `environments_uncounted` AFTER DELETE ON `environments` BEGIN
	UPDATE `org_limits` SET `environments_used` = `environments_used` - 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = OLD.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `variables_counted` AFTER INSERT ON `variables` BEGIN
	UPDATE `org_limits` SET `variables_used` = `variables_used` + 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = NEW.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `variables_uncounted` AFTER DELETE ON `variables` BEGIN
	UPDATE `org_limits` SET `variables_used` = `variables_used` - 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = OLD.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `integrations_counted` AFTER INSERT ON `notification_integrations` BEGIN
	UPDATE `org_limits` SET `integrations_used` = `integrations_used` + 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = NEW.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `integrations_uncounted` AFTER DELETE ON `notification_integrations` BEGIN
	UPDATE `org_limits` SET `integrations_used` = `integrations_used` - 1 WHERE `org_id` = (SELECT `org_id` FROM `projects` WHERE `id` = OLD.`project_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `audit_streams_counted` AFTER INSERT ON `audit_streams` BEGIN
	UPDATE `org_limits` SET `audit_streams_used` = `audit_streams_used` + 1 WHERE `org_id` = NEW.`org_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `audit_streams_uncounted` AFTER DELETE ON `audit_streams` BEGIN
	UPDATE `org_limits` SET `audit_streams_used` = `audit_streams_used` - 1 WHERE `org_id` = OLD.`org_id`;
END;
--> statement-breakpoint
-- The limits: a count that would grow past its limit aborts the statement, and with it the whole
-- batch of the write (src/services/orgs/limits.ts reads the message). Only growth is refused: a
-- lower limit removes nothing, and a delete always frees its count.
CREATE TRIGGER `org_limits_projects` BEFORE UPDATE OF `projects_used` ON `org_limits`
WHEN NEW.`projects_used` > OLD.`projects_used` AND NEW.`projects_used` > NEW.`projects_limit` BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: projects');
END;
--> statement-breakpoint
CREATE TRIGGER `org_limits_environments` BEFORE UPDATE OF `environments_used` ON `org_limits`
WHEN NEW.`environments_used` > OLD.`environments_used` AND NEW.`environments_used` > NEW.`environments_limit` BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: environments');
END;
--> statement-breakpoint
CREATE TRIGGER `org_limits_variables` BEFORE UPDATE OF `variables_used` ON `org_limits`
WHEN NEW.`variables_used` > OLD.`variables_used` AND NEW.`variables_used` > NEW.`variables_limit` BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: variables');
END;
--> statement-breakpoint
CREATE TRIGGER `org_limits_integrations` BEFORE UPDATE OF `integrations_used` ON `org_limits`
WHEN NEW.`integrations_used` > OLD.`integrations_used` AND NEW.`integrations_used` > NEW.`integrations_limit` BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: integrations');
END;
--> statement-breakpoint
CREATE TRIGGER `org_limits_audit_streams` BEFORE UPDATE OF `audit_streams_used` ON `org_limits`
WHEN NEW.`audit_streams_used` > OLD.`audit_streams_used` AND NEW.`audit_streams_used` > NEW.`audit_streams_limit` BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: audit_streams');
END;
--> statement-breakpoint
-- Keys that are neither revoked nor expired, counted where one is inserted (by the partial index
-- api_keys_org_live_idx: the live keys only, which the limit itself bounds).
CREATE TRIGGER `api_keys_limited` BEFORE INSERT ON `api_keys`
WHEN NEW.`revoked_at` IS NULL AND (
	SELECT count(*) FROM `api_keys` WHERE `org_id` = NEW.`org_id` AND `revoked_at` IS NULL AND (`expires_at` IS NULL OR `expires_at` > NEW.`created_at`)
) >= (SELECT `api_keys_limit` FROM `org_limits` WHERE `org_id` = NEW.`org_id`) BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: api_keys');
END;
--> statement-breakpoint
-- Deployments created in the 24 hours before this one (deployments_org_created_idx).
CREATE TRIGGER `deployments_limited` BEFORE INSERT ON `deployments`
WHEN (
	SELECT count(*) FROM `deployments` WHERE `org_id` = NEW.`org_id` AND `created_at` > strftime('%Y-%m-%dT%H:%M:%fZ', NEW.`created_at`, '-1 day')
) >= (SELECT `deployments_per_day_limit` FROM `org_limits` WHERE `org_id` = NEW.`org_id`) BEGIN
	SELECT RAISE(ABORT, 'limit exceeded: deployments_per_day');
END;
