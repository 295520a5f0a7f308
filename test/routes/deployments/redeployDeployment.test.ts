/** redeployDeployment: POST /v1/deployments/{id}/redeploy, run a deployment again (API_CONTRACT §20). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { deployIn, eventsOf, GIT, newDeployment, PATCH, reportOk } from "../../helpers/engine";
import { type ErrorBody, expectError, NEW_ID, TS } from "../../helpers/expect";
import {
  type Caller,
  createApiKey,
  createProjectWithStack,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;

const redeploy = (
  caller: Caller,
  id: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) =>
  request<Deployment & ErrorBody>("POST", `/v1/deployments/${id}/redeploy`, { key: caller.key, ...options });

/** The deployments of an environment, read straight from D1 (a refusal makes none). */
async function deploymentCount(environmentId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM deployments WHERE environment_id = ?")
    .bind(environmentId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("POST /v1/deployments/{id}/redeploy", () => {
  it("makes a new queued deployment with exactly the original's stacks, patch and source", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const source = { git: GIT, registry: { image: "registry.example/web:1" } };
    const created = await newDeployment(environmentId, {
      stack_ids: [second.id, stack.id],
      data: { patch: PATCH, source },
    });
    const original = await reportOk(created.body.id, { status: "in_progress" });
    const failed = await reportOk(original.id, {
      status: "failed",
      stacks: [{ id: stack.id, status: "failed", status_reason: "boom" }],
    });

    const res = await redeploy(owner, failed.id);
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: environmentId,
      stack_ids: [second.id, stack.id],
      status: "queued",
      data: {
        patch: PATCH,
        source,
        stacks: [second.id, stack.id].map((id) => ({ id, status: "queued", timestamp: res.body.created_at })),
      },
      started_at: null,
      finished_at: null,
      created_at: expect.stringMatching(TS),
      updated_at: res.body.created_at,
      redeploy_of: failed.id,
      promoted_from: null,
      gate: null,
      created_by: owner.accountId,
      config: failed.config,
    });
    expect(res.body.id).not.toBe(failed.id);
    expect(res.headers.get("location")).toBe(`/v1/deployments/${res.body.id}`);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    const read = await request<Deployment>("GET", `/v1/deployments/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
    // The original is untouched.
    expect((await request("GET", `/v1/deployments/${failed.id}`, { key: owner.key })).body).toEqual(failed);
  });

  it("runs again from every status of the original; a deployment without a source stays without one", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    for (const status of ["queued", "in_progress", "succeeded", "failed", "cancelled"]) {
      const original = await deployIn(environmentId, [stack.id], status);
      const res = await redeploy(owner, original.id);
      expect(res.status, `${status}: ${res.raw}`).toBe(201);
      expect(res.body).toMatchObject({
        status: "queued",
        redeploy_of: original.id,
        data: { patch: original.data.patch },
      });
      expect(res.body.data).not.toHaveProperty("source");
    }
  });

  it("an older succeeded deployment rolls back to it; a redeploy of a redeploy names its own original", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const v1 = await newDeployment(environmentId, {
      stack_ids: [stack.id],
      data: { patch: [{ op: "replace", path: "/image", value: "web:1" }] },
    });
    await reportOk(v1.body.id, { status: "in_progress" });
    await reportOk(v1.body.id, { status: "succeeded" });
    await deployIn(environmentId, [stack.id], "succeeded"); // v2, the default patch
    const rollback = await redeploy(owner, v1.body.id);
    expect(rollback.body.data.patch).toEqual([{ op: "replace", path: "/image", value: "web:1" }]);
    const again = await redeploy(owner, rollback.body.id);
    expect(again.body.redeploy_of).toBe(rollback.body.id);
    expect(again.body.data.patch).toEqual(rollback.body.data.patch);
  });

  it("a redeploy moves on like any deployment: its webhook events carry redeploy_of", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const original = await deployIn(environmentId, [stack.id], "failed");
    const res = await redeploy(owner, original.id);
    await reportOk(res.body.id, { status: "in_progress" });
    const [event] = await eventsOf(res.body.id);
    expect(event?.type).toBe("deployment.in_progress");
    expect((event?.data.deployment as Deployment | undefined)?.redeploy_of).toBe(original.id);
  });

  it("a stack of the original that no longer exists is 409 naming it; nothing is made", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const [second, third] = [await createStack(environmentId), await createStack(environmentId)];
    const original = await deployIn(environmentId, [stack.id, second.id, third.id], "succeeded");
    await env.DB.prepare("DELETE FROM stacks WHERE id IN (?, ?)").bind(second.id, third.id).run();
    const before = await deploymentCount(environmentId);
    const res = await redeploy(owner, original.id);
    expectError(res, 409, "conflict");
    expect(res.body.cause).toEqual([
      { path: "stack_ids.1", message: expect.any(String) },
      { path: "stack_ids.2", message: expect.any(String) },
    ]);
    expect(res.body.message).toMatch(/no longer exists/);
    expect(await deploymentCount(environmentId)).toBe(before);
  });

  it("takes no body or `{}`; anything else is 400", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const original = await deployIn(environmentId, [stack.id], "failed");
    expect((await redeploy(owner, original.id, { body: {} })).status).toBe(201);
    const before = await deploymentCount(environmentId);
    expectError(
      await redeploy(owner, original.id, { body: { stack_ids: [] } }),
      400,
      "bad_input",
      "stack_ids",
    );
    expectError(await redeploy(owner, original.id, { body: [] }), 400, "bad_input");
    expect(await deploymentCount(environmentId)).toBe(before);
    expectError(await redeploy(owner, "not-an-id"), 400, "bad_input");
    expectError(await redeploy(owner, "1111111111111111111111"), 404, "not_found");
  });

  it("with an Idempotency-Key a retried redeploy is one deployment, sequential or concurrent", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const original = await deployIn(environmentId, [stack.id], "failed");
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await redeploy(owner, original.id, { headers });
    const retry = await redeploy(owner, original.id, { headers });
    expect(first.status).toBe(201);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));

    const concurrent = { "idempotency-key": crypto.randomUUID() };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => redeploy(owner, original.id, { headers: concurrent })),
    );
    const made = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(made.size).toBe(1);
    for (const r of results) expect([201, 409]).toContain(r.status);
    const { results: rows } = await env.DB.prepare("SELECT id FROM deployments WHERE redeploy_of = ?")
      .bind(original.id)
      .all<{ id: string }>();
    expect(rows.map((r) => r.id).sort()).toEqual([first.body.id, ...made].sort());
  });

  it("writes one audit entry, redeployDeployment, about the new deployment", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const original = await deployIn(environmentId, [stack.id], "failed");
    const requestId = `redeploy-${crypto.randomUUID()}`;
    const res = await redeploy(owner, original.id, { headers: { "x-request-id": requestId } });
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "redeployDeployment",
      target_type: "deployment",
      target_id: res.body.id,
      project_id: project.id,
    });
    expect(JSON.parse(rows[0]?.changes as string).redeploy_of).toEqual({ from: null, to: original.id });
  });

  it("contributors redeploy; viewers are 403 forbidden; outsiders 404; keys need deployments:write", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const { viewer, contributor, outsider } = await projectRoleCallers({ org, owner, project });
    const original = await deployIn(environmentId, [stack.id], "failed");
    const before = await deploymentCount(environmentId);
    expectError(await redeploy(viewer, original.id), 403, "forbidden");
    expectError(await redeploy(outsider, original.id), 404, "not_found");
    expect(await deploymentCount(environmentId)).toBe(before);
    expect((await redeploy(contributor, original.id)).status).toBe(201);
    const reader = await createApiKey(owner, { scopes: ["deployments:read"] });
    const refused = await redeploy(reader, original.id);
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("`deployments:write`");
  });

  runCommonRouteTests("POST /v1/deployments/{id}/redeploy", async () => {
    const s = await createProjectWithStack();
    const d = await deployIn(s.environmentId, [s.stack.id], "failed");
    return { method: "POST", path: `/v1/deployments/${d.id}/redeploy`, caller: s.owner };
  });
});
