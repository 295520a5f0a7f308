/** listEnvironmentResources: GET /v1/environments/{environment_id}/resources (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute, resourcesInScopes } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createProjectWithStack } from "../../helpers/factories";
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

  it("an unknown environment is 404; a malformed environment id or limit is 400", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    const unknown = await request<ErrorBody>("GET", `/v1/environments/${"c".repeat(32)}/resources`, {
      key: owner.key,
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/environments/nope!/resources", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    expect(bad.body.cause?.map((c) => c.path)).toContain("environment_id");
    const limit = await request<ErrorBody>("GET", `/v1/environments/${environmentId}/resources?limit=0`, {
      key: owner.key,
    });
    expect([limit.status, limit.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/resources",
    resourceRoute((s) => `/v1/environments/${s.environmentId}/resources`),
  );
});
