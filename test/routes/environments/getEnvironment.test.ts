/**
 * getEnvironment: GET /v1/environments/{environment_id} (API_CONTRACT §23: viewer,
 * `environments:read`; the record `{ id, project_id, name, created_at, updated_at,
 * current_deployment_id, config_pending }` with §12's strong ETag).
 */
import { describe, expect, it } from "vitest";
import { reportOk } from "../../helpers/engine";
import {
  ENVIRONMENT_FIELDS,
  environmentPath,
  expectMissingScope,
  expectPublished,
  expectRecordEtag,
  getEnvironment,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  pause,
  readEnvironment,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProjectWithStack,
  createStack,
  createDeployment as engineDeploys,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/environments/{environment_id}", () => {
  it("answers exactly the record's fields; the project's first environment is `production`", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await getEnvironment(owner, project.default_environment_id);
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(ENVIRONMENT_FIELDS);
    expect(res.body).toEqual({
      id: project.default_environment_id,
      project_id: project.id,
      name: "production",
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
      current_deployment_id: null,
      config_pending: false,
    });
    const staging = await createEnvironment(project.id, "Staging");
    expect(await readEnvironment(owner, staging.id)).toEqual({
      id: staging.id,
      project_id: project.id,
      name: "Staging",
      created_at: (staging as { created_at?: string }).created_at,
      updated_at: expect.stringMatching(TS),
      current_deployment_id: null,
      config_pending: false,
    });
  });

  it("has a strong ETag, the same for every caller; If-None-Match with it or `*` is 304", async () => {
    const w = await createOwnedProject();
    const { viewer } = await projectRoleCallers(w);
    const path = environmentPath(w.project.default_environment_id);
    const etag = await expectRecordEtag(w.owner.key, path);
    expect(await expectRecordEtag(viewer.key, path)).toBe(etag);
  });

  it("the ETag changes when current_deployment_id does", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const before = (await getEnvironment(owner, environmentId)).headers.get("etag");
    const d = await engineDeploys(environmentId, [stack.id]);
    await reportOk(d.id, { status: "in_progress" });
    await reportOk(d.id, { status: "succeeded" });
    const after = await getEnvironment(owner, environmentId);
    expect(after.body.current_deployment_id).toBe(d.id);
    expect(after.headers.get("etag")).toMatch(STRONG_ETAG);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  describe("current_deployment_id", () => {
    it("is null until a deployment succeeds: queued, in progress, failed and cancelled ones leave it null", async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const current = async () => (await readEnvironment(owner, environmentId)).current_deployment_id;
      expect(await current()).toBeNull();
      const failed = await engineDeploys(environmentId, [stack.id]);
      expect(await current()).toBeNull();
      await reportOk(failed.id, { status: "in_progress" });
      expect(await current()).toBeNull();
      await reportOk(failed.id, { status: "failed" });
      expect(await current()).toBeNull();
      const cancelled = await engineDeploys(environmentId, [stack.id]);
      await reportOk(cancelled.id, { status: "cancelled" });
      expect(await current()).toBeNull();
      const ok = await engineDeploys(environmentId, [stack.id]);
      await reportOk(ok.id, { status: "in_progress" });
      await reportOk(ok.id, { status: "succeeded" });
      expect(await current()).toBe(ok.id);
    });

    it("is the most recently finished succeeded deployment (by finished_at), not the latest created", async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const older = await engineDeploys(environmentId, [stack.id]);
      await pause();
      const newer = await engineDeploys(environmentId, [stack.id]);
      await reportOk(older.id, { status: "in_progress" });
      await reportOk(newer.id, { status: "in_progress" });
      // The newer one finishes first; the older one after it.
      const newerDone = await reportOk(newer.id, { status: "succeeded" });
      await pause();
      const olderDone = await reportOk(older.id, { status: "succeeded" });
      expect(
        olderDone.finished_at && newerDone.finished_at && olderDone.finished_at > newerDone.finished_at,
      ).toBe(true);
      expect((await readEnvironment(owner, environmentId)).current_deployment_id).toBe(older.id);
    });

    it("a later failed or cancelled deployment, or a success in another environment, does not change it", async () => {
      const { owner, project, environmentId, stack } = await createProjectWithStack();
      const good = await engineDeploys(environmentId, [stack.id]);
      await reportOk(good.id, { status: "in_progress" });
      await reportOk(good.id, { status: "succeeded" });
      await pause();
      const bad = await engineDeploys(environmentId, [stack.id]);
      await reportOk(bad.id, { status: "in_progress" });
      await reportOk(bad.id, { status: "failed" });
      const stopped = await engineDeploys(environmentId, [stack.id]);
      await reportOk(stopped.id, { status: "in_progress" });
      await reportOk(stopped.id, { status: "cancelled" });
      const staging = await createEnvironment(project.id);
      const stagingStack = await createStack(staging.id);
      const elsewhere = await engineDeploys(staging.id, [stagingStack.id]);
      await reportOk(elsewhere.id, { status: "in_progress" });
      await reportOk(elsewhere.id, { status: "succeeded" });
      // A queued and a running one, too.
      await engineDeploys(environmentId, [stack.id]);
      const running = await engineDeploys(environmentId, [stack.id]);
      await reportOk(running.id, { status: "in_progress" });
      expect((await readEnvironment(owner, environmentId)).current_deployment_id).toBe(good.id);
      expect((await readEnvironment(owner, staging.id)).current_deployment_id).toBe(elsewhere.id);
    });
  });

  it("config_pending is a boolean, false for an environment that never deployed", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await getEnvironment(owner, project.default_environment_id);
    expect(res.body.config_pending).toBe(false);
  });

  it("viewers and contributors read; a non-member of the project is 404; an org admin reads", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    const id = w.project.default_environment_id;
    const expected = await readEnvironment(w.owner, id);
    for (const caller of [viewer, contributor, admin]) {
      const res = await getEnvironment(caller, id);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual(expected);
    }
    expectError(await getEnvironment(outsider, id), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it", async () => {
    await expectPublished("get", "/v1/environments/{environment_id}", "getEnvironment", "environments:read");
    const { owner, project } = await createOwnedProject();
    const id = project.default_environment_id;
    expectMissingScope(
      await getEnvironment(await keyWithout(owner, "environments:read"), id),
      "environments:read",
    );
    expect((await getEnvironment(await keyWith(owner, "environments:read"), id)).status).toBe(200);
  });

  it("a key restricted to another project is 404", async () => {
    const { owner, project } = await createOwnedProject();
    expectError(
      await getEnvironment(await keyForAnotherProject(owner), project.default_environment_id),
      404,
      "not_found",
    );
  });

  it("an unknown environment is 404 (in every ID form); a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    for (const id of [
      UNKNOWN_ID,
      "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c",
      "0123456789abcdef0123456789abcdef",
    ]) {
      expectError(await getEnvironment(owner, id), 404, "not_found");
    }
    expectError(await getEnvironment(owner, "nope!"), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("GET /v1/environments/{environment_id}", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: environmentPath(project.default_environment_id), caller: owner };
  });
});
