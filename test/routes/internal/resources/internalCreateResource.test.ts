/** internalCreateResource: POST /internal/v1/stacks/{stack_id}/resources, the engine's report of a new resource. */
import { describe, expect, it } from "vitest";
import { request } from "../../../helpers/api";
import { newResource } from "../../../helpers/engine";
import { type ErrorBody, TS } from "../../../helpers/expect";
import { createProjectWithStack } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/stacks/{stack_id}/resources", () => {
  it("creates a resource; template_id defaults to the stack's", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const res = await newResource(stack.id, { status_reason: "User Initiated" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      stack_id: stack.id,
      environment_id: environmentId,
      template_id: stack.template_id,
      status: "create_in_progress",
      status_reason: "User Initiated",
    });
    expect(res.body.timestamp).toMatch(TS);
    const own = await newResource(stack.id, { template_id: "a".repeat(32) });
    expect(own.body.template_id).toBe("a".repeat(32));
  });

  it.each([
    [{ status: "created" }, "status"],
    [{ resource_type: null }, "resource_type"],
    [{ physical_id: 7 }, "physical_id"],
    [{ colour: "red" }, "colour"],
    // §17: any string of 1–255 characters; only an empty or over-long one is refused.
    [{ template_id: "" }, "template_id"],
    [{ template_id: "t".repeat(256) }, "template_id"],
  ])("refuses %j with 400 naming %s", async (fields, path) => {
    const { stack } = await createProjectWithStack();
    const res = await newResource(stack.id, fields);
    expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
  });

  it("an unknown stack is 404; no token is 401", async () => {
    const res = await newResource("c".repeat(32));
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    const anon = await request<ErrorBody>("POST", `/internal/v1/stacks/${"c".repeat(32)}/resources`, {
      body: { resource_type: "x", physical_id: "y", status: "create_complete" },
    });
    expect([anon.status, anon.body.code]).toEqual([401, "unauthenticated"]);
  });

  runInternalRouteTests("POST /internal/v1/stacks/{stack_id}/resources", async () => {
    const { stack } = await createProjectWithStack();
    return {
      method: "POST",
      path: `/internal/v1/stacks/${stack.id}/resources`,
      body: { resource_type: "AWS::S3::Bucket", physical_id: "b", status: "create_complete" },
    };
  });
});
