/**
 * Every table that holds rows of an organization, as a move (API_CONTRACT §32) copies, catches up
 * and removes them: in the order of their foreign keys (a parent before its children), each with
 * how its rows of one organization (or of one of its projects) are read a chunk at a time, in the
 * order of an index, so that no query of a move scans a table or holds its database longer than a
 * few milliseconds (other organizations share it).
 *
 * - `scope` is what one pass reads rows of: the organization, or one project of it.
 * - `from` and `scopeColumn`: the table as `t`, joined to its parent `p` where it has no scope
 *   column of its own (a deployment's timeline, a delivery's attempts).
 * - `keys`: the order read in, unique within the scope, the order of an index that starts with the
 *   scope column; `range` of them (a prefix) is what that index seeks to, the rest is compared
 *   after the seek (within one parent's children: a few rows).
 * - `org`: the organization of a changed row (`NEW`/`OLD` as `R`), as migration 0017's capture
 *   triggers compute it: tests/properties/moves hold the two in step.
 * - `accounts`: columns naming an account, whose copy the target needs first (a foreign key).
 * - `unique`: a unique index besides the primary key that a row can come to hold another row's
 *   values of (a name freed by a rename or a delete, then taken), with what moves the target's
 *   stale row out of the way first: a `set` that makes it unique again, or null to delete it (only
 *   where nothing refers to it). A stale row always has a change recorded (the source's index
 *   forced it to change first), which the catch-up then copies over it.
 *
 * Not here: the directory's own tables (its index of keys and trusts, the moves), `accounts`
 * (copies shared by every organization whose members they are, copied as rows need them and never
 * removed), `org_limits` (copied once, at the switch: ./run.ts), and the
 * bookkeeping of moves themselves.
 */
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import {
  apiKeys,
  auditLog,
  auditLogParts,
  auditStreams,
  components,
  deliveryAttempts,
  deploymentReviews,
  deploymentStacks,
  deployments,
  deploymentTimeline,
  environmentProtections,
  environments,
  events,
  notificationIntegrations,
  oidcTrusts,
  organizations,
  orgMembers,
  projectMembers,
  projects,
  stackResources,
  stacks,
  variables,
  variableVersionParts,
  variableVersions,
  variableVersionValues,
  webhookDeliveries,
} from "../../db/schema";

export type MovedTable = {
  table: SQLiteTable;
  scope: "org" | "project";
  from?: string;
  scopeColumn: string;
  keys: readonly string[];
  range: number;
  org: string;
  accounts?: readonly string[];
  unique?: { columns: readonly string[]; set: string | null };
  /** Rows a chunk of the copy reads, when fewer than ./chunk-reads.ts's CHUNK_ROWS (megabyte rows). */
  chunkRows?: number;
};

const ofProject = "(SELECT org_id FROM projects WHERE id = R.project_id)";
type Extra = Pick<MovedTable, "accounts" | "unique">;
const byOrg = (table: SQLiteTable, keys: string[], extra: Extra = {}): MovedTable => ({
  table,
  scope: "org",
  scopeColumn: "t.org_id",
  keys: keys.map((key) => `t.${key}`),
  range: keys.length,
  org: "R.org_id",
  ...extra,
});
const byProject = (table: SQLiteTable, keys: string[], extra: Extra = {}): MovedTable => ({
  table,
  scope: "project",
  scopeColumn: "t.project_id",
  keys: keys.map((key) => `t.${key}`),
  range: keys.length,
  org: ofProject,
  ...extra,
});
/** Parts of spilled JSON (src/db/spill.ts) are up to 1.5 MB each: a chunk of them stays a few megabytes. */
const SPILLED_PARTS_PER_CHUNK = 4;
/** A name key no request can make (a NUL and the row's id): unique, and readable as stale. */
const NAME_ASIDE = "name_key = char(0) || id";

export const MOVED_TABLES: readonly MovedTable[] = [
  {
    table: organizations,
    scope: "org",
    scopeColumn: "t.id",
    keys: ["t.id"],
    range: 1,
    org: "R.id",
  },
  byOrg(orgMembers, ["account_id"], { accounts: ["account_id"] }),
  byOrg(projects, ["created_at", "id"], { unique: { columns: ["org_id", "name_key"], set: NAME_ASIDE } }),
  byOrg(apiKeys, ["created_at", "id"], { accounts: ["account_id", "created_by"] }),
  byOrg(oidcTrusts, ["created_at", "id"], { accounts: ["account_id"] }),
  byOrg(auditStreams, ["created_at", "id"]),
  byOrg(auditLog, ["sequence"], {
    unique: { columns: ["actor_api_key_id", "idempotency_key"], set: "idempotency_key = NULL" },
  }),
  {
    table: auditLogParts,
    scope: "org",
    from: "audit_log p JOIN audit_log_parts t ON t.entry_id = p.id",
    scopeColumn: "p.org_id",
    keys: ["p.sequence", "t.part"],
    range: 1,
    org: "(SELECT org_id FROM audit_log WHERE id = R.entry_id)",
    chunkRows: SPILLED_PARTS_PER_CHUNK,
  },
  byProject(projectMembers, ["created_at", "id"], {
    accounts: ["account_id"],
    unique: { columns: ["project_id", "account_id"], set: null },
  }),
  byProject(environments, ["created_at", "id"], {
    unique: { columns: ["project_id", "name_key"], set: NAME_ASIDE },
  }),
  byProject(environmentProtections, ["rowid"]),
  byProject(components, ["rowid"]),
  byProject(stacks, ["rowid"]),
  byProject(stackResources, ["rowid"]),
  byProject(variables, ["rowid"], { unique: { columns: ["environment_id", "scope", "name"], set: null } }),
  byProject(variableVersions, ["rowid"]),
  { ...byProject(variableVersionParts, ["rowid"]), chunkRows: SPILLED_PARTS_PER_CHUNK },
  byProject(variableVersionValues, ["rowid"]),
  byProject(deployments, ["created_at", "id"]),
  byProject(deploymentReviews, ["rowid"]),
  {
    table: deploymentStacks,
    scope: "project",
    from: "deployments p JOIN deployment_stacks t ON t.deployment_id = p.id",
    scopeColumn: "p.project_id",
    keys: ["p.created_at", "p.id", "t.stack_id"],
    range: 2,
    org: "(SELECT org_id FROM deployments WHERE id = R.deployment_id)",
  },
  {
    table: deploymentTimeline,
    scope: "project",
    from: "deployments p JOIN deployment_timeline t ON t.deployment_id = p.id",
    scopeColumn: "p.project_id",
    keys: ["p.created_at", "p.id", "t.seq"],
    range: 2,
    org: "(SELECT org_id FROM deployments WHERE id = R.deployment_id)",
  },
  byProject(notificationIntegrations, ["created_at", "id"]),
  byProject(events, ["created_at", "id"]),
  byProject(webhookDeliveries, ["rowid"]),
  {
    table: deliveryAttempts,
    scope: "project",
    from: "webhook_deliveries p JOIN delivery_attempts t ON t.delivery_id = p.id",
    scopeColumn: "p.project_id",
    keys: ["p.rowid", "t.id"],
    range: 1,
    org: "(SELECT org_id FROM projects WHERE id = (SELECT project_id FROM webhook_deliveries WHERE id = R.delivery_id))",
  },
];

/** A foreign key of a table to another: its columns and the parent's. */
export type ParentKey = { columns: readonly string[]; table: string; parentColumns: readonly string[] };

/**
 * A table's name, columns and primary key, as its declaration has them, and its foreign keys to
 * other tables (not to itself).
 */
export type TableShape = {
  name: string;
  columns: readonly string[];
  primaryKey: readonly string[];
  parents: readonly ParentKey[];
};

const shapes = new WeakMap<SQLiteTable, TableShape>();

export function shapeOf(table: SQLiteTable): TableShape {
  let shape = shapes.get(table);
  if (!shape) {
    const config = getTableConfig(table);
    const single = config.columns.filter((column) => column.primary).map((column) => column.name);
    const composite = config.primaryKeys[0]?.columns.map((column) => column.name) ?? [];
    const parents = config.foreignKeys
      .map((key) => key.reference())
      .map((reference) => ({
        columns: reference.columns.map((column) => column.name),
        table: getTableConfig(reference.foreignTable).name,
        parentColumns: reference.foreignColumns.map((column) => column.name),
      }))
      .filter((parent) => parent.table !== config.name);
    shape = {
      name: config.name,
      columns: config.columns.map((column) => column.name),
      primaryKey: single.length > 0 ? single : composite,
      parents,
    };
    shapes.set(table, shape);
  }
  return shape;
}

/** The moved table named `name`, or undefined. */
export function movedTable(name: string): MovedTable | undefined {
  return MOVED_TABLES.find((spec) => shapeOf(spec.table).name === name);
}

/**
 * The capture triggers of one table (migration 0017; a test compares the two): on every insert,
 * update and delete of a row of an organization that is moving out (a `moving_orgs` row), the
 * row's key goes to `move_changes`, or, once the move is `fenced`, the statement is refused. With
 * no organization moving, each costs one probe of an empty table.
 */
export function captureTriggers(spec: MovedTable): string[] {
  const { name, primaryKey } = shapeOf(spec.table);
  return (["insert", "update", "delete"] as const).map((op) => {
    const row = op === "delete" ? "OLD" : "NEW";
    const org = spec.org.replaceAll("R.", `${row}.`);
    const key = `json_array(${primaryKey.map((column) => `${row}.${column}`).join(", ")})`;
    return [
      `CREATE TRIGGER \`${name}_moving_${op}\` AFTER ${op.toUpperCase()} ON \`${name}\` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN`,
      `  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = ${org} AND fenced = 1;`,
      `  INSERT INTO move_changes (org_id, tbl, pk) SELECT org_id, '${name}', ${key} FROM moving_orgs WHERE org_id = ${org} AND incoming = 0;`,
      "END;",
    ].join("\n");
  });
}

/** `org_limits` is copied at the switch, not captured; its writes are refused once fenced. */
export function limitsFenceTriggers(): string[] {
  return (["insert", "update"] as const).map((op) =>
    [
      `CREATE TRIGGER \`org_limits_moving_${op}\` AFTER ${op.toUpperCase()} ON \`org_limits\` WHEN EXISTS (SELECT 1 FROM moving_orgs) BEGIN`,
      "  SELECT RAISE(ABORT, 'organization moved') FROM moving_orgs WHERE org_id = NEW.org_id AND fenced = 1;",
      "END;",
    ].join("\n"),
  );
}
