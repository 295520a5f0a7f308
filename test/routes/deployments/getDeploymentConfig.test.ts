/**
 * getDeploymentConfig: GET /v1/deployments/{id}/config (API_CONTRACT §24), the configuration a
 * deployment runs with: names and types of each scope exactly as it held them right after the
 * versions the deployment recorded, never a value.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  allKeys,
  byCodeUnits,
  change,
  configOk,
  configWorld,
  getConfig,
  withoutConfig,
} from "../../helpers/deployment-config";
import { PATCH } from "../../helpers/engine";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import {
  createApiKey,
  createComponent,
  createDeployment,
  createProject,
  createProjectWithStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { environmentPath, type ListBody } from "../../helpers/variables";

describe("GET /v1/deployments/{id}/config", () => {
  it("names and types of each scope exactly as held right after the recorded versions, sorted by name; later changes do not show", async () => {
    const w = await configWorld();
    const [api, worker] = w.components;
    const [apiPath, workerPath] = w.componentPaths;
    // Environment: version 1 makes four names, version 2 deletes one and adds another.
    await change(w.owner, w.envPath, {
      CHARLIE: { type: "secret", value: "charlie-secret-value" },
      ALPHA: { type: "string", value: "alpha-plain-value" },
      BRAVO: { type: "secure_string", value: "bravo-secure-value" },
      ECHO: { type: "string", value: "echo-value" },
    });
    await change(w.owner, w.envPath, {
      ALPHA: null,
      DELTA: { type: "string", value: "delta-value" },
    });
    await change(w.owner, apiPath as string, { ZULU: { type: "secret", value: "zulu-secret-value" } });
    const d = await createDeployment(w.environmentId, [w.stack.id]);

    // After the deployment: a new name, a deletion, a type change in every scope.
    await change(w.owner, w.envPath, {
      FOXTROT: { type: "string", value: "new" },
      CHARLIE: null,
      BRAVO: { type: "string", value: "now-plain" },
    });
    await change(w.owner, apiPath as string, { ZULU: null, YANKEE: { type: "string", value: "y" } });
    await change(w.owner, workerPath as string, { LATER: { type: "secret", value: "later" } });
    await createComponent(w.environmentId, "added-later");

    const res = await getConfig(w.owner, d.id);
    expect(res.status, res.raw).toBe(200);
    const components = [
      { id: api?.id as string, name: "api", version: 1, variables: [{ name: "ZULU", type: "secret" }] },
      { id: worker?.id as string, name: "worker", version: 0, variables: [] },
    ].sort((a, b) => byCodeUnits(a.id, b.id));
    expect(res.body).toEqual({
      deployment_id: d.id,
      environment: {
        id: w.environmentId,
        version: 2,
        variables: [
          { name: "BRAVO", type: "secure_string" },
          { name: "CHARLIE", type: "secret" },
          { name: "DELTA", type: "string" },
          { name: "ECHO", type: "string" },
        ],
      },
      components,
    });
    // Names and types only: no value anywhere, by key or by content.
    expect(allKeys(res.body)).not.toContain("value");
    for (const plaintext of [
      "charlie-secret-value",
      "bravo-secure-value",
      "zulu-secret-value",
      "echo-value",
    ]) {
      expect(res.raw).not.toContain(plaintext);
    }
    // The versions are the ones the deployment record carries.
    expect(res.body.environment.version).toBe(d.config?.environment_version);
    expect(res.body.components.map((c) => ({ component_id: c.id, version: c.version }))).toEqual(
      d.config?.components,
    );
  });

  it("is the state a §18 restore to that version brings back", async () => {
    const w = await configWorld();
    await change(w.owner, w.envPath, {
      ONE: { type: "secret", value: "1" },
      TWO: { type: "string", value: "2" },
      THREE: { type: "secure_string", value: "3" },
    });
    await change(w.owner, w.envPath, { TWO: null, FOUR: { type: "string", value: "4" } });
    const d = await createDeployment(w.environmentId, [w.stack.id]);
    await change(w.owner, w.envPath, {
      ONE: { type: "string", value: "one" },
      FOUR: null,
      FIVE: { type: "secret", value: "5" },
    });
    const config = await configOk(w.owner, d.id);
    expect(config.environment.version).toBe(2);
    const restored = await request("POST", `${w.envPath}/versions/2/restore`, { key: w.owner.key });
    expect(restored.status, restored.raw).toBe(200);
    const list = await request<ListBody>("GET", `${w.envPath}?limit=240`, { key: w.owner.key });
    const now = list.body.data
      .map((v) => ({ name: v.name, type: v.type }))
      .sort((a, b) => byCodeUnits(a.name, b.name));
    expect(config.environment.variables).toEqual(now);
    expect(config.environment.variables.map((v) => v.name)).toEqual(["FOUR", "ONE", "THREE"]);
  });

  it("a scope that never changed is at version 0 with no variables; an environment without components has none", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    expect(await configOk(owner, d.id)).toEqual({
      deployment_id: d.id,
      environment: { id: environmentId, version: 0, variables: [] },
      components: [],
    });
  });

  it("a single-variable create (§3) is a version the configuration reads too", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await request("POST", environmentPath(environmentId), {
      key: owner.key,
      body: { name: "SOLO", type: "secure_string", value: "solo" },
    });
    expect(created.status, created.raw).toBe(201);
    const d = await createDeployment(environmentId, [stack.id]);
    expect((await configOk(owner, d.id)).environment).toEqual({
      id: environmentId,
      version: 1,
      variables: [{ name: "SOLO", type: "secure_string" }],
    });
  });

  it("404 not_found when the deployment's config is null (made before configurations were recorded)", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    await withoutConfig(d.id);
    const record = await request<{ config: unknown }>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(record.body.config).toBeNull();
    expectError(await getConfig(owner, d.id), 404, "not_found");
  });

  it("an unknown deployment is 404; an ID that fits no form is 400", async () => {
    const { owner } = await createProjectWithStack();
    expectError(await getConfig(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await getConfig(owner, "not-an-id"), 400, "bad_input");
  });

  it("viewers and contributors read it; an org member outside the project gets 404", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const { viewer, contributor, outsider } = await projectRoleCallers({ org, owner, project });
    await change(owner, environmentPath(environmentId), { SEEN: { type: "secret", value: "s" } });
    const d = await createDeployment(environmentId, [stack.id]);
    const expected = await configOk(owner, d.id);
    expect(await configOk(viewer, d.id)).toEqual(expected);
    expect(await configOk(contributor, d.id)).toEqual(expected);
    expectError(await getConfig(outsider, d.id), 404, "not_found");
  });

  it("needs the scope deployments:read", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    const reader = await createApiKey(owner, { scopes: ["deployments:read"] });
    expect((await getConfig(reader, d.id)).status).toBe(200);
    for (const scopes of [["variables:read"], ["deployments:write", "environments:read"]]) {
      const other = await createApiKey(owner, { scopes });
      const res = await getConfig(other, d.id);
      expectError(res, 403, "forbidden");
      expect(res.body.message).toContain("`deployments:read`");
    }
  });

  it("a key restricted to another project gets 404", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id], { patch: PATCH });
    const elsewhere = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [elsewhere.id] });
    expectError(await getConfig(restricted, d.id), 404, "not_found");
  });

  runCommonRouteTests("GET /v1/deployments/{id}/config", async () => {
    const s = await createProjectWithStack();
    const d = await createDeployment(s.environmentId, [s.stack.id]);
    return { method: "GET", path: `/v1/deployments/${d.id}/config`, caller: s.owner };
  });
});
