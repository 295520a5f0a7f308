/**
 * listEnvironmentStacks: GET /v1/environments/{environment_id}/stacks (API_CONTRACT §23: viewer,
 * `environments:read`, an envelope of stacks `{ id, environment_id, name, template_id, created_at }`
 * under §4's rules).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  type Envelope,
  environmentPath,
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  runListRules,
  STACK_FIELDS,
  type StackBody,
} from "../../helpers/environments";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createEnvironment,
  createOwnedProject,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const stacksPath = (environmentId: string) => `${environmentPath(environmentId)}/stacks`;
const list = (key: string, environmentId: string, query = "") =>
  request<Envelope<StackBody>>("GET", `${stacksPath(environmentId)}${query}`, { key });

describe("GET /v1/environments/{environment_id}/stacks", () => {
  it("lists the environment's stacks with exactly the record's fields; not another environment's", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const named = await createStack(environmentId, { name: "network", template_id: "vpc-template v2" });
    const generated = await createStack(environmentId, { name: "database" });
    const other = await createEnvironment(project.id);
    await createStack(other.id, { name: "network", template_id: "vpc-template v2" });
    const res = await list(owner.key, environmentId, "?sort_by=created_at");
    expect(res.status, res.raw).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((s) => s.id).sort()).toEqual([named.id, generated.id].sort());
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(STACK_FIELDS);
      expect(item).toEqual({
        id: expect.stringMatching(NEW_ID),
        environment_id: environmentId,
        name: item.id === named.id ? "network" : "database",
        template_id: item.id === named.id ? "vpc-template v2" : generated.template_id,
        created_at: expect.stringMatching(TS),
      });
      const read = await request("GET", `/v1/stacks/${item.id}`, { key: owner.key });
      expect(read.body).toEqual(item);
    }
  });

  it("an environment without stacks lists none", async () => {
    const { owner, project } = await createOwnedProject();
    expect((await list(owner.key, project.default_environment_id)).body).toEqual({
      data: [],
      has_more: false,
    });
  });

  runListRules("stacks", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const items: Array<{ id: string; created_at: string }> = [];
    for (let i = 0; i < 23; i++) {
      const made = (await createStack(environmentId)) as { id: string; created_at?: string };
      items.push({ id: made.id, created_at: made.created_at ?? "" });
    }
    return {
      key: owner.key,
      path: stacksPath(environmentId),
      items,
      add: async () => {
        await createStack(environmentId);
      },
    };
  });

  it("viewers, contributors and org admins read; a non-member of the project is 404", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    const environmentId = w.project.default_environment_id;
    await createStack(environmentId);
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
      "/v1/environments/{environment_id}/stacks",
      "listEnvironmentStacks",
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

  runCommonRouteTests("GET /v1/environments/{environment_id}/stacks", async () => {
    const { owner, project } = await createOwnedProject();
    await createStack(project.default_environment_id);
    return { method: "GET", path: stacksPath(project.default_environment_id), caller: owner };
  });
});
