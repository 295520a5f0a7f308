import { internalOk } from "../../../helpers/api";
import { createDeployment, createStack } from "../../../helpers/factories";
import { type MatrixRoute, perWorld, readRows, type UnscopedRoute, type World } from "../types";

type Target = { environmentId: string; stackId: string; deploymentId: string };

async function queuedDeployment(world: World): Promise<Target> {
  const environmentId = world.project.default_environment_id;
  const stack = await createStack(environmentId);
  const deployment = await createDeployment(environmentId, [stack.id], {
    patch: [{ op: "replace", path: "/image", value: "web:2" }],
  });
  return { environmentId, stackId: stack.id, deploymentId: deployment.id };
}

/** One deployment per World for the reads, which change nothing. */
const target = perWorld(queuedDeployment);
const read = readRows(target);
/** A final one for the wait, which would otherwise wait out its timeout in every cell. */
const readFinished = readRows(
  perWorld(async (world) => {
    const t = await queuedDeployment(world);
    await internalOk("PATCH", `/deployments/${t.deploymentId}`, { status: "cancelled" });
    return t;
  }),
);

export const routes: MatrixRoute[] = [
  read("GET /v1/deployments/{id}", (t) => `/v1/deployments/${t.deploymentId}`),
  read(
    "GET /v1/environments/{environment_id}/deployments/{id}",
    (t) => `/v1/environments/${t.environmentId}/deployments/${t.deploymentId}`,
  ),
  read("GET /v1/stacks/{stack_id}/deployments", (t) => `/v1/stacks/${t.stackId}/deployments`),
  read("GET /v1/deployments/{id}/timeline", (t) => `/v1/deployments/${t.deploymentId}/timeline`),
  readFinished("GET /v1/deployments/{id}/wait", (t) => `/v1/deployments/${t.deploymentId}/wait`),
  read(
    "GET /v1/environments/{environment_id}/deployments",
    (t) => `/v1/environments/${t.environmentId}/deployments`,
  ),
  {
    name: "PATCH /v1/deployments/{id}/cancel",
    action: "write",
    success: 200,
    // A queued deployment per cell: a second cancel of the same one would be 409.
    prepare: async (world) => ({
      method: "PATCH",
      path: `/v1/deployments/${(await queuedDeployment(world)).deploymentId}/cancel`,
    }),
  },
  {
    name: "POST /v1/deployments/{id}/redeploy",
    action: "write",
    success: 201,
    // Each cell may make a new deployment; the original, which it leaves as it is, is shared.
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/deployments/${(await target(world)).deploymentId}/redeploy`,
    }),
  },
];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/deployments",
    why: "lists the deployments of the projects the caller may see (200 for everyone); tested in test/routes/deployments/listDeployments.test.ts",
  },
];
