/**
 * The history of a scope's variables (API_CONTRACT §18). Part of the one schema: src/db/schema.ts
 * re-exports it, and drizzle-kit reads it through it.
 *
 * A scope is an environment's own variables (`scope` "_") or one component's (`scope` its id),
 * the same key the variables table uses. Every change to a scope makes one row of
 * `variable_versions` (1, 2, 3… per scope: the primary key refuses a number taken twice, so of
 * two writers planning the same next version one fails and plans again), and one row of
 * `variable_version_values` per name it created, updated or deleted. The scope as it was right
 * after version v is, per name, its latest value row at or below v, unless that row is a deletion.
 * Version 0 is the baseline: what the scope held before its history began (never listed).
 */
import { foreignKey, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { variableScopeColumns } from "./core-tables";
import { VARIABLE_TYPES, type VariableType } from "./values";

/** One name of one version, as the version record shows it (never a value). */
export type VersionChange = {
  name: string;
  action: "created" | "updated" | "deleted";
  type: { from: VariableType | null; to: VariableType | null };
  value_changed: boolean;
};

export const variableVersions = sqliteTable(
  "variable_versions",
  {
    ...variableScopeColumns(),
    version: integer("version").notNull(),
    actorType: text("actor_type").notNull(),
    actorAccountId: text("actor_account_id"),
    actorApiKeyId: text("actor_api_key_id"),
    requestId: text("request_id").notNull(),
    /** The names it created, updated or deleted, sorted by name; never a value. */
    changes: text("changes", { mode: "json" }).$type<VersionChange[]>().notNull(),
    createdAt: text("created_at").notNull(),
    /**
     * Set when `changes` outgrew one row (a replace or restore of a large scope deletes every name
     * it does not keep): `changes` is then `[]` and its JSON is in `variable_version_parts`, this
     * many UTF-16 code units of it in all (src/db/spill.ts).
     */
    changesSpilled: integer("changes_spilled"),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.scope, t.version] }),
    index("variable_versions_project_idx").on(t.projectId),
    index("variable_versions_component_idx").on(t.componentId),
  ],
);

export const variableVersionValues = sqliteTable(
  "variable_version_values",
  {
    ...variableScopeColumns(),
    name: text("name").notNull(),
    version: integer("version").notNull(),
    /** Null: the name was deleted by this version. */
    type: text("type", { enum: VARIABLE_TYPES }),
    /**
     * Stored exactly as the variable row stored it: plaintext for `string`, else the very
     * AES-GCM envelope of the variable row (never plaintext), null for a deletion.
     */
    value: text("value"),
    /** Key version of the envelope, null for plaintext and deletions (moved by the rotation sweep). */
    keyVersion: integer("key_version"),
    /** The variable the envelope was sealed for (its additional data names it), null without one. */
    sealedFor: text("sealed_for"),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.scope, t.name, t.version] }),
    index("variable_version_values_project_idx").on(t.projectId),
    index("variable_version_values_component_idx").on(t.componentId),
    index("variable_version_values_key_idx").on(t.keyVersion),
  ],
);

/**
 * The JSON of a version's `changes` too large for the version's own row, in consecutive parts
 * (src/db/spill.ts), written in the version's batch and deleted with it.
 */
export const variableVersionParts = sqliteTable(
  "variable_version_parts",
  {
    projectId: text("project_id").notNull(),
    environmentId: text("environment_id").notNull(),
    scope: text("scope").notNull(),
    version: integer("version").notNull(),
    part: integer("part").notNull(),
    chunk: text("chunk").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.environmentId, t.scope, t.version, t.part] }),
    foreignKey({
      columns: [t.environmentId, t.scope, t.version],
      foreignColumns: [variableVersions.environmentId, variableVersions.scope, variableVersions.version],
    }).onDelete("cascade"),
    index("variable_version_parts_project_idx").on(t.projectId),
  ],
);
