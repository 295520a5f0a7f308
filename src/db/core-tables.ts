/**
 * The tables of projects and everything inside a project: members, environments, components,
 * stacks and their resources, deployments, variables (conventions: src/db/schema.ts). Whose they
 * are (organizations, accounts, keys): ./identity-tables.ts. Imported through schema.ts, like
 * every table.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "./columns";
import { accountRef, orgRef } from "./identity-tables";
import {
  CONNECTION_STATUSES,
  DEPLOYMENT_STATUSES,
  type DeploymentData,
  PROJECT_ROLES,
  RESOURCE_STATUSES,
  VARIABLE_TYPES,
} from "./values";

/**
 * The column of a row that belongs to a project (or to an environment): deleted with it. Functions,
 * so each table gets its own column object; the tables they name are read when Drizzle resolves
 * the reference.
 */
export const projectRef = () =>
  text("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" });
export const environmentRef = () =>
  text("environment_id")
    .notNull()
    .references(() => environments.id, { onDelete: "cascade" });

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    orgId: orgRef(),
    name: text("name").notNull(),
    /** Case-folded name (Unicode-aware, computed in code) for the per-org uniqueness rule. */
    nameKey: text("name_key").notNull(),
    description: text("description"),
    icon: text("icon"),
    repoId: text("repo_id"),
    /** Always an environment of this project (checked by the service; a FK would be circular). */
    defaultEnvironmentId: text("default_environment_id").notNull(),
    connectionStatus: text("connection_status", { enum: CONNECTION_STATUSES }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("projects_org_name_idx").on(t.orgId, t.nameKey),
    index("projects_org_created_idx").on(t.orgId, t.createdAt, t.id),
    // The cron's sweep of disconnects whose message never reached the queue: empty but for them.
    index("projects_disconnecting_idx").on(t.updatedAt).where(sql`${t.connectionStatus} = 'disconnecting'`),
  ],
);

export const projectMembers = sqliteTable(
  "project_members",
  {
    /** The membership ID. */
    id: text("id").primaryKey(),
    projectId: projectRef(),
    accountId: accountRef(),
    role: text("role", { enum: PROJECT_ROLES }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("project_members_project_account_idx").on(t.projectId, t.accountId),
    index("project_members_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("project_members_account_idx").on(t.accountId),
  ],
);

export const environments = sqliteTable(
  "environments",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    name: text("name").notNull(),
    /**
     * The case-folded name (src/lib/name-key.ts), unique within the project (API_CONTRACT §23).
     * Null only for an environment that already shared its name with an older one of its project
     * when the rule came (migration 0010): it keeps its name, and holds none against others.
     */
    nameKey: text("name_key"),
    createdAt: createdAt(),
    /** Set by every write; null only for rows written before it existed (read as `created_at`). */
    updatedAt: text("updated_at"),
  },
  (t) => [
    index("environments_project_name_idx").on(t.projectId, t.name),
    uniqueIndex("environments_project_name_key_idx").on(t.projectId, t.nameKey),
    index("environments_project_created_idx").on(t.projectId, t.createdAt, t.id),
  ],
);

export const components = sqliteTable(
  "components",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    environmentId: environmentRef(),
    name: text("name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("components_environment_name_idx").on(t.environmentId, t.name),
    index("components_environment_created_idx").on(t.environmentId, t.createdAt, t.id),
    index("components_project_idx").on(t.projectId),
  ],
);

export const stacks = sqliteTable(
  "stacks",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    environmentId: environmentRef(),
    name: text("name").notNull(),
    templateId: text("template_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("stacks_environment_idx").on(t.environmentId),
    index("stacks_environment_created_idx").on(t.environmentId, t.createdAt, t.id),
    index("stacks_project_idx").on(t.projectId),
  ],
);

export const stackResources = sqliteTable(
  "stack_resources",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    environmentId: environmentRef(),
    stackId: text("stack_id")
      .notNull()
      .references(() => stacks.id, { onDelete: "cascade" }),
    templateId: text("template_id").notNull(),
    resourceType: text("resource_type").notNull(),
    physicalId: text("physical_id").notNull(),
    status: text("status", { enum: RESOURCE_STATUSES }).notNull(),
    statusReason: text("status_reason"),
    /** Time of the last status change. */
    timestamp: text("timestamp").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("stack_resources_stack_created_idx").on(t.stackId, t.createdAt, t.id),
    index("stack_resources_environment_created_idx").on(t.environmentId, t.createdAt, t.id),
    index("stack_resources_project_idx").on(t.projectId),
  ],
);

/** One check of a waiting deployment's gate, as its record shows it (API_CONTRACT §31). */
export type GateCheck = {
  name: string;
  state: "pending" | "passed" | "failed";
  reason: "timeout" | null;
  details_url: string | null;
  summary: string | null;
  concluded_at: string | null;
};

/**
 * What holds a waiting deployment (API_CONTRACT §26, §31); `blocked_by` empty once released.
 * `checks` is absent from a gate written before checks existed (it reads as `[]`).
 */
export type DeploymentGate = {
  required_approvals: number;
  approvals: number;
  wait_until: string | null;
  blocked_by: ("approval" | "wait_timer" | "lock" | "check")[];
  checks?: GateCheck[];
};

/**
 * When each check of a deployment concludes by itself (§31: `timeout` seconds after the deployment's
 * `created_at`) and how: copied from the protection at its creation, so that a later change of the
 * protection changes nothing of it. Kept beside the gate, not in it: the gate is the record's.
 */
export type CheckDeadline = { name: string; at: string; on_timeout: "pass" | "fail" };

/** A deployment's pinned configuration: the §18 version of each of its environment's scopes. */
export type DeploymentConfig = {
  environment_version: number;
  components: { component_id: string; version: number }[];
};

export const deployments = sqliteTable(
  "deployments",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    environmentId: environmentRef(),
    /**
     * The project's organization (a project never changes organization), so the org-wide list
     * pages through one (org_id, created_at, id) index instead of sorting every visible project's
     * deployments. Always set; nullable only because SQLite cannot add a NOT NULL column.
     */
    orgId: text("org_id"),
    stackIds: text("stack_ids", { mode: "json" }).$type<string[]>().notNull(),
    data: text("data", { mode: "json" }).$type<DeploymentData>().notNull(),
    status: text("status", { enum: DEPLOYMENT_STATUSES }).notNull(),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /** The deployment this one runs again (API_CONTRACT §20), or null. */
    redeployOf: text("redeploy_of"),
    /** The account of the API key that created it (API_CONTRACT §24), or null (the internal API). */
    createdBy: text("created_by"),
    /**
     * The variable versions it was created with (API_CONTRACT §24), computed by its own INSERT from
     * the scopes' versions, or null for a deployment made before configurations were recorded.
     */
    config: text("config", { mode: "json" }).$type<DeploymentConfig>(),
    /** The deployment it promotes (API_CONTRACT §25), or null. */
    promotedFrom: text("promoted_from"),
    /** What held it as `waiting` (API_CONTRACT §26), or null for a deployment that never waited. */
    gate: text("gate", { mode: "json" }).$type<DeploymentGate>(),
    /** Its checks' deadlines (API_CONTRACT §31), or null for a deployment created without checks. */
    checkDeadlines: text("check_deadlines", { mode: "json" }).$type<CheckDeadline[]>(),
  },
  (t) => [
    // An environment's `current_deployment_id` (API_CONTRACT §23): its latest success, by finished_at.
    index("deployments_environment_finished_idx").on(t.environmentId, t.status, t.finishedAt, t.id),
    index("deployments_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("deployments_environment_created_idx").on(t.environmentId, t.createdAt, t.id),
    index("deployments_status_created_idx").on(t.status, t.createdAt, t.id),
    index("deployments_org_created_idx").on(t.orgId, t.createdAt, t.id),
  ],
);

/** Which stacks a deployment covers, so deployments can be listed by stack with keyset pagination. */
export const deploymentStacks = sqliteTable(
  "deployment_stacks",
  {
    deploymentId: text("deployment_id")
      .notNull()
      .references(() => deployments.id, { onDelete: "cascade" }),
    stackId: text("stack_id")
      .notNull()
      .references(() => stacks.id, { onDelete: "cascade" }),
    /** Copy of the deployment's created_at, the keyset order. */
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.deploymentId, t.stackId] }),
    index("deployment_stacks_stack_created_idx").on(t.stackId, t.createdAt, t.deploymentId),
  ],
);

/**
 * Where a variable's row belongs (a variable, and its versions and their values): its project,
 * environment and scope.
 */
export const variableScopeColumns = () => ({
  projectId: projectRef(),
  environmentId: environmentRef(),
  componentId: text("component_id").references(() => components.id, { onDelete: "cascade" }),
  /** component_id, or "_" for the environment's own variables: NULLs never clash in a unique index. */
  scope: text("scope").notNull(),
});

export const variables = sqliteTable(
  "variables",
  {
    id: text("id").primaryKey(),
    ...variableScopeColumns(),
    name: text("name").notNull(),
    type: text("type", { enum: VARIABLE_TYPES }).notNull(),
    /** Plaintext for `string`; for `secret`/`secure_string` the AES-GCM envelope (never plaintext). */
    value: text("value").notNull(),
    /** Key version of the envelope, null for plaintext `string` values. */
    keyVersion: integer("key_version"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("variables_scope_name_idx").on(t.environmentId, t.scope, t.name),
    index("variables_scope_created_idx").on(t.environmentId, t.scope, t.createdAt, t.id),
    index("variables_component_created_idx").on(t.componentId, t.createdAt, t.id),
    index("variables_project_idx").on(t.projectId),
  ],
);
