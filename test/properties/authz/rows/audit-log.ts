/** The audit logs (API_CONTRACT §14). */
import type { MatrixRoute, UnscopedRoute } from "../types";

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/projects/{project_id}/audit-log",
    action: "manage",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/projects/${world.project.id}/audit-log` }),
  },
];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/orgs/{org_id}/audit-log",
    why: "needs an org role (403 unauthorized), not a project role; tested in test/routes/audit-log/listOrgAuditLog.test.ts",
  },
];
