/** A deployment row as its record (API_CONTRACT §3, §20, §24–§26). */
import type * as z from "zod";
import type { DeploymentData, deployments } from "../../db/schema";
import { badInput } from "../../errors";
import type { DeploymentDataSchema, DeploymentRecord } from "../../schemas/deployment";
import { diffRecords } from "../audit/entry";
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
    // A gate written before checks existed holds none (§31).
    gate: row.gate ? { ...row.gate, checks: row.gate.checks ?? [] } : null,
  };
}

/**
 * D1 stores at most 2,000,000 bytes in a row (Cloudflare docs, D1 > Platform > Limits). A
 * deployment's row holds its `data` and `stack_ids`, and its event's row the record (both again);
 * this leaves room for their other columns. A stack's `status_reason` is a free string and
 * `stack_ids` has no count of its own (SPEC.md), so only the sum of what a deployment keeps is
 * bounded: a create or a report that would take it past this is `400 bad_input`, before any write.
 */
export const MAX_DEPLOYMENT_DATA_BYTES = 1_900_000;

export function refuseOversizedDeployment(data: DeploymentData, stackIds: readonly string[], path: string) {
  const json = JSON.stringify(data) + JSON.stringify(stackIds);
  // A UTF-16 unit is at most 3 bytes of UTF-8: most deployments are decided without encoding.
  if (json.length * 3 <= MAX_DEPLOYMENT_DATA_BYTES) return;
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > MAX_DEPLOYMENT_DATA_BYTES) {
    throw badInput(
      `The deployment would keep ${bytes} bytes (its data and stack IDs), over the ${MAX_DEPLOYMENT_DATA_BYTES} a deployment keeps.`,
      [
        {
          path,
          message: `A deployment's data and stack IDs must stay within ${MAX_DEPLOYMENT_DATA_BYTES} bytes (UTF-8 JSON).`,
        },
      ],
    );
  }
}

/**
 * A deployment's changes for the audit log, without `data`: its patch is the engine's
 * description of a change and may carry configuration values (variables among them).
 */
export function auditableDeploymentChanges(before: DeploymentRecord | null, after: DeploymentRecord | null) {
  return diffRecords(before, after, ["data"]);
}
