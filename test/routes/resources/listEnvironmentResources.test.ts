/** listEnvironmentResources: GET /v1/environments/{environment_id}/resources (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute, resourcesInScopes } from "../../helpers/engine";
import { runCommonRouteTests } from "../../helpers/security";

type Resource = StackResourceRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

describe("GET /v1/environments/{environment_id}/resources", () => {
  it("an environment lists the resources of all its stacks", async () => {
    const { owner, environmentId, a, b } = await resourcesInScopes();
    const byEnv = await request<List<Resource>>("GET", `/v1/environments/${environmentId}/resources`, {
      key: owner.key,
    });
    expect(byEnv.body.data.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
  });

  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/resources",
    resourceRoute((s) => `/v1/environments/${s.environmentId}/resources`),
  );
});
