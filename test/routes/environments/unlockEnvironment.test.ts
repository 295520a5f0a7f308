/**
 * unlockEnvironment: DELETE /v1/environments/{environment_id}/lock (API_CONTRACT §26: project
 * `owner`, `environments:write`; `204`, locked or not; unlocking releases every deployment that
 * nothing else holds; audit `unlockEnvironment`). The release across routes, streams and the
 * engine: test/properties/protected-environments/.
 */
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import {
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
} from "../../helpers/environments";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import { createCaller, createOwnedProject, createStack, projectRoleCallers } from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import {
  deleteLock,
  engineCreateOk,
  lock,
  lockPath,
  protect,
  readDeployment,
  readProtection,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";

async function world() {
  const w = await createOwnedProject();
  const environmentId = w.project.default_environment_id;
  return { ...w, environmentId, stack: await createStack(environmentId) };
}

describe("DELETE /v1/environments/{environment_id}/lock", () => {
  it("204 without a body; the protection reads locked null, its settings as they were", async () => {
    const { owner, environmentId } = await world();
    await protect(owner, environmentId, { required_approvals: 2, concurrency: "serial" });
    const locked = await lock(owner, environmentId, "maintenance");
    const res = await deleteLock(owner, environmentId);
    expect(res.status, res.raw).toBe(204);
    expect(res.raw).toBe("");
    const after = await readProtection(owner, environmentId);
    expect(after).toEqual({ ...locked, locked: null, updated_at: after.updated_at });
    expect(after.updated_at).not.toBeNull();
  });

  it("204 on an environment that is not locked (never locked, or unlocked twice); nothing changes", async () => {
    const { owner, environmentId } = await world();
    const never = await readProtection(owner, environmentId);
    expect(never.locked).toBeNull();
    expect((await deleteLock(owner, environmentId)).status).toBe(204);
    expect(await readProtection(owner, environmentId)).toEqual(never);
    await lock(owner, environmentId);
    expect((await deleteLock(owner, environmentId)).status).toBe(204);
    const once = await readProtection(owner, environmentId);
    expect((await deleteLock(owner, environmentId)).status).toBe(204);
    expect(await readProtection(owner, environmentId)).toEqual(once);
  });

  it("releases, in this request, a deployment that only the lock held: it reads `queued` once the 204 is answered", async () => {
    const { owner, environmentId, stack } = await world();
    await lock(owner, environmentId);
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.status).toBe("waiting");
    expect((await deleteLock(owner, environmentId)).status).toBe(204);
    const after = await readDeployment(owner, d.id);
    expect(after.status).toBe("queued");
    expect(after.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: null,
      blocked_by: [],
      checks: [],
    });
  });

  it("leaves waiting a deployment that something else still holds (approvals), held by that alone", async () => {
    const { owner, environmentId, stack } = await world();
    await protect(owner, environmentId, { required_approvals: 1 });
    await lock(owner, environmentId);
    const held = await engineCreateOk(environmentId, [stack.id]);
    expect(held.gate?.blocked_by).toEqual(["approval", "lock"]);
    expect((await deleteLock(owner, environmentId)).status).toBe(204);
    const after = await readDeployment(owner, held.id);
    expect(after.status).toBe("waiting");
    expect(after.gate).toEqual({
      required_approvals: 1,
      approvals: 0,
      wait_until: null,
      blocked_by: ["approval"],
      checks: [],
    });
  });

  it("writes one audit entry, unlockEnvironment, for the unlock of a locked environment; a refused unlock writes none", async () => {
    const w = await world();
    const locked = await lock(w.owner, w.environmentId);
    const { contributor } = await projectRoleCallers(w);
    const refusedId = `unlock-${crypto.randomUUID()}`;
    expect((await deleteLock(contributor, w.environmentId, { "x-request-id": refusedId })).status).toBe(403);
    expect(await rowsOf(refusedId)).toEqual([]);
    const requestId = `unlock-${crypto.randomUUID()}`;
    expect((await deleteLock(w.owner, w.environmentId, { "x-request-id": requestId })).status).toBe(204);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "unlockEnvironment",
      project_id: w.project.id,
      actor_type: "api_key",
      actor_account_id: w.owner.accountId,
      actor_api_key_id: w.owner.keyId,
    });
    // Every top-level field that changed (§14): the lock, gone, and `updated_at`.
    const after = await readProtection(w.owner, w.environmentId);
    expect(JSON.parse(String(rows[0]?.changes))).toEqual({
      locked: { from: locked.locked, to: null },
      updated_at: { from: locked.updated_at, to: after.updated_at },
    });
  });

  it("an Idempotency-Key replays the 204", async () => {
    const { owner, environmentId } = await world();
    await lock(owner, environmentId);
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await deleteLock(owner, environmentId, headers);
    await lock(owner, environmentId, "locked again meanwhile");
    const retry = await deleteLock(owner, environmentId, headers);
    expect(first.status).toBe(204);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([204, "true"]);
    // The replay executed nothing: the second lock stands.
    expect((await readProtection(owner, environmentId)).locked?.reason).toBe("locked again meanwhile");
  });

  it("needs project owner: contributors and viewers 403 forbidden, non-members 404, the lock stays; project owners and org admins unlock", async () => {
    const w = await world();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const locked = await lock(w.owner, w.environmentId);
    expectError(await deleteLock(contributor, w.environmentId), 403, "forbidden");
    expectError(await deleteLock(viewer, w.environmentId), 403, "forbidden");
    expectError(await deleteLock(outsider, w.environmentId), 404, "not_found");
    expect((await readProtection(w.owner, w.environmentId)).locked).toEqual(locked.locked);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    expect((await deleteLock(projectOwner, w.environmentId)).status).toBe(204);
    expect((await readProtection(w.owner, w.environmentId)).locked).toBeNull();
    await lock(w.owner, w.environmentId);
    const admin = await createCaller(w.org, "admin");
    expect((await deleteLock(admin, w.environmentId)).status).toBe(204);
    expect((await readProtection(w.owner, w.environmentId)).locked).toBeNull();
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "delete",
      "/v1/environments/{environment_id}/lock",
      "unlockEnvironment",
      "environments:write",
    );
    const { owner, environmentId } = await world();
    await lock(owner, environmentId);
    expectMissingScope(
      await deleteLock(await keyWithout(owner, "environments:write"), environmentId),
      "environments:write",
    );
    expectMissingScope(
      await deleteLock(await keyWith(owner, "environments:read"), environmentId),
      "environments:write",
    );
    expectError(await deleteLock(await keyForAnotherProject(owner), environmentId), 404, "not_found");
    expect((await readProtection(owner, environmentId)).locked).not.toBeNull();
    expect((await deleteLock(await keyWith(owner, "environments:write"), environmentId)).status).toBe(204);
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await world();
    expectError(await deleteLock(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await deleteLock(owner, "nope!"), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("DELETE /v1/environments/{environment_id}/lock", async () => {
    const { owner, environmentId } = await world();
    await lock(owner, environmentId);
    return { method: "DELETE", path: lockPath(environmentId), caller: owner };
  });
});
