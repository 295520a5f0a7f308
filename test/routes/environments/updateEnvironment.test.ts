/**
 * updateEnvironment: PATCH /v1/environments/{environment_id} (API_CONTRACT §23: project `owner`,
 * `environments:write`; body `{ name }`; the name 1–100 characters, unique in the project
 * regardless of case on every rename; audit `updateEnvironment`), with §11's Idempotency-Key and
 * §12's ETag and If-Match.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import {
  ENVIRONMENT_FIELDS,
  environmentNames,
  environmentPath,
  expectMissingScope,
  expectPublished,
  getEnvironment,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  patchEnvironment,
  pause,
  postEnvironment,
  publicEnvironment,
  readEnvironment,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProject,
  projectRoleCallers,
  unique,
} from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

/** A project with a `Staging` environment (public create), and that environment. */
async function withStaging() {
  const w = await createOwnedProject();
  const staging = await publicEnvironment(w.owner, w.project.id, { name: "Staging" });
  return { ...w, staging };
}

describe("PATCH /v1/environments/{environment_id}", () => {
  it("renames: the record with its new name and every other field kept, a new strong ETag; a read agrees", async () => {
    const { owner, staging } = await withStaging();
    const before = await getEnvironment(owner, staging.id);
    const res = await patchEnvironment(owner, staging.id, { name: "QA" });
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(ENVIRONMENT_FIELDS);
    expect(res.body).toEqual({ ...staging, name: "QA", updated_at: expect.stringMatching(TS) });
    expect(res.body.updated_at >= staging.updated_at).toBe(true);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(STRONG_ETAG);
    expect(etag).not.toBe(before.headers.get("etag"));
    const read = await getEnvironment(owner, staging.id);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(etag);
  });

  it("renaming to a case variant of its own name, or to the same name, is fine", async () => {
    const { owner, staging } = await withStaging();
    for (const name of ["STAGING", "staging", "Staging", "Staging"]) {
      const res = await patchEnvironment(owner, staging.id, { name });
      expect(res.status, `${name}: ${res.raw}`).toBe(200);
      expect(res.body.name).toBe(name);
    }
  });

  it("the default environment can be renamed", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await patchEnvironment(owner, project.default_environment_id, { name: "prod" });
    expect(res.status, res.raw).toBe(200);
    expect(await environmentNames(owner, project.id)).toEqual(["prod"]);
  });

  it("another environment's name, in any case, is 409 with cause `name`; nothing changes", async () => {
    const { owner, project, staging } = await withStaging();
    await createEnvironment(project.id, "Ärger");
    const before = await getEnvironment(owner, staging.id);
    for (const name of ["production", "PRODUCTION", "Production", "äRGER", "ärger"]) {
      expectError(await patchEnvironment(owner, staging.id, { name }), 409, "conflict", "name");
    }
    const after = await getEnvironment(owner, staging.id);
    expect(after.body).toEqual(before.body);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
  });

  it("a name held in another project is fine; the old name is free at once", async () => {
    const { owner, project, staging } = await withStaging();
    const sibling = await createProject(owner);
    await publicEnvironment(owner, sibling.id, { name: "QA" });
    expect((await patchEnvironment(owner, staging.id, { name: "qa" })).status).toBe(200);
    const reuse = await postEnvironment(owner, project.id, { name: "staging" });
    expect(reuse.status, reuse.raw).toBe(201);
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ name: 7 }, "name"],
    [{ name: null }, "name"],
    [{ name: "ok", project_id: "7Hq3VnT5m2WcXbQ9pLk4Rz" }, "project_id"],
    [{ name: "ok", extra: 1 }, "extra"],
  ])("refuses %j with 400 naming %s; nothing changes", async (body, path) => {
    const { owner, staging } = await withStaging();
    expectError(await patchEnvironment(owner, staging.id, body), 400, "bad_input", path);
    expect(await readEnvironment(owner, staging.id)).toEqual(staging);
  });

  it("takes 1 and 100 characters", async () => {
    const { owner, staging } = await withStaging();
    for (const name of ["q", "n".repeat(100)]) {
      expect((await patchEnvironment(owner, staging.id, { name })).body.name).toBe(name);
    }
  });

  describe("If-Match", () => {
    it("a stale ETag is 409 with cause header.if-match and changes nothing; the current one, `*` or a list holding it renames", async () => {
      const { owner, staging } = await withStaging();
      const first = (await getEnvironment(owner, staging.id)).headers.get("etag") ?? "";
      const renamed = await patchEnvironment(owner, staging.id, { name: "one" }, { "if-match": first });
      expect(renamed.status, renamed.raw).toBe(200);
      const current = renamed.headers.get("etag") ?? "";
      expectError(
        await patchEnvironment(owner, staging.id, { name: "two" }, { "if-match": first }),
        409,
        "conflict",
        "header.if-match",
      );
      // Strong comparison: the weak form of the current tag matches nothing.
      expectError(
        await patchEnvironment(owner, staging.id, { name: "two" }, { "if-match": `W/${current}` }),
        409,
        "conflict",
        "header.if-match",
      );
      expect((await readEnvironment(owner, staging.id)).name).toBe("one");
      const listed = await patchEnvironment(
        owner,
        staging.id,
        { name: "two" },
        { "if-match": `${first}, ${current}` },
      );
      expect(listed.status, listed.raw).toBe(200);
      const star = await patchEnvironment(owner, staging.id, { name: "three" }, { "if-match": "*" });
      expect(star.status, star.raw).toBe(200);
    });

    it("on an environment that does not exist is 404", async () => {
      const { owner } = await createOwnedProject();
      expectError(
        await patchEnvironment(owner, UNKNOWN_ID, { name: "x" }, { "if-match": "*" }),
        404,
        "not_found",
      );
    });

    it("of two renames holding the same ETag, exactly one wins", async () => {
      const { owner, staging } = await withStaging();
      const etag = (await getEnvironment(owner, staging.id)).headers.get("etag") ?? "";
      const results = await Promise.all(
        ["left", "right"].map((name) => patchEnvironment(owner, staging.id, { name }, { "if-match": etag })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = results.find((r) => r.status === 200);
      expect((await readEnvironment(owner, staging.id)).name).toBe(winner?.body.name);
    });
  });

  it("writes one audit entry, updateEnvironment, with the name's change", async () => {
    const { owner, project, staging } = await withStaging();
    const requestId = `rename-${crypto.randomUUID()}`;
    const res = await patchEnvironment(owner, staging.id, { name: "Renamed" }, { "x-request-id": requestId });
    expect(res.status).toBe(200);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "updateEnvironment",
      target_type: "environment",
      target_id: staging.id,
      project_id: project.id,
      actor_account_id: owner.accountId,
      actor_api_key_id: owner.keyId,
    });
    const changes = JSON.parse(rows[0]?.changes as string) as Record<string, unknown>;
    expect(changes.name).toEqual({ from: "Staging", to: "Renamed" });
    // A refused rename writes nothing.
    const refusedId = `rename-${crypto.randomUUID()}`;
    await patchEnvironment(owner, staging.id, { name: "production" }, { "x-request-id": refusedId });
    expect(await rowsOf(refusedId)).toEqual([]);
  });

  it("the entry's changes hold every top-level field the rename changed: updated_at too (§14)", async () => {
    const { owner, staging } = await withStaging();
    await pause();
    const requestId = `rename-${crypto.randomUUID()}`;
    const res = await patchEnvironment(owner, staging.id, { name: "Renamed" }, { "x-request-id": requestId });
    expect(res.body.updated_at).not.toBe(staging.updated_at);
    const [row] = await rowsOf(requestId);
    const changes = JSON.parse(row?.changes as string) as Record<string, unknown>;
    // As a project's replace records it: `changes` is over the record's non-secret top-level fields.
    expect(changes).toEqual({
      name: { from: "Staging", to: "Renamed" },
      updated_at: { from: staging.updated_at, to: res.body.updated_at },
    });
  });

  it("an Idempotency-Key replays the rename: the same answer, one change, one audit entry", async () => {
    const { owner, staging } = await withStaging();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await patchEnvironment(owner, staging.id, { name: "once" }, headers);
    const retry = await patchEnvironment(owner, staging.id, { name: "once" }, headers);
    expect(first.status).toBe(200);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.raw,
      "true",
    ]);
    const row = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'updateEnvironment' AND target_id = ?",
    )
      .bind(staging.id)
      .first<{ n: number }>();
    expect(row?.n).toBe(1);
  });

  it("needs project owner: org admins and project owners rename; contributors and viewers 403 forbidden; non-members 404", async () => {
    const w = await withStaging();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const admin = await createCaller(w.org, "admin");
    expectError(await patchEnvironment(contributor, w.staging.id, { name: "c" }), 403, "forbidden");
    expectError(await patchEnvironment(viewer, w.staging.id, { name: "v" }), 403, "forbidden");
    expectError(await patchEnvironment(outsider, w.staging.id, { name: "o" }), 404, "not_found");
    expect(await readEnvironment(w.owner, w.staging.id)).toEqual(w.staging);
    expect((await patchEnvironment(projectOwner, w.staging.id, { name: "by-owner" })).status).toBe(200);
    expect((await patchEnvironment(admin, w.staging.id, { name: "by-admin" })).status).toBe(200);
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "patch",
      "/v1/environments/{environment_id}",
      "updateEnvironment",
      "environments:write",
    );
    const { owner, staging } = await withStaging();
    expectMissingScope(
      await patchEnvironment(await keyWithout(owner, "environments:write"), staging.id, { name: "x" }),
      "environments:write",
    );
    expectMissingScope(
      await patchEnvironment(await keyWith(owner, "environments:read"), staging.id, { name: "x" }),
      "environments:write",
    );
    expectError(
      await patchEnvironment(await keyForAnotherProject(owner), staging.id, { name: "x" }),
      404,
      "not_found",
    );
    expect(await readEnvironment(owner, staging.id)).toEqual(staging);
    expect(
      (await patchEnvironment(await keyWith(owner, "environments:write"), staging.id, { name: "x" })).status,
    ).toBe(200);
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await patchEnvironment(owner, UNKNOWN_ID, { name: "x" }), 404, "not_found");
    expectError(await patchEnvironment(owner, "nope!", { name: "x" }), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("PATCH /v1/environments/{environment_id}", async () => {
    const { owner, staging } = await withStaging();
    return {
      method: "PATCH",
      path: environmentPath(staging.id),
      body: { name: unique("env") },
      caller: owner,
    };
  });
});
