CREATE TABLE `audit_log_parts` (
	`entry_id` text NOT NULL,
	`part` integer NOT NULL,
	`chunk` text NOT NULL,
	PRIMARY KEY(`entry_id`, `part`),
	FOREIGN KEY (`entry_id`) REFERENCES `audit_log`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `variable_version_parts` (
	`project_id` text NOT NULL,
	`environment_id` text NOT NULL,
	`scope` text NOT NULL,
	`version` integer NOT NULL,
	`part` integer NOT NULL,
	`chunk` text NOT NULL,
	PRIMARY KEY(`environment_id`, `scope`, `version`, `part`),
	FOREIGN KEY (`environment_id`,`scope`,`version`) REFERENCES `variable_versions`(`environment_id`,`scope`,`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `variable_version_parts_project_idx` ON `variable_version_parts` (`project_id`);--> statement-breakpoint
ALTER TABLE `audit_log` ADD `changes_spilled` integer;--> statement-breakpoint
ALTER TABLE `variable_versions` ADD `changes_spilled` integer;--> statement-breakpoint
CREATE TRIGGER `audit_log_parts_moving_insert` AFTER INSERT ON `audit_log_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = NEW.entry_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log_parts', json_array(NEW.entry_id, NEW.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = NEW.entry_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_log_parts_moving_update` AFTER UPDATE ON `audit_log_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = NEW.entry_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log_parts', json_array(NEW.entry_id, NEW.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = NEW.entry_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_log_parts_moving_delete` AFTER DELETE ON `audit_log_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = OLD.entry_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log_parts', json_array(OLD.entry_id, OLD.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM audit_log WHERE id = OLD.entry_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_parts_moving_insert` AFTER INSERT ON `variable_version_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_parts', json_array(NEW.environment_id, NEW.scope, NEW.version, NEW.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_parts_moving_update` AFTER UPDATE ON `variable_version_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_parts', json_array(NEW.environment_id, NEW.scope, NEW.version, NEW.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_parts_moving_delete` AFTER DELETE ON `variable_version_parts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_parts', json_array(OLD.environment_id, OLD.scope, OLD.version, OLD.part) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;
