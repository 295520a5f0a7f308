/**
 * replaceEnvironmentProtection: PUT /v1/environments/{environment_id}/protection (API_CONTRACT
 * §26: project `owner`, `environments:write`; the body is the five settings, all required:
 * `required_approvals` 0–6, `reviewer_role` owner | contributor, `prevent_self_review`,
 * `wait_timer` 0–86400 seconds, `concurrency` parallel | serial | supersede; answers the
 * protection; audit `replaceEnvironmentProtection`), with §11's Idempotency-Key and §12's ETag
 * and If-Match. What the settings do to deployments: test/properties/protected-environments/.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import {
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  pause,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { createCaller, createOwnedProject, projectRoleCallers } from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import {
  DEFAULT_SETTINGS,
  getProtection,
  lock,
  PROTECTION_FIELDS,
  protectionPath,
  putProtection,
  readProtection,
  type Settings,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";

const SETTINGS: Settings = {
  required_approvals: 2,
  reviewer_role: "contributor",
  prevent_self_review: false,
  wait_timer: 300,
  concurrency: "serial",
};

const FIVE = Object.keys(DEFAULT_SETTINGS);

async function world() {
  const w = await createOwnedProject();
  return { ...w, environmentId: w.project.default_environment_id };
}

describe("PUT /v1/environments/{environment_id}/protection", () => {
  it("200: the protection with the five settings, environment_id, locked null and updated_at; a read agrees, ETag and all", async () => {
    const { owner, environmentId } = await world();
    const res = await putProtection(owner, environmentId, SETTINGS);
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(PROTECTION_FIELDS);
    expect(res.body).toEqual({
      environment_id: environmentId,
      ...SETTINGS,
      checks: [],
      locked: null,
      updated_at: expect.stringMatching(TS),
    });
    const etag = res.headers.get("etag");
    expect(etag).toMatch(STRONG_ETAG);
    const read = await getProtection(owner, environmentId);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(etag);
  });

  it("replaces every setting each time (nothing merges); updated_at moves on with each change", async () => {
    const { owner, environmentId } = await world();
    const first = await putProtection(owner, environmentId, SETTINGS);
    await pause(5);
    const second = await putProtection(owner, environmentId, DEFAULT_SETTINGS);
    expect(second.status, second.raw).toBe(200);
    expect(second.body).toMatchObject(DEFAULT_SETTINGS);
    expect(second.body.updated_at).toMatch(TS);
    expect((second.body.updated_at ?? "") > (first.body.updated_at ?? "")).toBe(true);
    // Back to the defaults, but it has changed: updated_at stays a timestamp.
    expect((await readProtection(owner, environmentId)).updated_at).toBe(second.body.updated_at);
  });

  it("takes every value at the bounds and in each enum", async () => {
    const { owner, environmentId } = await world();
    const valid: Array<Partial<Settings>> = [
      { required_approvals: 0 },
      { required_approvals: 6 },
      { wait_timer: 0 },
      { wait_timer: 86_400 },
      { reviewer_role: "owner" },
      { reviewer_role: "contributor" },
      { prevent_self_review: true },
      { prevent_self_review: false },
      { concurrency: "parallel" },
      { concurrency: "serial" },
      { concurrency: "supersede" },
    ];
    for (const change of valid) {
      const body = { ...SETTINGS, ...change };
      const res = await putProtection(owner, environmentId, body);
      expect(res.status, `${JSON.stringify(change)}: ${res.raw}`).toBe(200);
      expect(res.body).toMatchObject(body);
    }
  });

  it.each(FIVE)("without %s: 400 naming it; nothing changes", async (field) => {
    const { owner, environmentId } = await world();
    const body: Record<string, unknown> = { ...SETTINGS };
    delete body[field];
    expectError(await putProtection(owner, environmentId, body), 400, "bad_input", field);
    expect((await readProtection(owner, environmentId)).updated_at).toBeNull();
  });

  it.each([
    [{ required_approvals: -1 }, "required_approvals"],
    [{ required_approvals: 7 }, "required_approvals"],
    [{ required_approvals: 1.5 }, "required_approvals"],
    [{ required_approvals: "2" }, "required_approvals"],
    [{ required_approvals: null }, "required_approvals"],
    [{ wait_timer: -1 }, "wait_timer"],
    [{ wait_timer: 86_401 }, "wait_timer"],
    [{ wait_timer: 2.5 }, "wait_timer"],
    [{ wait_timer: "60" }, "wait_timer"],
    [{ reviewer_role: "viewer" }, "reviewer_role"],
    [{ reviewer_role: "admin" }, "reviewer_role"],
    [{ reviewer_role: "Owner" }, "reviewer_role"],
    [{ prevent_self_review: "true" }, "prevent_self_review"],
    [{ prevent_self_review: 1 }, "prevent_self_review"],
    [{ concurrency: "queue" }, "concurrency"],
    [{ concurrency: "" }, "concurrency"],
    [{ unknown_setting: true }, "unknown_setting"],
  ])("refuses %j with 400 naming %s; nothing changes", async (change, path) => {
    const { owner, environmentId } = await world();
    const before = await getProtection(owner, environmentId);
    expectError(
      await putProtection(owner, environmentId, { ...SETTINGS, ...change }),
      400,
      "bad_input",
      path,
    );
    const after = await getProtection(owner, environmentId);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
  });

  it("an empty body or a body that is not an object is 400", async () => {
    const { owner, environmentId } = await world();
    for (const body of [{}, [], "parallel", null]) {
      expectError(await putProtection(owner, environmentId, body), 400, "bad_input");
    }
  });

  it("leaves the lock as it is", async () => {
    const { owner, environmentId } = await world();
    const locked = await lock(owner, environmentId, "incident 42");
    const res = await putProtection(owner, environmentId, SETTINGS);
    expect(res.status, res.raw).toBe(200);
    expect(res.body.locked).toEqual(locked.locked);
    expect((await readProtection(owner, environmentId)).locked).toEqual(locked.locked);
  });

  it("a read record sent back with settings changed (GET, change, PUT) is taken; its `locked` changes no lock", async () => {
    const { owner, environmentId } = await world();
    const locked = await lock(owner, environmentId, "kept");
    const read = await readProtection(owner, environmentId);
    const res = await putProtection(owner, environmentId, { ...read, required_approvals: 4, locked: null });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.required_approvals).toBe(4);
    expect(res.body.locked).toEqual(locked.locked);
    expect((await readProtection(owner, environmentId)).locked).toEqual(locked.locked);
  });

  describe("If-Match", () => {
    it("a stale ETag is 409 with cause header.if-match and changes nothing; the current one, `*` or a list holding it replaces", async () => {
      const { owner, environmentId } = await world();
      const first = (await getProtection(owner, environmentId)).headers.get("etag") ?? "";
      const replaced = await putProtection(owner, environmentId, SETTINGS, { "if-match": first });
      expect(replaced.status, replaced.raw).toBe(200);
      const current = replaced.headers.get("etag") ?? "";
      const other = { ...SETTINGS, required_approvals: 5 };
      expectError(
        await putProtection(owner, environmentId, other, { "if-match": first }),
        409,
        "conflict",
        "header.if-match",
      );
      // Strong comparison: the weak form of the current tag matches nothing.
      expectError(
        await putProtection(owner, environmentId, other, { "if-match": `W/${current}` }),
        409,
        "conflict",
        "header.if-match",
      );
      expect((await readProtection(owner, environmentId)).required_approvals).toBe(2);
      const listed = await putProtection(owner, environmentId, other, { "if-match": `${first}, ${current}` });
      expect(listed.status, listed.raw).toBe(200);
      const star = await putProtection(owner, environmentId, DEFAULT_SETTINGS, { "if-match": "*" });
      expect(star.status, star.raw).toBe(200);
    });

    it("an ETag from before a lock is stale", async () => {
      const { owner, environmentId } = await world();
      const before = (await getProtection(owner, environmentId)).headers.get("etag") ?? "";
      await lock(owner, environmentId);
      const lockedNow = await readProtection(owner, environmentId);
      expectError(
        await putProtection(owner, environmentId, SETTINGS, { "if-match": before }),
        409,
        "conflict",
        "header.if-match",
      );
      // Refused: the protection is as the lock left it, not SETTINGS.
      expect(await readProtection(owner, environmentId)).toEqual(lockedNow);
    });

    it("of two replaces holding the same ETag, exactly one wins", async () => {
      const { owner, environmentId } = await world();
      const etag = (await getProtection(owner, environmentId)).headers.get("etag") ?? "";
      const results = await Promise.all(
        [1, 4].map((n) =>
          putProtection(owner, environmentId, { ...SETTINGS, required_approvals: n }, { "if-match": etag }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.status === 200);
      expect((await readProtection(owner, environmentId)).required_approvals).toBe(
        winner?.body.required_approvals,
      );
    });

    it("on an environment that does not exist is 404", async () => {
      const { owner } = await world();
      expectError(await putProtection(owner, UNKNOWN_ID, SETTINGS, { "if-match": "*" }), 404, "not_found");
    });
  });

  it("writes one audit entry, replaceEnvironmentProtection, by the caller in the project; a refused replace writes none", async () => {
    const { owner, project, environmentId } = await world();
    const requestId = `protect-${crypto.randomUUID()}`;
    const res = await putProtection(owner, environmentId, SETTINGS, { "x-request-id": requestId });
    expect(res.status, res.raw).toBe(200);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "replaceEnvironmentProtection",
      project_id: project.id,
      actor_type: "api_key",
      actor_account_id: owner.accountId,
      actor_api_key_id: owner.keyId,
    });
    const changes = JSON.parse(String(rows[0]?.changes)) as Record<string, { from: unknown; to: unknown }>;
    expect(changes.required_approvals).toEqual({ from: 0, to: 2 });
    expect(changes.wait_timer).toEqual({ from: 0, to: 300 });
    // Every top-level field that changed (§14), `updated_at` among them: null until the first write.
    expect(changes.updated_at).toEqual({ from: null, to: (res.body as { updated_at: string }).updated_at });
    const refusedId = `protect-${crypto.randomUUID()}`;
    await putProtection(owner, environmentId, { ...SETTINGS, wait_timer: -1 }, { "x-request-id": refusedId });
    expect(await rowsOf(refusedId)).toEqual([]);
  });

  it("an Idempotency-Key replays the replace: the same answer, one change, one audit entry", async () => {
    const { owner, environmentId } = await world();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await putProtection(owner, environmentId, SETTINGS, headers);
    const retry = await putProtection(owner, environmentId, SETTINGS, headers);
    expect(first.status, first.raw).toBe(200);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.raw,
      "true",
    ]);
    const row = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'replaceEnvironmentProtection' AND project_id = (SELECT project_id FROM environments WHERE id = ?)",
    )
      .bind(environmentId)
      .first<{ n: number }>();
    expect(row?.n).toBe(1);
  });

  it("needs project owner: org owners, org admins and project owners replace; contributors and viewers 403 forbidden; non-members 404", async () => {
    const w = await world();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const admin = await createCaller(w.org, "admin");
    expectError(await putProtection(contributor, w.environmentId, SETTINGS), 403, "forbidden");
    expectError(await putProtection(viewer, w.environmentId, SETTINGS), 403, "forbidden");
    expectError(await putProtection(outsider, w.environmentId, SETTINGS), 404, "not_found");
    expect((await readProtection(w.owner, w.environmentId)).updated_at).toBeNull();
    for (const [caller, n] of [
      [projectOwner, 1],
      [admin, 2],
      [w.owner, 3],
    ] as const) {
      const res = await putProtection(caller, w.environmentId, { ...SETTINGS, required_approvals: n });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.required_approvals).toBe(n);
    }
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "put",
      "/v1/environments/{environment_id}/protection",
      "replaceEnvironmentProtection",
      "environments:write",
    );
    const { owner, environmentId } = await world();
    expectMissingScope(
      await putProtection(await keyWithout(owner, "environments:write"), environmentId, SETTINGS),
      "environments:write",
    );
    expectMissingScope(
      await putProtection(await keyWith(owner, "environments:read"), environmentId, SETTINGS),
      "environments:write",
    );
    expectError(
      await putProtection(await keyForAnotherProject(owner), environmentId, SETTINGS),
      404,
      "not_found",
    );
    expect((await readProtection(owner, environmentId)).updated_at).toBeNull();
    const scoped = await putProtection(await keyWith(owner, "environments:write"), environmentId, SETTINGS);
    expect(scoped.status, scoped.raw).toBe(200);
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await world();
    expectError(await putProtection(owner, UNKNOWN_ID, SETTINGS), 404, "not_found");
    expectError(await putProtection(owner, "nope!", SETTINGS), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("PUT /v1/environments/{environment_id}/protection", async () => {
    const { owner, environmentId } = await world();
    return { method: "PUT", path: protectionPath(environmentId), body: SETTINGS, caller: owner };
  });
});
