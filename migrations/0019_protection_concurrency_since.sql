ALTER TABLE `environment_protections` ADD `concurrency_since` text;--> statement-breakpoint
-- When the policy took the value it has: before this column the protection's last change stood for it
-- (API_CONTRACT §26 `supersede`: owed by the deployments that entered `queued` since).
UPDATE `environment_protections` SET `concurrency_since` = `updated_at` WHERE `concurrency` != 'parallel';
