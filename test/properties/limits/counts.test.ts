/**
 * API_CONTRACT §29: counts that free at once on a delete, limits that remove nothing when lowered,
 * and exactness under concurrency (of N simultaneous requests that each add one when k remain,
 * exactly min(N, k) succeed; `used` never exceeds `limit`), in either organization database.
 */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import { createOrgWithOwnerIn, ORG_DATABASES } from "../../helpers/databases";
import {
  createApiKey,
  createComponent,
  createEnvironment,
  createIntegration,
  createOrgWithOwner,
  createProject,
  createStack,
  deriveKey,
  revokeKey,
  unique,
} from "../../helpers/factories";
import { expectLimitRefusal, limitOf, setLimits, usedOf } from "../../helpers/limits";
import { createTrust } from "../../helpers/oidc";

const variable = (name: string) => ({ name, type: "string", value: "v" });

describe("a delete frees its count at once", () => {
  it("a project, with everything in it: its environments, their variables, its integrations", async () => {
    const { org, owner } = await createOrgWithOwner();
    const keep = await createProject(owner);
    const project = await createProject(owner);
    const environment = await createEnvironment(project.id);
    const component = await createComponent(environment.id);
    for (const path of [
      `/v1/environments/${project.default_environment_id}/variables`,
      `/v1/environments/${environment.id}/variables`,
      `/v1/components/${component.id}/variables`,
      `/v1/environments/${keep.default_environment_id}/variables`,
    ]) {
      expect((await request("POST", path, { key: owner.key, body: variable("A") })).status).toBe(201);
    }
    await createIntegration(project.id);
    await createIntegration(keep.id);
    expect(await usedOf(owner)).toMatchObject({
      projects: 2,
      environments: 3,
      variables: 4,
      integrations: 2,
    });
    await setLimits(org.id, { projects: 2 });
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    expect(await usedOf(owner)).toMatchObject({
      projects: 1,
      environments: 1,
      variables: 1,
      integrations: 1,
    });
    // The room it freed is there at once.
    expect(
      (await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } })).status,
    ).toBe(201);
  });

  it("an environment, with its own variables and its components'", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const environment = await createEnvironment(project.id);
    const component = await createComponent(environment.id);
    await request("POST", `/v1/environments/${environment.id}/variables`, {
      key: owner.key,
      body: variable("A"),
    });
    await request("POST", `/v1/components/${component.id}/variables`, {
      key: owner.key,
      body: variable("B"),
    });
    expect(await usedOf(owner)).toMatchObject({ environments: 2, variables: 2 });
    expect((await request("DELETE", `/v1/environments/${environment.id}`, { key: owner.key })).status).toBe(
      204,
    );
    expect(await usedOf(owner)).toMatchObject({ environments: 1, variables: 0 });
  });

  it("a variable, one by one or in a §18 change", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const scope = `/v1/environments/${project.default_environment_id}/variables`;
    const a = await request<{ id: string }>("POST", scope, { key: owner.key, body: variable("A") });
    await request("POST", scope, { key: owner.key, body: variable("B") });
    expect((await usedOf(owner)).variables).toBe(2);
    expect((await request("DELETE", `/v1/variables/${a.body.id}`, { key: owner.key })).status).toBe(204);
    expect((await usedOf(owner)).variables).toBe(1);
    expect((await request("PATCH", scope, { key: owner.key, body: { variables: { B: null } } })).status).toBe(
      200,
    );
    expect((await usedOf(owner)).variables).toBe(0);
  });

  it("a revoked key, and every key made from it; a deleted trust's keys", async () => {
    const { owner } = await createOrgWithOwner();
    const parent = await createApiKey(owner);
    await deriveKey(await deriveKey(parent));
    expect((await usedOf(owner)).api_keys).toBe(4);
    await revokeKey(parent.keyId);
    expect((await usedOf(owner)).api_keys).toBe(1);
    const trust = await createTrust(owner);
    expect((await request("DELETE", `/v1/oidc-trusts/${trust.id}`, { key: owner.key })).status).toBe(204);
    expect((await usedOf(owner)).api_keys).toBe(1);
  });
});

describe("a lower limit removes nothing", () => {
  it("what exists stays; only what would add is refused, until used is below the limit again", async () => {
    const { org, owner } = await createOrgWithOwner();
    const projects = [await createProject(owner), await createProject(owner), await createProject(owner)];
    await setLimits(org.id, { projects: 1 });
    expect(await limitOf(owner, "projects")).toEqual({ name: "projects", limit: 1, used: 3 });
    const list = await request<{ data: unknown[] }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toHaveLength(3);
    // Writes that add nothing still work.
    const [first, second, third] = projects;
    const renamed = await request("PUT", `/v1/projects/${first?.id}`, {
      key: owner.key,
      body: { name: unique("renamed"), default_environment_id: first?.default_environment_id },
    });
    expect(renamed.status, renamed.raw).toBe(200);
    expectLimitRefusal(
      await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } }),
      "projects",
    );
    await request("DELETE", `/v1/projects/${second?.id}`, { key: owner.key });
    expectLimitRefusal(
      await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } }),
      "projects",
    );
    await request("DELETE", `/v1/projects/${third?.id}`, { key: owner.key });
    await request("DELETE", `/v1/projects/${first?.id}`, { key: owner.key });
    expect(
      (await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } })).status,
    ).toBe(201);
    expect(await limitOf(owner, "projects")).toEqual({ name: "projects", limit: 1, used: 1 });
  });
});

describe("exact under concurrency", () => {
  for (const database of ORG_DATABASES) {
    it(`of 12 project creates at once with room for 5, exactly 5 succeed, the others 409 (${database})`, async () => {
      const { org, owner } = await createOrgWithOwnerIn(database);
      await setLimits(org.id, { projects: 5 });
      const results = await Promise.all(
        Array.from({ length: 12 }, () =>
          request("POST", "/v1/projects", { key: owner.key, body: { name: unique("race") } }),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(5);
      for (const refused of results.filter((r) => r.status !== 201)) expectLimitRefusal(refused, "projects");
      expect(await limitOf(owner, "projects")).toEqual({ name: "projects", limit: 5, used: 5 });
    });

    it(`of 15 variable, key and deployment creates at once with room for 4 each, exactly 4 each (${database})`, async () => {
      const { org, owner } = await createOrgWithOwnerIn(database);
      const project = await createProject(owner);
      const env = project.default_environment_id;
      const stack = await createStack(env);
      await setLimits(org.id, { variables: 4, api_keys: 5, deployments_per_day: 4 });
      const data = { patch: [{ op: "add", path: "/x", value: 1 }] };
      const [variables, keys, deployments] = await Promise.all([
        Promise.all(
          Array.from({ length: 15 }, (_, i) =>
            request("POST", `/v1/environments/${env}/variables`, { key: owner.key, body: variable(`V${i}`) }),
          ),
        ),
        Promise.all(
          Array.from({ length: 15 }, () => request("POST", "/v1/api-keys", { key: owner.key, body: {} })),
        ),
        Promise.all(
          Array.from({ length: 15 }, () =>
            internal("POST", `/environments/${env}/deployments`, { stack_ids: [stack.id], data }),
          ),
        ),
      ]);
      for (const [name, results] of [
        ["variables", variables],
        ["api_keys", keys],
        ["deployments_per_day", deployments],
      ] as const) {
        expect(
          results.filter((r) => r.status === 201),
          name,
        ).toHaveLength(4);
        for (const refused of results.filter((r) => r.status !== 201)) expectLimitRefusal(refused, name);
      }
      expect(await usedOf(owner)).toMatchObject({ variables: 4, api_keys: 5, deployments_per_day: 4 });
    });
  }
});
