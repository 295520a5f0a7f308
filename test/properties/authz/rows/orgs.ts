/** Routes about the organization as a whole (API_CONTRACT part five): none acts on one project. */
import type { MatrixRoute, UnscopedRoute } from "../types";

export const routes: MatrixRoute[] = [];

export const unscoped: UnscopedRoute[] = [
  {
    name: "GET /v1/orgs/{org_id}/limits",
    why: "any key of the organization reads them (§29); tested in test/routes/orgs/getOrgLimits.test.ts",
  },
];
