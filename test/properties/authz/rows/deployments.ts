/**
 * Deployments in the authorization matrix (API_CONTRACT §5, §20, §23–§26): the reads are `read`
 * (viewer+); cancel, redeploy, a create from the API and a promotion are `write` (contributor+); a
 * review is for the environment's reviewers, `owner` by default (§26), so `manage` here.
 */
import { internalOk, request } from "../../../helpers/api";
import { createDeployment, createEnvironment, createStack, unique } from "../../../helpers/factories";
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

/**
 * A promotion's source and target (§25), once per World: a succeeded original of a stack of the
 * default environment, and another environment with one stack of the same `template_id`. Each cell
 * may promote it again: the original stays `succeeded`, the target unprotected.
 */
const promotion = perWorld(async (world) => {
  const templateId = unique("matrix-template");
  const source = world.project.default_environment_id;
  const stack = await createStack(source, { template_id: templateId });
  const original = await createDeployment(source, [stack.id]);
  await internalOk("PATCH", `/deployments/${original.id}`, { status: "in_progress" });
  await internalOk("PATCH", `/deployments/${original.id}`, { status: "succeeded" });
  const target = (await createEnvironment(world.project.id)).id;
  await createStack(target, { template_id: templateId });
  return { originalId: original.id, targetEnvironmentId: target };
});

/**
 * An environment whose protection requires one approval (§26), set once per World through PUT with
 * the owner's key, and one stack in it. The World's other environments stay unprotected.
 */
const approvalEnvironment = perWorld(async (world) => {
  const environmentId = (await createEnvironment(world.project.id)).id;
  const stack = await createStack(environmentId);
  const res = await request("PUT", `/v1/environments/${environmentId}/protection`, {
    key: world.owner.key,
    body: {
      required_approvals: 1,
      reviewer_role: "owner",
      prevent_self_review: true,
      wait_timer: 0,
      concurrency: "parallel",
    },
  });
  if (res.status !== 200) throw new Error(`matrix: protect environment → ${res.status} ${res.raw}`);
  return { environmentId, stackId: stack.id };
});

/**
 * A deployment `waiting` with `approval` in `blocked_by`, for one review cell (a second review of
 * the same one by the same account would be 409). Made by the internal create, so `created_by` is
 * null and `prevent_self_review` holds back no actor.
 */
async function waitingDeployment(world: World): Promise<string> {
  const { environmentId, stackId } = await approvalEnvironment(world);
  const deployment = await createDeployment(environmentId, [stackId]);
  if (deployment.status !== "waiting") {
    throw new Error(`matrix: a deployment needing approval is ${deployment.status}, not waiting`);
  }
  return deployment.id;
}

/** An environment whose protection has one check (§31), once per World, and one stack in it. */
const checkedEnvironment = perWorld(async (world) => {
  const environmentId = (await createEnvironment(world.project.id)).id;
  const stack = await createStack(environmentId);
  const res = await request("PUT", `/v1/environments/${environmentId}/protection`, {
    key: world.owner.key,
    body: {
      required_approvals: 0,
      reviewer_role: "owner",
      prevent_self_review: true,
      wait_timer: 0,
      concurrency: "parallel",
      checks: [{ name: "e2e", timeout: 3600, on_timeout: "fail" }],
    },
  });
  if (res.status !== 200) throw new Error(`matrix: check environment → ${res.status} ${res.raw}`);
  return { environmentId, stackId: stack.id };
});

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
  {
    name: "POST /v1/environments/{environment_id}/deployments",
    action: "write",
    success: 201,
    // `stack_ids` left out: every stack of the environment (§23), which has the target's one.
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/environments/${(await target(world)).environmentId}/deployments`,
      body: { data: { patch: [{ op: "replace", path: "/image", value: "web:3" }] } },
    }),
  },
  // The internal create records a `config` (§24), so the reads find one.
  read("GET /v1/deployments/{id}/config", (t) => `/v1/deployments/${t.deploymentId}/config`),
  read("GET /v1/deployments/{id}/config/diff", (t) => `/v1/deployments/${t.deploymentId}/config/diff`),
  {
    name: "POST /v1/deployments/{id}/promote",
    action: "write",
    success: 201,
    prepare: async (world) => {
      const { originalId, targetEnvironmentId } = await promotion(world);
      return {
        method: "POST",
        path: `/v1/deployments/${originalId}/promote`,
        body: { environment_id: targetEnvironmentId },
      };
    },
  },
  {
    name: "POST /v1/deployments/{id}/reviews",
    // §26: reviewers are the members whose project role is at least `reviewer_role` (`owner`
    // by default) and org owners and admins: exactly `manage`'s cells.
    action: "manage",
    success: 200,
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/deployments/${await waitingDeployment(world)}/reviews`,
      body: { state: "approved" },
    }),
  },
  read("GET /v1/deployments/{id}/reviews", (t) => `/v1/deployments/${t.deploymentId}/reviews`),
  {
    name: "POST /v1/deployments/{id}/checks/{name}",
    // §31: the system that ran a check concludes it: the project role `contributor`, as a cancel.
    action: "write",
    success: 200,
    prepare: async (world) => {
      const { environmentId, stackId } = await checkedEnvironment(world);
      const deployment = await createDeployment(environmentId, [stackId]);
      return {
        method: "POST",
        path: `/v1/deployments/${deployment.id}/checks/e2e`,
        body: { conclusion: "passed" },
      };
    },
  },
];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/deployments",
    why: "lists the deployments of the projects the caller may see (200 for everyone); tested in test/routes/deployments/listDeployments.test.ts",
  },
];
