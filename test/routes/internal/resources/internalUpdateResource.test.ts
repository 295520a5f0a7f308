/** internalUpdateResource: PATCH /internal/v1/resources/{id}, the engine's report of a resource's status. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, internalOk, request } from "../../../helpers/api";
import { newResource, type EngineResource as Resource } from "../../../helpers/engine";
import type { ErrorBody } from "../../../helpers/expect";
import { createProjectWithStack, createResource } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("PATCH /internal/v1/resources/{id}", () => {
  it("a new status moves timestamp and clears the old reason; the same status keeps both", async () => {
    const { owner, stack } = await createProjectWithStack();
    const created = (await newResource(stack.id, { status_reason: "starting" })).body;
    const same = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_in_progress",
      physical_id: "orders-v2",
    });
    expect(same).toMatchObject({
      status_reason: "starting",
      timestamp: created.timestamp,
      physical_id: "orders-v2",
    });
    expect(same.updated_at >= created.updated_at).toBe(true);
    const moved = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_complete",
    });
    expect(moved.status_reason).toBeNull();
    expect(moved.timestamp).toBe(moved.updated_at);
    expect(moved.timestamp >= created.timestamp).toBe(true);
    const reasoned = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "update_failed",
      status_reason: "quota",
    });
    expect(reasoned.status_reason).toBe("quota");
    const cleared = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "update_failed",
      status_reason: null,
    });
    expect(cleared).toMatchObject({ status_reason: null, timestamp: reasoned.timestamp });
    const read = await request<Resource>("GET", `/v1/resources/${created.id}`, { key: owner.key });
    expect(read.body).toEqual(cleared);
  });

  it("bad bodies are 400 and change nothing; an unknown resource is 404", async () => {
    const { stack } = await createProjectWithStack();
    const created = (await newResource(stack.id)).body;
    for (const body of [{}, { status: "gone" }, { status: "create_complete", extra: 1 }]) {
      const res = await internal<ErrorBody>("PATCH", `/resources/${created.id}`, body);
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    }
    // An engine's bare PATCH (no body, or an empty one labelled JSON): the status is missing.
    for (const headers of [{}, { "content-type": "application/json" }] as Record<string, string>[]) {
      const res = await request<ErrorBody>("PATCH", `/internal/v1/resources/${created.id}`, {
        rawBody: new Uint8Array(0),
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, ...headers },
      });
      expect([res.status, res.body.code], res.raw).toEqual([400, "bad_input"]);
      expect(res.body.cause).toEqual([{ path: "status", message: expect.any(String) }]);
    }
    const missing = await internal<ErrorBody>("PATCH", `/resources/${"d".repeat(32)}`, {
      status: "create_complete",
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    const after = await internalOk<Resource>("PATCH", `/resources/${created.id}`, {
      status: "create_in_progress",
    });
    expect(after.timestamp).toBe(created.timestamp);
  });

  runInternalRouteTests("PATCH /internal/v1/resources/{id}", async () => {
    const { stack } = await createProjectWithStack();
    const resource = await createResource(stack.id);
    return {
      method: "PATCH",
      path: `/internal/v1/resources/${resource.id}`,
      body: { status: "create_complete" },
    };
  });
});
