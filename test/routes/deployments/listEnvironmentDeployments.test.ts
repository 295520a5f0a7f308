/** listEnvironmentDeployments: GET /v1/environments/{environment_id}/deployments (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { deploymentRoute, deploymentsInScopes, listIds } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createProjectWithStack } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/environments/{environment_id}/deployments", () => {
  it("scopes: an environment lists its own deployments", async () => {
    const { owner, environmentId, both, onlySecond } = await deploymentsInScopes();
    const list = listIds(owner.key);
    expect((await list(`/v1/environments/${environmentId}/deployments`)).sort()).toEqual(
      [both.id, onlySecond.id].sort(),
    );
  });

  it("unknown status values are 400 bad_input naming the field", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    for (const query of ["status=done", "status=failed,nope", "status=failed&status=", "status=FAILED"]) {
      const res = await request<ErrorBody>("GET", `/v1/environments/${environmentId}/deployments?${query}`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.cause?.some((c) => c.path.startsWith("status"))).toBe(true);
    }
  });

  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/deployments",
    deploymentRoute((s) => `/v1/environments/${s.environmentId}/deployments`),
  );
});
