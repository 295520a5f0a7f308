/**
 * listEnvironmentComponents: GET /v1/environments/{environment_id}/components (API_CONTRACT §23:
 * viewer, `environments:read`, an envelope of components `{ id, environment_id, name, created_at }`
 * under §4's rules).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  COMPONENT_FIELDS,
  type ComponentBody,
  type Envelope,
  environmentPath,
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  runListRules,
} from "../../helpers/environments";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createComponent,
  createEnvironment,
  createOwnedProject,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const componentsPath = (environmentId: string) => `${environmentPath(environmentId)}/components`;
const list = (key: string, environmentId: string, query = "") =>
  request<Envelope<ComponentBody>>("GET", `${componentsPath(environmentId)}${query}`, { key });

describe("GET /v1/environments/{environment_id}/components", () => {
  it("lists the environment's components with exactly the record's fields; not another environment's", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const api = await createComponent(environmentId, "api");
    const web = await createComponent(environmentId, "web");
    const other = await createEnvironment(project.id);
    await createComponent(other.id, "api");
    const res = await list(owner.key, environmentId, "?sort_by=created_at");
    expect(res.status, res.raw).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((c) => c.id).sort()).toEqual([api.id, web.id].sort());
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(COMPONENT_FIELDS);
      expect(item).toEqual({
        id: expect.stringMatching(NEW_ID),
        environment_id: environmentId,
        name: item.id === api.id ? "api" : "web",
        created_at: expect.stringMatching(TS),
      });
      // The list's item is the record a read answers.
      const read = await request("GET", `/v1/components/${item.id}`, { key: owner.key });
      expect(read.body).toEqual(item);
    }
  });

  it("an environment without components lists none", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await list(owner.key, project.default_environment_id);
    expect(res.body).toEqual({ data: [], has_more: false });
  });

  runListRules("components", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const items: Array<{ id: string; created_at: string }> = [];
    for (let i = 0; i < 23; i++) {
      const made = (await createComponent(environmentId)) as { id: string; created_at?: string };
      items.push({ id: made.id, created_at: made.created_at ?? "" });
    }
    return {
      key: owner.key,
      path: componentsPath(environmentId),
      items,
      add: async () => {
        await createComponent(environmentId);
      },
    };
  });

  it("viewers, contributors and org admins read; a non-member of the project is 404", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    const environmentId = w.project.default_environment_id;
    await createComponent(environmentId);
    const expected = (await list(w.owner.key, environmentId)).body;
    for (const caller of [viewer, contributor, admin]) {
      const res = await list(caller.key, environmentId);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual(expected);
    }
    expectError(await list(outsider.key, environmentId), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "get",
      "/v1/environments/{environment_id}/components",
      "listEnvironmentComponents",
      "environments:read",
    );
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    expectMissingScope(
      await list(await keyWithout(owner, "environments:read"), environmentId),
      "environments:read",
    );
    expect((await list(await keyWith(owner, "environments:read"), environmentId)).status).toBe(200);
    expectError(await list(await keyForAnotherProject(owner), environmentId), 404, "not_found");
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await list(owner.key, UNKNOWN_ID), 404, "not_found");
    expectError(await list(owner.key, "nope!"), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("GET /v1/environments/{environment_id}/components", async () => {
    const { owner, project } = await createOwnedProject();
    await createComponent(project.default_environment_id);
    return { method: "GET", path: componentsPath(project.default_environment_id), caller: owner };
  });
});
