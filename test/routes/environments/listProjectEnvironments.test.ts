/**
 * listProjectEnvironments: GET /v1/projects/{project_id}/environments (API_CONTRACT §23: viewer,
 * `environments:read`, an envelope of environments under §4's rules).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { deployIn } from "../../helpers/engine";
import {
  ENVIRONMENT_FIELDS,
  type Envelope,
  type EnvironmentBody,
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  projectEnvironmentsPath,
  readEnvironment,
  runListRules,
} from "../../helpers/environments";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createStack,
  projectRoleCallers,
  scopedKey,
} from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

const list = (key: string, projectId: string, query = "") =>
  request<Envelope<EnvironmentBody>>("GET", `${projectEnvironmentsPath(projectId)}${query}`, { key });

describe("GET /v1/projects/{project_id}/environments", () => {
  it("lists the project's environments, each with exactly the record's fields; not another project's", async () => {
    const { owner, project } = await createOwnedProject();
    const staging = await createEnvironment(project.id, "staging");
    const elsewhere = await createOwnedProject();
    await createEnvironment(elsewhere.project.id, "staging");

    const res = await list(owner.key, project.id, "?sort_by=created_at");
    expect(res.status, res.raw).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((e) => e.id).sort()).toEqual(
      [project.default_environment_id, staging.id].sort(),
    );
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(ENVIRONMENT_FIELDS);
      expect(item).toEqual({
        id: expect.stringMatching(NEW_ID),
        project_id: project.id,
        name: item.id === staging.id ? "staging" : "production",
        created_at: expect.stringMatching(TS),
        updated_at: expect.stringMatching(TS),
        current_deployment_id: null,
        config_pending: false,
      });
      // The list's item is the record a read answers.
      expect(await readEnvironment(owner, item.id)).toEqual(item);
    }
  });

  it("an item carries its current_deployment_id: the environment's succeeded deployment", async () => {
    const { owner, project } = await createOwnedProject();
    const stack = await createStack(project.default_environment_id);
    const succeeded = await deployIn(project.default_environment_id, [stack.id], "succeeded");
    const other = await createEnvironment(project.id);
    const res = await list(owner.key, project.id);
    const byId = Object.fromEntries(res.body.data.map((e) => [e.id, e]));
    expect(byId[project.default_environment_id]?.current_deployment_id).toBe(succeeded.id);
    expect(byId[other.id]?.current_deployment_id).toBeNull();
    expect(typeof byId[other.id]?.config_pending).toBe("boolean");
  });

  runListRules("environments", async () => {
    const { owner, project } = await createOwnedProject();
    const production = await readEnvironment(owner, project.default_environment_id);
    const items: Array<{ id: string; created_at: string }> = [production];
    for (let i = 0; i < 22; i++) {
      const made = (await createEnvironment(project.id)) as { id: string; created_at?: string };
      items.push({ id: made.id, created_at: made.created_at ?? "" });
    }
    return {
      key: owner.key,
      path: projectEnvironmentsPath(project.id),
      items,
      add: async () => {
        await createEnvironment(project.id);
      },
    };
  });

  it("viewers, contributors, project owners and org admins read; a non-member of the project is 404", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const admin = await createCaller(w.org, "admin");
    const expected = (await list(w.owner.key, w.project.id)).body;
    for (const caller of [viewer, contributor, projectOwner, admin]) {
      const res = await list(caller.key, w.project.id);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual(expected);
    }
    expectError(await list(outsider.key, w.project.id), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it", async () => {
    await expectPublished(
      "get",
      "/v1/projects/{project_id}/environments",
      "listProjectEnvironments",
      "environments:read",
    );
    const { owner, project } = await createOwnedProject();
    expectMissingScope(
      await list(await keyWithout(owner, "environments:read"), project.id),
      "environments:read",
    );
    const reader = await list(await keyWith(owner, "environments:read"), project.id);
    expect(reader.status, reader.raw).toBe(200);
    expect(reader.body.data).toHaveLength(1);
  });

  it("a key restricted to another project is 404; one restricted to this project reads", async () => {
    const { owner, project } = await createOwnedProject();
    expectError(await list(await keyForAnotherProject(owner), project.id), 404, "not_found");
    const mine = await scopedKey(owner, { project_ids: [project.id] });
    expect((await list(mine.key, project.id)).status).toBe(200);
  });

  it("an unknown project is 404; a malformed project ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await list(owner.key, UNKNOWN_ID), 404, "not_found");
    expectError(await list(owner.key, "not-an-id!"), 400, "bad_input", "project_id");
  });

  runCommonRouteTests("GET /v1/projects/{project_id}/environments", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: projectEnvironmentsPath(project.id), caller: owner };
  });
});
