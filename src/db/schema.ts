/**
 * The whole domain of SPEC.md and API_CONTRACT.md in one schema: this file is drizzle-kit's
 * input and the one place the app imports tables from. The tables themselves are in
 * identity-tables.ts (organizations, accounts, keys), core-tables.ts (projects and what a
 * project holds), release-tables.ts, timeline-table.ts, variable-history-tables.ts,
 * oidc-tables.ts, webhook-tables.ts (notifications, events, deliveries) and audit-table.ts; the
 * enum values in values.ts.
 *
 * Conventions:
 * - IDs are text (22-char base58 for new rows; the other two SPEC forms are accepted on input).
 * - Timestamps are RFC 3339 UTC strings with milliseconds. They all have the same
 *   width, so text order is time order and keyset pagination can compare them directly.
 * - Every project-scoped table carries `project_id`, so that reading an object and
 *   checking the caller's right to it is one query (object ⨝ project ⨝ membership).
 * - Deleting a project cascades to everything inside it; every table with a `project_id`
 *   has an index that starts with it, so the cascade never scans a whole table.
 * - The API's record shapes are the zod schemas of src/schemas/ (the services' record types are
 *   their `z.infer`), not schemas derived from these tables with drizzle-zod: every record
 *   renames its columns to snake_case and several add or reshape fields (a variable's
 *   `resource_id`, a member's `org_role` and profile, a deployment's typed `data`), so a
 *   derived schema would need an override for nearly every field. What tables and schemas do
 *   share, each enum's values, is one constant in values.ts used by both.
 */

export * from "./audit-table";
export * from "./core-tables";
export * from "./identity-tables";
export * from "./move-tables";
export * from "./oidc-tables";
export * from "./org-tables";
export * from "./release-tables";
export * from "./timeline-table";
export * from "./values";
export * from "./variable-history-tables";
export * from "./webhook-tables";
