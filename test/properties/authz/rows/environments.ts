/**
 * Environments, components and stacks (API_CONTRACT §23) and an environment's protection and lock
 * (§26) in the authorization matrix: the reads are `read` (viewer+, `environments:read`); the
 * environment's create, rename and delete, the protection's replace, the lock and the unlock are
 * `manage` (project owner, `environments:write`).
 */
import { createComponent, createEnvironment, createStack, unique } from "../../../helpers/factories";
import { type MatrixRoute, perWorld, readRows, type World } from "../types";

type Target = { environmentId: string; componentId: string; stackId: string };

/** A non-default environment with a component and a stack, made once per World (reads change nothing). */
const target = perWorld(async (world): Promise<Target> => {
  const environmentId = (await createEnvironment(world.project.id)).id;
  const component = await createComponent(environmentId);
  const stack = await createStack(environmentId);
  return { environmentId, componentId: component.id, stackId: stack.id };
});
const read = readRows(target);

/** A fresh non-default environment of the World's project (internal API, not rate-limited). */
const freshEnvironment = async (world: World) => (await createEnvironment(world.project.id)).id;

/** §26's five settings as they are by default: a replace that holds nothing up. */
const DEFAULT_SETTINGS = {
  required_approvals: 0,
  reviewer_role: "owner",
  prevent_self_review: true,
  wait_timer: 0,
  concurrency: "parallel",
};

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/projects/{project_id}/environments",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/projects/${world.project.id}/environments` }),
  },
  {
    name: "POST /v1/projects/{project_id}/environments",
    action: "manage",
    success: 201,
    // A name of its own per cell: a clash would be 409 (§23).
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/projects/${world.project.id}/environments`,
      body: { name: unique("matrix-env") },
    }),
  },
  read("GET /v1/environments/{environment_id}", (t) => `/v1/environments/${t.environmentId}`),
  {
    name: "PATCH /v1/environments/{environment_id}",
    action: "manage",
    success: 200,
    prepare: async (world) => ({
      method: "PATCH",
      path: `/v1/environments/${(await target(world)).environmentId}`,
      body: { name: unique("matrix-renamed") },
    }),
  },
  {
    name: "DELETE /v1/environments/{environment_id}",
    action: "manage",
    success: 204,
    // A fresh non-default environment per cell: the default one is 409 (§23), and a wrongly
    // allowed delete must not take the shared one with it.
    prepare: async (world) => ({
      method: "DELETE",
      path: `/v1/environments/${await freshEnvironment(world)}`,
    }),
  },
  read(
    "GET /v1/environments/{environment_id}/components",
    (t) => `/v1/environments/${t.environmentId}/components`,
  ),
  read("GET /v1/components/{component_id}", (t) => `/v1/components/${t.componentId}`),
  read("GET /v1/environments/{environment_id}/stacks", (t) => `/v1/environments/${t.environmentId}/stacks`),
  read("GET /v1/stacks/{stack_id}", (t) => `/v1/stacks/${t.stackId}`),
  read(
    "GET /v1/environments/{environment_id}/protection",
    (t) => `/v1/environments/${t.environmentId}/protection`,
  ),
  {
    name: "PUT /v1/environments/{environment_id}/protection",
    action: "manage",
    success: 200,
    prepare: async (world) => ({
      method: "PUT",
      path: `/v1/environments/${(await target(world)).environmentId}/protection`,
      body: DEFAULT_SETTINGS,
    }),
  },
  {
    name: "POST /v1/environments/{environment_id}/lock",
    action: "manage",
    success: 200,
    // A fresh environment per cell: a lock of a locked environment is 409 (§26).
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/environments/${await freshEnvironment(world)}/lock`,
      body: { reason: "matrix" },
    }),
  },
  {
    name: "DELETE /v1/environments/{environment_id}/lock",
    action: "manage",
    // §26: 204 locked or not, so the shared environment serves every cell.
    success: 204,
    prepare: async (world) => ({
      method: "DELETE",
      path: `/v1/environments/${(await target(world)).environmentId}/lock`,
    }),
  },
];
