/** Project routes that act on one project. The lists and create are checked in test/routes/projects/. */
import { unique } from "../../../helpers/factories";
import type { MatrixRoute, UnscopedRoute } from "../types";

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/projects/{project_id}",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/projects/${world.project.id}` }),
  },
  {
    name: "PUT /v1/projects/{project_id}",
    action: "manage",
    success: 200,
    prepare: async (world) => ({
      method: "PUT",
      path: `/v1/projects/${world.project.id}`,
      body: { name: unique("matrix"), default_environment_id: world.project.default_environment_id },
    }),
  },
  {
    name: "DELETE /v1/projects/{project_id}",
    action: "manage",
    success: 204,
    // A fresh project per cell: a wrongly allowed delete must not take the shared one with it.
    prepare: async (world) => ({ method: "DELETE", path: `/v1/projects/${(await world.fresh()).id}` }),
  },
  {
    name: "PATCH /v1/projects/{project_id}/disconnect",
    action: "manage",
    success: 204,
    // Fresh per cell: a second disconnect of the same project is 409.
    prepare: async (world) => ({
      method: "PATCH",
      path: `/v1/projects/${(await world.fresh()).id}/disconnect`,
    }),
  },
];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/projects",
    why: "lists what the caller may see; tested in test/routes/projects/listProjects.test.ts",
  },
  { name: "POST /v1/projects", why: "needs an org role (403 unauthorized), not a project role" },
  {
    name: "GET /v1/orgs/{org_id}/projects",
    why: "organization-scoped list; tested in test/routes/projects/listOrgProjects.test.ts",
  },
  { name: "GET /v1/orgs", why: "the caller's own organization" },
  { name: "POST /v1/orgs", why: "creates an organization; no project involved" },
];
