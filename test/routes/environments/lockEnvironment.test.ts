/**
 * lockEnvironment: POST /v1/environments/{environment_id}/lock (API_CONTRACT §26: project
 * `owner`, `environments:write`; body `{ reason }` of 1–500 characters; `200` the protection, its
 * `locked` `{ reason, account_id, at }`; `409 conflict` when already locked; audit
 * `lockEnvironment`), with §11's Idempotency-Key. What a lock does to deployments:
 * test/properties/protected-environments/.
 */
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import {
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { createCaller, createOwnedProject, createStack, projectRoleCallers } from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import {
  DEFAULT_SETTINGS,
  engineCreateOk,
  getProtection,
  lock,
  lockPath,
  PROTECTION_FIELDS,
  postLock,
  protect,
  readProtection,
  unlock,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";

async function world() {
  const w = await createOwnedProject();
  return { ...w, environmentId: w.project.default_environment_id };
}

describe("POST /v1/environments/{environment_id}/lock", () => {
  it("200: the protection, locked { reason, account_id (the caller's), at }, the settings as they were; a read agrees, ETag and all", async () => {
    const { owner, environmentId } = await world();
    const settings = { ...DEFAULT_SETTINGS, required_approvals: 1, concurrency: "serial" as const };
    await protect(owner, environmentId, settings);
    const before = Date.now();
    const res = await postLock(owner, environmentId, { reason: "Release freeze until Monday" });
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(PROTECTION_FIELDS);
    expect(res.body).toEqual({
      environment_id: environmentId,
      ...settings,
      checks: [],
      locked: {
        reason: "Release freeze until Monday",
        account_id: owner.accountId,
        at: expect.stringMatching(TS),
      },
      updated_at: expect.stringMatching(TS),
    });
    const at = Date.parse(res.body.locked?.at ?? "");
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 1000);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(STRONG_ETAG);
    const read = await getProtection(owner, environmentId);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(etag);
  });

  it("an environment never protected can be locked: the defaults, locked", async () => {
    const { owner, environmentId } = await world();
    const locked = await lock(owner, environmentId, "x");
    expect(locked).toMatchObject({ ...DEFAULT_SETTINGS, locked: { reason: "x" } });
  });

  it("409 when already locked, whoever locks; the first lock stays as it was", async () => {
    const w = await world();
    const admin = await createCaller(w.org, "admin");
    const first = await lock(w.owner, w.environmentId, "first");
    for (const caller of [w.owner, admin]) {
      expectError(await postLock(caller, w.environmentId, { reason: "second" }), 409, "conflict");
    }
    expect((await readProtection(w.owner, w.environmentId)).locked).toEqual(first.locked);
  });

  it("after an unlock it can be locked again, by another owner, who is then the lock's account_id", async () => {
    const w = await world();
    const admin = await createCaller(w.org, "admin");
    await lock(w.owner, w.environmentId, "first");
    await unlock(w.owner, w.environmentId);
    const again = await postLock(admin, w.environmentId, { reason: "second" });
    expect(again.status, again.raw).toBe(200);
    expect(again.body.locked).toMatchObject({ reason: "second", account_id: admin.accountId });
  });

  it("reason: 1 and 500 characters are taken", async () => {
    for (const reason of ["r", "r".repeat(500), "Ünïcødé 🚧 freeze"]) {
      const { owner, environmentId } = await world();
      const res = await postLock(owner, environmentId, { reason });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.locked?.reason).toBe(reason);
    }
  });

  it.each([
    [{}, "reason"],
    [{ reason: "" }, "reason"],
    [{ reason: "r".repeat(501) }, "reason"],
    [{ reason: 5 }, "reason"],
    [{ reason: null }, "reason"],
    [{ reason: "ok", until: "tomorrow" }, "until"],
  ])("refuses %j with 400 naming %s; the environment stays unlocked", async (body, path) => {
    const { owner, environmentId } = await world();
    expectError(await postLock(owner, environmentId, body), 400, "bad_input", path);
    expect((await readProtection(owner, environmentId)).locked).toBeNull();
  });

  it("a request without a body is 400", async () => {
    const { owner, environmentId } = await world();
    expectError(await postLock(owner, environmentId, undefined), 400, "bad_input");
    expect((await readProtection(owner, environmentId)).locked).toBeNull();
  });

  it("new deployments of a locked environment wait, held by the lock", async () => {
    const { owner, environmentId } = await world();
    const stack = await createStack(environmentId);
    await lock(owner, environmentId);
    const d = await engineCreateOk(environmentId, [stack.id]);
    expect(d.status).toBe("waiting");
    expect(d.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: null,
      blocked_by: ["lock"],
      checks: [],
    });
  });

  it("writes one audit entry, lockEnvironment, by the caller in the project; a refused lock writes none", async () => {
    const { owner, project, environmentId } = await world();
    const requestId = `lock-${crypto.randomUUID()}`;
    const res = await postLock(owner, environmentId, { reason: "audit me" }, { "x-request-id": requestId });
    expect(res.status, res.raw).toBe(200);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "lockEnvironment",
      project_id: project.id,
      actor_type: "api_key",
      actor_account_id: owner.accountId,
      actor_api_key_id: owner.keyId,
    });
    // Every top-level field that changed (§14): the lock, and `updated_at` (null until then).
    const locked = res.body as { locked: unknown; updated_at: string };
    expect(JSON.parse(String(rows[0]?.changes))).toEqual({
      locked: { from: null, to: locked.locked },
      updated_at: { from: null, to: locked.updated_at },
    });
    const refusedId = `lock-${crypto.randomUUID()}`;
    await postLock(owner, environmentId, { reason: "again" }, { "x-request-id": refusedId });
    expect(await rowsOf(refusedId)).toEqual([]);
  });

  it("an Idempotency-Key replays the lock (200, the same answer), not a 409", async () => {
    const { owner, environmentId } = await world();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await postLock(owner, environmentId, { reason: "once" }, headers);
    const retry = await postLock(owner, environmentId, { reason: "once" }, headers);
    expect(first.status, first.raw).toBe(200);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.raw,
      "true",
    ]);
  });

  it("needs project owner: contributors and viewers 403 forbidden, non-members 404, nothing locked; project owners and org admins lock", async () => {
    const w = await world();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    expectError(await postLock(contributor, w.environmentId, { reason: "c" }), 403, "forbidden");
    expectError(await postLock(viewer, w.environmentId, { reason: "v" }), 403, "forbidden");
    expectError(await postLock(outsider, w.environmentId, { reason: "o" }), 404, "not_found");
    expect((await readProtection(w.owner, w.environmentId)).locked).toBeNull();
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const byOwner = await postLock(projectOwner, w.environmentId, { reason: "p" });
    expect(byOwner.status, byOwner.raw).toBe(200);
    expect(byOwner.body.locked?.account_id).toBe(projectOwner.accountId);
    await unlock(w.owner, w.environmentId);
    const admin = await createCaller(w.org, "admin");
    expect((await postLock(admin, w.environmentId, { reason: "a" })).status).toBe(200);
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "post",
      "/v1/environments/{environment_id}/lock",
      "lockEnvironment",
      "environments:write",
    );
    const { owner, environmentId } = await world();
    const body = { reason: "scoped" };
    expectMissingScope(
      await postLock(await keyWithout(owner, "environments:write"), environmentId, body),
      "environments:write",
    );
    expectMissingScope(
      await postLock(await keyWith(owner, "environments:read"), environmentId, body),
      "environments:write",
    );
    expectError(await postLock(await keyForAnotherProject(owner), environmentId, body), 404, "not_found");
    expect((await readProtection(owner, environmentId)).locked).toBeNull();
    expect((await postLock(await keyWith(owner, "environments:write"), environmentId, body)).status).toBe(
      200,
    );
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await world();
    expectError(await postLock(owner, UNKNOWN_ID, { reason: "x" }), 404, "not_found");
    expectError(await postLock(owner, "nope!", { reason: "x" }), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("POST /v1/environments/{environment_id}/lock", async () => {
    const { owner, environmentId } = await world();
    return { method: "POST", path: lockPath(environmentId), body: { reason: "common" }, caller: owner };
  });
});
