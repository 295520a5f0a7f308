/** getStackResource: GET /v1/stacks/{stack_id}/resources/{id} (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createProjectWithStack, createResource, createStack } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Resource = StackResourceRecord;

describe("GET /v1/stacks/{stack_id}/resources/{id}", () => {
  it("reads the record the engine created, as GET /v1/resources/{id} does", async () => {
    const { owner, stack } = await createProjectWithStack();
    const created = await createResource(stack.id, { status: "create_in_progress" });
    const res = await request<Resource>("GET", `/v1/stacks/${stack.id}/resources/${created.id}`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it("a resource reached through another stack is 404", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const otherStack = await createStack(environmentId);
    const resource = await createResource(stack.id);
    const res = await request<ErrorBody>("GET", `/v1/stacks/${otherStack.id}/resources/${resource.id}`, {
      key: owner.key,
    });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  it("a malformed stack id is 400 bad_input naming the parameter", async () => {
    const { owner, stack } = await createProjectWithStack();
    const badStack = await request<ErrorBody>("GET", `/v1/stacks/x/resources/${stack.id}`, {
      key: owner.key,
    });
    expect(badStack.body.cause?.map((c) => c.path)).toContain("stack_id");
  });

  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/resources/{id}",
    resourceRoute((s, r) => `/v1/stacks/${s.stack.id}/resources/${r.id}`),
  );
});
