/**
 * Running a deployment again (API_CONTRACT §20, `redeployDeployment`): a new deployment of the
 * same environment with exactly the original's stacks, patch and source, made by the same path
 * as every deployment (`insertDeployment`), so it starts as any other does. From any status of
 * the original: a failed one is retried, an older succeeded one is rolled back to, its
 * configuration with it (§24: `pinned`, the default when the original has one).
 */
import type { CallerContext } from "../../context";
import { deployments } from "../../db/schema";
import { conflict } from "../../errors";
import type { DeploymentRecord } from "../../schemas/deployment";
import type { DeploymentCreateInput } from "../../schemas/deployment-writes";
import type { RedeployInput } from "../../schemas/promotion-writes";
import { loadAuthorized } from "../access";
import { createEngineDeployment } from "./create";

/** Needs `contributor` on the original's project; a stack deleted since is `409` naming it. */
export async function redeployDeployment(
  ctx: CallerContext,
  id: string,
  options: Partial<RedeployInput> = {},
): Promise<DeploymentRecord> {
  const { row } = await loadAuthorized(ctx.db, ctx.identity, deployments, id, "write", "Deployment");
  const config = options.config ?? (row.config ? "pinned" : "current");
  if (config === "pinned" && !row.config) {
    throw conflict("The deployment was made before configurations were recorded: it has none to pin.", [
      { path: "config", message: "The original has no configuration; use `current`." },
    ]);
  }
  // The stored `data` passed the create's own schema on its way in: it is that input, as kept.
  const data = row.data as DeploymentCreateInput["data"];
  const input: DeploymentCreateInput = {
    stack_ids: row.stackIds,
    data: { patch: data.patch, source: data.source },
  };
  return createEngineDeployment(ctx, row.environmentId, input, {
    redeployOf: row.id,
    ...(config === "pinned" && row.config ? { config: row.config } : {}),
  });
}
