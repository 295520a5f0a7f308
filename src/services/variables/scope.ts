/**
 * A scope of variables (API_CONTRACT §18): an environment's own variables (component_id null,
 * `scope` "_") or one component's (`scope` its id). The path names the environment or the
 * component; the lookup that authorizes the request also resolves it to its environment.
 */
import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Identity } from "../../context";
import type { Db } from "../../db/client";
import { components, environments } from "../../db/schema";
import { type Lookup, mapLookup, type ProjectAction, runLookup, scopedLookup } from "../access";

export const ENVIRONMENT_SCOPE = "_";

/** Where variables are created, listed or changed together: a component, or an environment itself. */
export type VariableParent = { kind: "component" | "environment"; id: string };

/** The parent, resolved: its project, its environment, and the `scope` key of its variables. */
export type ParentScope = {
  projectId: string;
  environmentId: string;
  componentId: string | null;
  scope: string;
};

/** The component or environment in the path, with the access check, in one query. */
export function parentLookup(
  db: Db,
  identity: Identity,
  parent: VariableParent,
  action: ProjectAction,
): Lookup<ParentScope> {
  if (parent.kind === "component") {
    return mapLookup(scopedLookup(db, identity, components, parent.id, action, "Component"), ({ row }) => ({
      projectId: row.projectId,
      environmentId: row.environmentId,
      componentId: row.id,
      scope: row.id,
    }));
  }
  return mapLookup(scopedLookup(db, identity, environments, parent.id, action, "Environment"), ({ row }) => ({
    projectId: row.projectId,
    environmentId: row.id,
    componentId: null,
    scope: ENVIRONMENT_SCOPE,
  }));
}

export const loadParent = (db: Db, identity: Identity, parent: VariableParent, action: ProjectAction) =>
  runLookup(parentLookup(db, identity, parent, action));

/**
 * The rows of `parent`'s scope, for a statement that shares a batch with the parent's lookup (so
 * before the lookup has said which environment a component is in): the (environment, scope)
 * prefix of the tables' keys, the environment read from the component's row.
 */
export function inScope(
  columns: { environmentId: SQLiteColumn; scope: SQLiteColumn },
  parent: VariableParent,
): SQL {
  return parent.kind === "component"
    ? sql`${columns.environmentId} = (SELECT environment_id FROM components WHERE id = ${parent.id}) AND ${columns.scope} = ${parent.id}`
    : sql`${columns.environmentId} = ${parent.id} AND ${columns.scope} = ${ENVIRONMENT_SCOPE}`;
}

/** The audit target of a change to a whole scope. */
export const scopeTarget = (parent: VariableParent) => ({ type: parent.kind, id: parent.id });
