CREATE TABLE `move_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` text NOT NULL,
	`tbl` text NOT NULL,
	`pk` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `move_changes_org_seq_idx` ON `move_changes` (`org_id`,`seq`);--> statement-breakpoint
CREATE TABLE `moving_orgs` (
	`org_id` text PRIMARY KEY NOT NULL,
	`move_id` text NOT NULL,
	`to_database` text NOT NULL,
	`incoming` integer DEFAULT false NOT NULL,
	`fenced` integer DEFAULT false NOT NULL,
	`switched` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE `org_moves` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`from_database` text NOT NULL,
	`to_database` text NOT NULL,
	`state` text NOT NULL,
	`rows_copied` integer DEFAULT 0 NOT NULL,
	`error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `org_moves_unfinished_idx` ON `org_moves` (`org_id`) WHERE state IN ('copying', 'switching');--> statement-breakpoint
CREATE INDEX `org_moves_org_created_idx` ON `org_moves` (`org_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `org_moves_unfinished_updated_idx` ON `org_moves` (`updated_at`) WHERE state IN ('copying', 'switching');--> statement-breakpoint
CREATE TRIGGER `organizations_moving_insert` AFTER INSERT ON `organizations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'organizations', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `organizations_moving_update` AFTER UPDATE ON `organizations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'organizations', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `organizations_moving_delete` AFTER DELETE ON `organizations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'organizations', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `org_members_moving_insert` AFTER INSERT ON `org_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'org_members', json_array(NEW.org_id, NEW.account_id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `org_members_moving_update` AFTER UPDATE ON `org_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'org_members', json_array(NEW.org_id, NEW.account_id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `org_members_moving_delete` AFTER DELETE ON `org_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'org_members', json_array(OLD.org_id, OLD.account_id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `projects_moving_insert` AFTER INSERT ON `projects` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'projects', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `projects_moving_update` AFTER UPDATE ON `projects` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'projects', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `projects_moving_delete` AFTER DELETE ON `projects` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'projects', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `api_keys_moving_insert` AFTER INSERT ON `api_keys` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'api_keys', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `api_keys_moving_update` AFTER UPDATE ON `api_keys` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'api_keys', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `api_keys_moving_delete` AFTER DELETE ON `api_keys` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'api_keys', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `oidc_trusts_moving_insert` AFTER INSERT ON `oidc_trusts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'oidc_trusts', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `oidc_trusts_moving_update` AFTER UPDATE ON `oidc_trusts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'oidc_trusts', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `oidc_trusts_moving_delete` AFTER DELETE ON `oidc_trusts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'oidc_trusts', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_streams_moving_insert` AFTER INSERT ON `audit_streams` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_streams', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_streams_moving_update` AFTER UPDATE ON `audit_streams` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_streams', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_streams_moving_delete` AFTER DELETE ON `audit_streams` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_streams', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_log_moving_insert` AFTER INSERT ON `audit_log` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_log_moving_update` AFTER UPDATE ON `audit_log` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log', json_array(NEW.id) FROM moving_orgs WHERE org_id = NEW.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `audit_log_moving_delete` AFTER DELETE ON `audit_log` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = OLD.org_id AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'audit_log', json_array(OLD.id) FROM moving_orgs WHERE org_id = OLD.org_id AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `project_members_moving_insert` AFTER INSERT ON `project_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'project_members', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `project_members_moving_update` AFTER UPDATE ON `project_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'project_members', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `project_members_moving_delete` AFTER DELETE ON `project_members` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'project_members', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environments_moving_insert` AFTER INSERT ON `environments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environments', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environments_moving_update` AFTER UPDATE ON `environments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environments', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environments_moving_delete` AFTER DELETE ON `environments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environments', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environment_protections_moving_insert` AFTER INSERT ON `environment_protections` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environment_protections', json_array(NEW.environment_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environment_protections_moving_update` AFTER UPDATE ON `environment_protections` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environment_protections', json_array(NEW.environment_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `environment_protections_moving_delete` AFTER DELETE ON `environment_protections` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'environment_protections', json_array(OLD.environment_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `components_moving_insert` AFTER INSERT ON `components` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'components', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `components_moving_update` AFTER UPDATE ON `components` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'components', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `components_moving_delete` AFTER DELETE ON `components` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'components', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stacks_moving_insert` AFTER INSERT ON `stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stacks', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stacks_moving_update` AFTER UPDATE ON `stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stacks', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stacks_moving_delete` AFTER DELETE ON `stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stacks', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stack_resources_moving_insert` AFTER INSERT ON `stack_resources` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stack_resources', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stack_resources_moving_update` AFTER UPDATE ON `stack_resources` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stack_resources', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `stack_resources_moving_delete` AFTER DELETE ON `stack_resources` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'stack_resources', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variables_moving_insert` AFTER INSERT ON `variables` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variables', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variables_moving_update` AFTER UPDATE ON `variables` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variables', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variables_moving_delete` AFTER DELETE ON `variables` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variables', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_versions_moving_insert` AFTER INSERT ON `variable_versions` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_versions', json_array(NEW.environment_id, NEW.scope, NEW.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_versions_moving_update` AFTER UPDATE ON `variable_versions` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_versions', json_array(NEW.environment_id, NEW.scope, NEW.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_versions_moving_delete` AFTER DELETE ON `variable_versions` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_versions', json_array(OLD.environment_id, OLD.scope, OLD.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_values_moving_insert` AFTER INSERT ON `variable_version_values` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_values', json_array(NEW.environment_id, NEW.scope, NEW.name, NEW.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_values_moving_update` AFTER UPDATE ON `variable_version_values` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_values', json_array(NEW.environment_id, NEW.scope, NEW.name, NEW.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `variable_version_values_moving_delete` AFTER DELETE ON `variable_version_values` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'variable_version_values', json_array(OLD.environment_id, OLD.scope, OLD.name, OLD.version) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployments_moving_insert` AFTER INSERT ON `deployments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployments', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployments_moving_update` AFTER UPDATE ON `deployments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployments', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployments_moving_delete` AFTER DELETE ON `deployments` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployments', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_reviews_moving_insert` AFTER INSERT ON `deployment_reviews` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_reviews', json_array(NEW.deployment_id, NEW.account_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_reviews_moving_update` AFTER UPDATE ON `deployment_reviews` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_reviews', json_array(NEW.deployment_id, NEW.account_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_reviews_moving_delete` AFTER DELETE ON `deployment_reviews` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_reviews', json_array(OLD.deployment_id, OLD.account_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_stacks_moving_insert` AFTER INSERT ON `deployment_stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_stacks', json_array(NEW.deployment_id, NEW.stack_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_stacks_moving_update` AFTER UPDATE ON `deployment_stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_stacks', json_array(NEW.deployment_id, NEW.stack_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_stacks_moving_delete` AFTER DELETE ON `deployment_stacks` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = OLD.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_stacks', json_array(OLD.deployment_id, OLD.stack_id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = OLD.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_timeline_moving_insert` AFTER INSERT ON `deployment_timeline` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_timeline', json_array(NEW.deployment_id, NEW.seq) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_timeline_moving_update` AFTER UPDATE ON `deployment_timeline` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_timeline', json_array(NEW.deployment_id, NEW.seq) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = NEW.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `deployment_timeline_moving_delete` AFTER DELETE ON `deployment_timeline` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = OLD.deployment_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'deployment_timeline', json_array(OLD.deployment_id, OLD.seq) FROM moving_orgs WHERE org_id = (SELECT org_id FROM deployments WHERE id = OLD.deployment_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `notification_integrations_moving_insert` AFTER INSERT ON `notification_integrations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'notification_integrations', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `notification_integrations_moving_update` AFTER UPDATE ON `notification_integrations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'notification_integrations', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `notification_integrations_moving_delete` AFTER DELETE ON `notification_integrations` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'notification_integrations', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `events_moving_insert` AFTER INSERT ON `events` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'events', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `events_moving_update` AFTER UPDATE ON `events` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'events', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `events_moving_delete` AFTER DELETE ON `events` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'events', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_moving_insert` AFTER INSERT ON `webhook_deliveries` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'webhook_deliveries', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_moving_update` AFTER UPDATE ON `webhook_deliveries` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'webhook_deliveries', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = NEW.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_moving_delete` AFTER DELETE ON `webhook_deliveries` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'webhook_deliveries', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = OLD.project_id) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `delivery_attempts_moving_insert` AFTER INSERT ON `delivery_attempts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = NEW.delivery_id)) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'delivery_attempts', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = NEW.delivery_id)) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `delivery_attempts_moving_update` AFTER UPDATE ON `delivery_attempts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = NEW.delivery_id)) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'delivery_attempts', json_array(NEW.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = NEW.delivery_id)) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `delivery_attempts_moving_delete` AFTER DELETE ON `delivery_attempts` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = OLD.delivery_id)) AND fenced = 1;
  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, 'delivery_attempts', json_array(OLD.id) FROM moving_orgs WHERE org_id = (SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = OLD.delivery_id)) AND incoming = 0;
END;--> statement-breakpoint
CREATE TRIGGER `org_limits_moving_insert` AFTER INSERT ON `org_limits` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
END;--> statement-breakpoint
CREATE TRIGGER `org_limits_moving_update` AFTER UPDATE ON `org_limits` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN
  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;
END;
