/**
 * getEnvironmentProtection: GET /v1/environments/{environment_id}/protection (API_CONTRACT §26:
 * viewer, `environments:read`; the protection `{ environment_id, required_approvals (default 0),
 * reviewer_role (default owner), prevent_self_review (default true), wait_timer (default 0),
 * concurrency (default parallel), locked (null or { reason, account_id, at }), updated_at (null
 * while it has never changed) }`), with part four's ETag and If-None-Match (§12).
 */
import { describe, expect, it } from "vitest";
import {
  expectMissingScope,
  expectPublished,
  expectRecordEtag,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  publicEnvironment,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  projectRoleCallers,
} from "../../helpers/factories";
import {
  DEFAULT_SETTINGS,
  getProtection,
  lock,
  PROTECTION_FIELDS,
  protect,
  protectionPath,
  readProtection,
  unlock,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";

const neverChanged = (environmentId: string) => ({
  environment_id: environmentId,
  ...DEFAULT_SETTINGS,
  checks: [],
  locked: null,
  updated_at: null,
});

describe("GET /v1/environments/{environment_id}/protection", () => {
  it("an environment never protected answers exactly the defaults, updated_at null", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await getProtection(owner, project.default_environment_id);
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(PROTECTION_FIELDS);
    expect(res.body).toEqual(neverChanged(project.default_environment_id));
  });

  it("the defaults hold for every environment, however it was made (project create, public create, internal create)", async () => {
    const { owner, project } = await createOwnedProject();
    const made = [
      project.default_environment_id,
      (await publicEnvironment(owner, project.id)).id,
      (await createEnvironment(project.id)).id,
    ];
    for (const id of made) expect(await readProtection(owner, id)).toEqual(neverChanged(id));
  });

  it("answers what a replace set, with updated_at; each environment has its own", async () => {
    const { owner, project } = await createOwnedProject();
    const staging = await createEnvironment(project.id);
    const settings = {
      required_approvals: 3,
      reviewer_role: "contributor" as const,
      prevent_self_review: false,
      wait_timer: 600,
      concurrency: "supersede" as const,
    };
    const put = await protect(owner, project.default_environment_id, settings);
    const read = await readProtection(owner, project.default_environment_id);
    expect(read).toEqual(put);
    expect(read).toEqual({
      environment_id: project.default_environment_id,
      ...settings,
      checks: [],
      locked: null,
      updated_at: expect.stringMatching(TS),
    });
    expect(await readProtection(owner, staging.id)).toEqual(neverChanged(staging.id));
  });

  it("shows the lock as { reason, account_id, at } while locked, and null again after the unlock", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    await lock(owner, environmentId, "Black Friday freeze");
    const locked = await readProtection(owner, environmentId);
    expect(locked.locked).toEqual({
      reason: "Black Friday freeze",
      account_id: owner.accountId,
      at: expect.stringMatching(TS),
    });
    expect(Object.keys(locked.locked ?? {}).sort()).toEqual(["account_id", "at", "reason"]);
    await unlock(owner, environmentId);
    const after = await readProtection(owner, environmentId);
    expect(after.locked).toBeNull();
    expect({ ...after, updated_at: null }).toEqual(neverChanged(environmentId));
    // The lock and the unlock were changes: updated_at is no longer null.
    expect(after.updated_at).toMatch(TS);
  });

  describe("ETag (§12, part four)", () => {
    it("a strong ETag, the same for every caller; If-None-Match with it, `*` or its weak form is 304", async () => {
      const w = await createOwnedProject();
      const { viewer } = await projectRoleCallers(w);
      const environmentId = w.project.default_environment_id;
      const etag = await expectRecordEtag(w.owner.key, protectionPath(environmentId));
      expect(etag).toMatch(STRONG_ETAG);
      const seen = await getProtection(viewer, environmentId);
      expect(seen.headers.get("etag")).toBe(etag);
    });

    it("the ETag changes with a replace, a lock and an unlock; the old one no longer answers 304", async () => {
      const { owner, project } = await createOwnedProject();
      const environmentId = project.default_environment_id;
      const tags = [(await getProtection(owner, environmentId)).headers.get("etag")];
      await protect(owner, environmentId, { required_approvals: 1 });
      tags.push((await getProtection(owner, environmentId)).headers.get("etag"));
      await lock(owner, environmentId);
      tags.push((await getProtection(owner, environmentId)).headers.get("etag"));
      await unlock(owner, environmentId);
      tags.push((await getProtection(owner, environmentId)).headers.get("etag"));
      for (const tag of tags) expect(tag).toMatch(STRONG_ETAG);
      expect(new Set(tags).size).toBe(tags.length);
      const stale = await getProtection(owner, environmentId, { "if-none-match": tags[0] ?? "" });
      expect(stale.status).toBe(200);
      expect(stale.headers.get("etag")).toBe(tags[3]);
    });
  });

  it("viewers, contributors, project owners and org admins read it; a member outside the project 404", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    const environmentId = w.project.default_environment_id;
    for (const caller of [w.owner, viewer, contributor, admin]) {
      const res = await getProtection(caller, environmentId);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual(neverChanged(environmentId));
    }
    expectError(await getProtection(outsider, environmentId), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "get",
      "/v1/environments/{environment_id}/protection",
      "getEnvironmentProtection",
      "environments:read",
    );
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    expectMissingScope(
      await getProtection(await keyWithout(owner, "environments:read"), environmentId),
      "environments:read",
    );
    expectMissingScope(
      await getProtection(await keyWith(owner, "deployments:read"), environmentId),
      "environments:read",
    );
    expectError(await getProtection(await keyForAnotherProject(owner), environmentId), 404, "not_found");
    const scoped = await getProtection(await keyWith(owner, "environments:read"), environmentId);
    expect(scoped.status, scoped.raw).toBe(200);
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it; UUID and hex forms of the ID are read", async () => {
    const { owner, project } = await createOwnedProject();
    expectError(await getProtection(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await getProtection(owner, "nope!"), 400, "bad_input", "environment_id");
    expectError(await getProtection(owner, "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c"), 404, "not_found");
    expect((await getProtection(owner, project.default_environment_id)).status).toBe(200);
  });

  runCommonRouteTests("GET /v1/environments/{environment_id}/protection", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: protectionPath(project.default_environment_id), caller: owner };
  });
});
