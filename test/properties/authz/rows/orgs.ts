/** Routes about the organization as a whole (API_CONTRACT part five): none acts on one project. */
import type { MatrixRoute, UnscopedRoute } from "../types";

export const routes: MatrixRoute[] = [];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/orgs/{org_id}/limits",
    why: "any key of the organization reads them (§29); tested in test/routes/orgs/getOrgLimits.test.ts",
  },
  ...["POST /v1/orgs/{org_id}/audit-streams", "GET /v1/orgs/{org_id}/audit-streams"].map((name) => ({
    name,
    why: "org owner or admin, acting org-wide (§30); tested in test/routes/audit-streams/",
  })),
  ...[
    "GET /v1/audit-streams/{id}",
    "PATCH /v1/audit-streams/{id}",
    "DELETE /v1/audit-streams/{id}",
    "POST /v1/audit-streams/{id}/replay",
  ].map((name) => ({
    name,
    why: "an organization's stream, not a project's (§30); tested in test/routes/audit-streams/",
  })),
];
