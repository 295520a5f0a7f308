/** A deployment row as its record (API_CONTRACT §3, §20, §24–§26). */
import type { z } from "@hono/zod-openapi";
import type { deployments } from "../../db/schema";
import type { DeploymentDataSchema, DeploymentRecord } from "../../schemas/deployment";
import { normalConfig } from "./config";

/**
 * `data` as the API describes it. The column's own type is looser (plain strings for the
 * enums); the zod schema that validated it on the way in is the authority on its shape.
 */
export type DeploymentDataRecord = z.output<typeof DeploymentDataSchema>;

export type DeploymentRow = typeof deployments.$inferSelect;

export function toDeploymentRecord(row: DeploymentRow): DeploymentRecord {
  return {
    id: row.id,
    environment_id: row.environmentId,
    stack_ids: row.stackIds,
    status: row.status,
    data: row.data as DeploymentDataRecord,
    started_at: row.startedAt,
    finished_at: row.finishedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    redeploy_of: row.redeployOf,
    created_by: row.createdBy,
    config: normalConfig(row.config),
    promoted_from: row.promotedFrom,
    gate: row.gate,
  };
}
