/**
 * The environment record (API_CONTRACT §23): the row, and what only the deployments know
 * (`current_deployment_id`) or the variables' versions know (`config_pending`, §24), each read in
 * the same statement or round trip as the row.
 */
import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { bindCompiled, compiled, rowReader } from "../../db/compiled";
import { environments } from "../../db/schema";
import type { EnvironmentRecord } from "../../schemas/topology";
import { configPendingSql } from "../deployments/config";

export type EnvironmentRow = typeof environments.$inferSelect;

/** What the record adds to the row: computed by the database beside it. */
export type EnvironmentState = { currentDeploymentId: string | null; configPending: boolean };

export function toEnvironmentRecord(row: EnvironmentRow, state: EnvironmentState): EnvironmentRecord {
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    created_at: row.createdAt,
    updated_at: row.updatedAt ?? row.createdAt,
    current_deployment_id: state.currentDeploymentId,
    config_pending: state.configPending,
  };
}

/**
 * The environment's latest success by `finished_at` (the deployments_environment_finished_idx
 * index walks it backwards from its end: one row read however many it has).
 */
const currentDeploymentOf = (environmentId: SQL, column: "id" | "config") =>
  sql`(SELECT d.${sql.raw(column)} FROM deployments AS d WHERE d.environment_id = ${environmentId} AND d.status = 'succeeded' ORDER BY d.finished_at DESC, d.id DESC LIMIT 1)`;

/** The record's two computed fields, for the environment `environmentId` names. */
const stateColumns = (environmentId: SQL) => ({
  currentDeploymentId: sql<string | null>`${currentDeploymentOf(environmentId, "id")}`.as(
    "current_deployment_id",
  ),
  configPending:
    sql<number>`${configPendingSql(environmentId, currentDeploymentOf(environmentId, "config"))}`.as(
      "config_pending",
    ),
});

/** The row's columns and its state, in the order a compiled SELECT of them returns them. */
export const environmentSelection = {
  ...getTableColumns(environments),
  ...stateColumns(sql`${environments.id}`),
};
const readSelection = rowReader(environmentSelection);

/** A row of `environmentSelection`'s values, as its record. */
export function readEnvironmentRecord(values: readonly unknown[]): EnvironmentRecord {
  const { currentDeploymentId, configPending, ...row } = readSelection(values);
  return toEnvironmentRecord(row, { currentDeploymentId, configPending: Boolean(configPending) });
}

/** The state of one environment whose row is read apart (by the lookup that authorizes a request). */
export function environmentStateStatement(db: Db, environmentId: string): D1PreparedStatement {
  const query = compiled("environment-state", (b) =>
    b.select(stateColumns(sql`${sql.placeholder("id")}`)).from(sql`(SELECT 1)`),
  );
  return bindCompiled(db, query, { id: environmentId });
}

/** `environmentStateStatement`'s row (of a batch: its values). */
export function readEnvironmentState(values: readonly unknown[] | undefined): EnvironmentState {
  return {
    currentDeploymentId: (values?.[0] as string | null | undefined) ?? null,
    configPending: Boolean(values?.[1]),
  };
}
