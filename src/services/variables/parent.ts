/**
 * A set of variables (API_CONTRACT §18 calls it a "scope"; in the code "scope" is a key's scope,
 * §15, alone): an environment's own variables (component_id null, key `_`) or one component's
 * (key: its id), held in the tables' `scope` column. The path names the environment or the
 * component (its parent); the lookup that authorizes the request also resolves it to its set.
 */
import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Identity } from "../../context";
import type { Db } from "../../db/client";
import { components, environments } from "../../db/schema";
import { authorizedLookup, type ProjectAction } from "../access";
import { type Lookup, mapLookup, runLookup } from "../lookup";

export const ENVIRONMENT_SET = "_";

/** Where variables are created, listed or changed together: a component, or an environment itself. */
export type VariableParent = { kind: "component" | "environment"; id: string };

/** The parent, resolved: its project, its environment, and its variables' set key (the `scope` column). */
export type VariableSet = {
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
): Lookup<VariableSet> {
  if (parent.kind === "component") {
    return mapLookup(
      authorizedLookup(db, identity, components, parent.id, action, "Component"),
      ({ row }) => ({
        projectId: row.projectId,
        environmentId: row.environmentId,
        componentId: row.id,
        scope: row.id,
      }),
    );
  }
  return mapLookup(
    authorizedLookup(db, identity, environments, parent.id, action, "Environment"),
    ({ row }) => ({
      projectId: row.projectId,
      environmentId: row.id,
      componentId: null,
      scope: ENVIRONMENT_SET,
    }),
  );
}

export const loadParent = (db: Db, identity: Identity, parent: VariableParent, action: ProjectAction) =>
  runLookup(parentLookup(db, identity, parent, action));

/**
 * The rows of `parent`'s scope, for a statement that shares a batch with the parent's lookup (so
 * before the lookup has said which environment a component is in): the (environment, scope)
 * prefix of the tables' keys, the environment read from the component's row.
 */
export function inVariableSet(
  columns: { environmentId: SQLiteColumn; scope: SQLiteColumn },
  parent: VariableParent,
): SQL {
  return parent.kind === "component"
    ? sql`${columns.environmentId} = (SELECT environment_id FROM components WHERE id = ${parent.id}) AND ${columns.scope} = ${parent.id}`
    : sql`${columns.environmentId} = ${parent.id} AND ${columns.scope} = ${ENVIRONMENT_SET}`;
}

/** The audit target of a change to a whole scope. */
export const variableSetTarget = (parent: VariableParent) => ({ type: parent.kind, id: parent.id });
