/** Conditional requests on the internal API (API_CONTRACT §12): the engine's reports carry and honour ETags. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../helpers/api";
import {
  newDeployment,
  newResource,
  PATCH,
  type EngineResource as Resource,
  report,
} from "../helpers/engine";
import type { ErrorBody } from "../helpers/expect";
import { createProjectWithStack } from "../helpers/factories";

describe("conditional requests on the internal API (API_CONTRACT §12)", () => {
  const asAdmin = (headers: Record<string, string> = {}) => ({
    authorization: `Bearer ${env.ADMIN_TOKEN}`,
    ...headers,
  });

  it("an engine's report answers the record's ETag, the same one a public read shows", async () => {
    const { owner, stack, environmentId } = await createProjectWithStack();
    const created = await newResource(stack.id);
    expect(created.status).toBe(201);
    const patched = await internal<Resource>("PATCH", `/resources/${created.body.id}`, {
      status: "create_complete",
    });
    const read = await request("GET", `/v1/resources/${created.body.id}`, { key: owner.key });
    expect(patched.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(patched.headers.get("etag")).toBe(read.headers.get("etag"));

    const deployment = await newDeployment(environmentId, { stack_ids: [stack.id], data: { patch: PATCH } });
    expect(deployment.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    const moved = await report(deployment.body.id, { status: "in_progress" });
    const publicRead = await request("GET", `/v1/deployments/${deployment.body.id}`, { key: owner.key });
    expect(moved.headers.get("etag")).toBe(publicRead.headers.get("etag"));
  });

  it("If-Match on a resource report: a stale ETag is 409 and changes nothing; the current one applies", async () => {
    const { stack } = await createProjectWithStack();
    const created = await newResource(stack.id);
    const tag = created.headers.get("etag") ?? "";
    const first = await request<Resource>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "create_complete" },
      headers: asAdmin({ "if-match": tag }),
    });
    expect(first.status, first.raw).toBe(200);
    // The same ETag again: the record has changed since.
    const stale = await request<ErrorBody>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "delete_in_progress" },
      headers: asAdmin({ "if-match": tag }),
    });
    expect([stale.status, stale.body.code]).toEqual([409, "conflict"]);
    expect(stale.body.cause).toEqual([{ path: "header.if-match", message: expect.any(String) }]);
    const audit = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'internal.updateResource' AND target_id = ?",
    )
      .bind(created.body.id)
      .first<number>("n");
    expect(audit).toBe(1);
    const current = first.headers.get("etag") ?? "";
    const ok = await request<Resource>("PATCH", `/internal/v1/resources/${created.body.id}`, {
      body: { status: "delete_in_progress" },
      headers: asAdmin({ "if-match": `"nope", ${current}` }),
    });
    expect([ok.status, ok.body.status]).toEqual([200, "delete_in_progress"]);
    const missing = await request<ErrorBody>("PATCH", `/internal/v1/resources/${"d".repeat(32)}`, {
      body: { status: "create_complete" },
      headers: asAdmin({ "if-match": current }),
    });
    expect(missing.status).toBe(404);
  });
});
