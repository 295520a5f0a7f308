/** getEnvironmentResource: GET /v1/environments/{environment_id}/resources/{id} (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createEnvironment, createProjectWithStack, createResource } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Resource = StackResourceRecord;

describe("GET /v1/environments/{environment_id}/resources/{id}", () => {
  it("reads the record the engine created, as GET /v1/resources/{id} does", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createResource(stack.id, { status: "create_in_progress" });
    const res = await request<Resource>("GET", `/v1/environments/${environmentId}/resources/${created.id}`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it("a resource reached through another environment is 404", async () => {
    const { owner, project, stack } = await createProjectWithStack();
    const otherEnv = await createEnvironment(project.id);
    const resource = await createResource(stack.id);
    const res = await request<ErrorBody>("GET", `/v1/environments/${otherEnv.id}/resources/${resource.id}`, {
      key: owner.key,
    });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/resources/{id}",
    resourceRoute((s, r) => `/v1/environments/${s.environmentId}/resources/${r.id}`),
  );
});
