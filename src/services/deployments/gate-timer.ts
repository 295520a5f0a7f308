/**
 * The environment's gate object (src/gate/object.ts) as the services see it: a waiting deployment's
 * wait timer handed to it, so its release needs no request.
 */
import type { ServiceContext } from "../../context";

/**
 * Has the gate object of `environmentId` settle `deploymentId` (of organization `orgId`) at `atMs`
 * (idempotent: the same deployment scheduled again keeps one timer, at the time given last). A
 * failure throws.
 */
export async function scheduleGateTimer(
  ctx: ServiceContext,
  environmentId: string,
  deploymentId: string,
  atMs: number,
  orgId: string | null,
): Promise<void> {
  const gates = ctx.environmentGates;
  await gates
    .get(gates.idFromName(environmentId))
    .schedule(deploymentId, atMs, ctx.database, orgId ?? undefined);
}
