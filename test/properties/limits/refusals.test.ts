/**
 * API_CONTRACT §29: a request that would make a count exceed its limit is `409 conflict`, whatever
 * its route (public or internal), names the limit with `cause [{path: "limits.<name>"}]`, and
 * changes nothing. One test per route that adds to a count, each at a limit the operator set, each
 * checking that the refused request left the counts (and the records) as they were.
 */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import {
  type Caller,
  createApiKey,
  createComponent,
  createDeployment,
  createIntegration,
  createOrgWithOwner,
  createProject,
  createStack,
  deriveKey,
  unique,
} from "../../helpers/factories";
import { expectKeyCreatesRefused, expectLimitRefusal, setLimits, usedOf } from "../../helpers/limits";
import { claimsFor, exchange, signToken, trustAndToken } from "../../helpers/oidc";
import { applyChanges, restore } from "../../helpers/variable-sets";

const variable = (name: string) => ({ name, type: "string", value: "v" });

async function createVariable(caller: Caller, scopePath: string, name: string) {
  return request("POST", `${scopePath}/variables`, { key: caller.key, body: variable(name) });
}

describe("a request past a limit is 409 naming it, and changes nothing", () => {
  it("projects: a project create; its default environment counts against environments", async () => {
    const { org, owner } = await createOrgWithOwner();
    await createProject(owner);
    await setLimits(org.id, { projects: 1 });
    const before = await usedOf(owner);
    expectLimitRefusal(
      await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } }),
      "projects",
    );
    await setLimits(org.id, { projects: 10, environments: 1 });
    expectLimitRefusal(
      await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("p") } }),
      "environments",
    );
    expect(await usedOf(owner)).toEqual(before);
    const list = await request<{ data: unknown[] }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toHaveLength(1);
  });

  it("environments: the public create, the internal create", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    await setLimits(org.id, { environments: 1 });
    expectLimitRefusal(
      await request("POST", `/v1/projects/${project.id}/environments`, {
        key: owner.key,
        body: { name: "staging" },
      }),
      "environments",
    );
    expectLimitRefusal(
      await internal("POST", `/projects/${project.id}/environments`, { name: "qa" }),
      "environments",
    );
    expect((await usedOf(owner)).environments).toBe(1);
  });

  it("variables: copy_variables_from counts every name it copies, and is refused whole", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const source = `/v1/environments/${project.default_environment_id}`;
    for (const name of ["A", "B", "C"]) expect((await createVariable(owner, source, name)).status).toBe(201);
    await setLimits(org.id, { variables: 5 });
    const res = await request("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: "staging", copy_variables_from: project.default_environment_id },
    });
    expectLimitRefusal(res, "variables");
    expect(await usedOf(owner)).toMatchObject({ environments: 1, variables: 3 });
    await setLimits(org.id, { variables: 6 });
    const copied = await request("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: "staging", copy_variables_from: project.default_environment_id },
    });
    expect(copied.status, copied.raw).toBe(201);
    expect((await usedOf(owner)).variables).toBe(6);
  });

  it("variables: an environment's and a component's create", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const component = await createComponent(project.default_environment_id);
    await setLimits(org.id, { variables: 1 });
    expect(
      (await createVariable(owner, `/v1/environments/${project.default_environment_id}`, "A")).status,
    ).toBe(201);
    expectLimitRefusal(
      await createVariable(owner, `/v1/environments/${project.default_environment_id}`, "B"),
      "variables",
    );
    expectLimitRefusal(await createVariable(owner, `/v1/components/${component.id}`, "C"), "variables");
    expect((await usedOf(owner)).variables).toBe(1);
  });

  it("variables: a §18 change counts the names it adds net of those it deletes; refused whole, its dry run too", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const scope = `/v1/environments/${project.default_environment_id}/variables`;
    const set = (variables: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      applyChanges(owner, scope, { variables, ...extra });
    expect((await set({ A: { type: "string", value: "1" }, B: { type: "string", value: "2" } })).status).toBe(
      200,
    );
    await setLimits(org.id, { variables: 3 });
    const two = { C: { type: "string", value: "3" }, D: { type: "string", value: "4" } };
    expectLimitRefusal(await set(two), "variables");
    expectLimitRefusal(await set(two, { dry_run: true }), "variables");
    // Net of one deletion, the same two fit: 2 - 1 + 2 = 3.
    const net = await set({ ...two, A: null });
    expect(net.status, net.raw).toBe(200);
    expect((await usedOf(owner)).variables).toBe(3);
    // A replace that ends with as many names as it starts with adds nothing.
    const replaced = await set(
      {
        X: { type: "string", value: "x" },
        Y: { type: "string", value: "y" },
        Z: { type: "string", value: "z" },
      },
      { mode: "replace" },
    );
    expect(replaced.status, replaced.raw).toBe(200);
    expect((await usedOf(owner)).variables).toBe(3);
  });

  it("variables: over a lowered limit, a §18 change or restore that adds no more names than it deletes passes, its dry run alike; one that adds is refused, its dry run alike", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const scope = `/v1/environments/${project.default_environment_id}/variables`;
    const value = (v: string) => ({ type: "string", value: v });
    const set = (variables: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      applyChanges(owner, scope, { variables, ...extra });
    expect((await set({ A: value("a"), B: value("b"), C: value("c"), D: value("d") })).status).toBe(200); // version 1
    await setLimits(org.id, { variables: 1 });
    const both = async (variables: Record<string, unknown>, status: number) => {
      const dry = await set(variables, { dry_run: true });
      expect(dry.status, dry.raw).toBe(status);
      const real = await set(variables);
      expect(real.status, real.raw).toBe(status);
      if (status === 409) expectLimitRefusal(real, "variables");
    };
    // Net -1: two deleted, one added.
    await both({ A: null, B: null, N1: value("1") }, 200);
    expect((await usedOf(owner)).variables).toBe(3);
    // Net 0: one deleted, one added.
    await both({ C: null, N2: value("2") }, 200);
    expect((await usedOf(owner)).variables).toBe(3);
    // Net +1: refused whole, the count unchanged.
    await both({ D: null, N3: value("3"), N4: value("4") }, 409);
    expect((await usedOf(owner)).variables).toBe(3);
    // A restore of version 2 ({C, D, N1}) over version 3 ({D, N1, N2}): one added, one deleted: passes.
    const dryRestore = await restore(owner, scope, 2, { dry_run: true });
    expect(dryRestore.status, dryRestore.raw).toBe(200);
    const restored = await restore(owner, scope, 2);
    expect(restored.status, restored.raw).toBe(200);
    expect((await usedOf(owner)).variables).toBe(3);
    // A restore of version 1 ({A, B, C, D}) over {C, D, N1}: two added, one deleted: net +1, refused.
    expectLimitRefusal(await restore(owner, scope, 1, { dry_run: true }), "variables");
    expectLimitRefusal(await restore(owner, scope, 1), "variables");
    expect((await usedOf(owner)).variables).toBe(3);
  });

  it("variables: a restore counts net too, refused whole, its dry run too", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const scope = `/v1/environments/${project.default_environment_id}/variables`;
    const four = Object.fromEntries(["A", "B", "C", "D"].map((n) => [n, { type: "string", value: n }]));
    expect((await applyChanges(owner, scope, { variables: four })).status).toBe(200); // version 1
    expect(
      (
        await applyChanges(owner, scope, {
          variables: { X: { type: "string", value: "x" } },
          mode: "replace",
        })
      ).status,
    ).toBe(200); // version 2
    await setLimits(org.id, { variables: 3 });
    // Back to version 1: four names, one deleted: net +3 on 1 = 4 > 3.
    expectLimitRefusal(await restore(owner, scope, 1), "variables");
    expectLimitRefusal(await restore(owner, scope, 1, { dry_run: true }), "variables");
    const versions = await request<{ data: unknown[] }>("GET", `${scope}/versions`, { key: owner.key });
    expect(versions.body.data).toHaveLength(2);
    await setLimits(org.id, { variables: 4 });
    expect((await restore(owner, scope, 1)).status).toBe(200);
    expect((await usedOf(owner)).variables).toBe(4);
  });

  it("api_keys: the internal create, a key made by a key, an OpenID Connect exchange", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { trust, issuer } = await trustAndToken(owner);
    await setLimits(org.id, { api_keys: 1 });
    await expectKeyCreatesRefused(org.id, owner);
    const token = await signToken(claimsFor(issuer, trust.audience));
    expectLimitRefusal(await exchange(trust.id, token), "api_keys");
    expect((await usedOf(owner)).api_keys).toBe(1);
    // The refused exchange spent nothing: the same token exchanges once there is room.
    await setLimits(org.id, { api_keys: 2 });
    const ok = await exchange(trust.id, token);
    expect(ok.status, ok.raw).toBe(201);
  });

  it("integrations: the public create, the internal create", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    await createIntegration(project.id);
    await setLimits(org.id, { integrations: 1 });
    expectLimitRefusal(
      await request("POST", `/v1/projects/${project.id}/notification-integrations`, {
        key: owner.key,
        body: { type: "webhook", url: "https://hooks.example.com/x", configuration: {} },
      }),
      "integrations",
    );
    expectLimitRefusal(
      await internal("POST", `/projects/${project.id}/notification-integrations`, {
        type: "webhook",
        url: "https://hooks.example.com/y",
        configuration: {},
      }),
      "integrations",
    );
    expect((await usedOf(owner)).integrations).toBe(1);
  });

  it("deployments_per_day: the public and internal creates, a redeploy, a promotion and its dry run", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const env = project.default_environment_id;
    const stack = await createStack(env, { template_id: "tpl" });
    const staging = await request<{ id: string }>("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: "staging" },
    });
    await createStack(staging.body.id, { template_id: "tpl" });
    const first = await createDeployment(env, [stack.id]);
    await internal("PATCH", `/deployments/${first.id}`, { status: "in_progress" });
    await internal("PATCH", `/deployments/${first.id}`, { status: "succeeded" });
    await setLimits(org.id, { deployments_per_day: 1 });
    const data = { patch: [{ op: "add", path: "/x", value: 1 }] };
    expectLimitRefusal(
      await request("POST", `/v1/environments/${env}/deployments`, { key: owner.key, body: { data } }),
      "deployments_per_day",
    );
    expectLimitRefusal(
      await internal("POST", `/environments/${env}/deployments`, { stack_ids: [stack.id], data }),
      "deployments_per_day",
    );
    expectLimitRefusal(
      await request("POST", `/v1/deployments/${first.id}/redeploy`, { key: owner.key }),
      "deployments_per_day",
    );
    for (const dry_run of [false, true]) {
      expectLimitRefusal(
        await request("POST", `/v1/deployments/${first.id}/promote`, {
          key: owner.key,
          body: { environment_id: staging.body.id, dry_run },
        }),
        "deployments_per_day",
      );
    }
    const list = await request<{ data: unknown[] }>("GET", `/v1/environments/${env}/deployments`, {
      key: owner.key,
    });
    expect(list.body.data).toHaveLength(1);
    expect((await usedOf(owner)).deployments_per_day).toBe(1);
  });

  it("a limit of 0 refuses the first", async () => {
    const { org, owner } = await createOrgWithOwner();
    await setLimits(org.id, { projects: 0 });
    expectLimitRefusal(
      await request("POST", "/v1/projects", { key: owner.key, body: { name: "p" } }),
      "projects",
    );
  });

  it("the refusal is kept for its Idempotency-Key like any answer below 500", async () => {
    const { org, owner } = await createOrgWithOwner();
    await setLimits(org.id, { projects: 0 });
    const headers = { "idempotency-key": unique("idem") };
    const body = { name: unique("p") };
    const first = await request("POST", "/v1/projects", { key: owner.key, body, headers });
    expectLimitRefusal(first, "projects");
    await setLimits(org.id, { projects: 1 });
    const again = await request("POST", "/v1/projects", { key: owner.key, body, headers });
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("a key of another account counts too: the limit is the organization's", async () => {
    const { org, owner } = await createOrgWithOwner();
    const other = await createApiKey(owner);
    await setLimits(org.id, { api_keys: 2 });
    expectLimitRefusal(await request("POST", "/v1/api-keys", { key: other.key, body: {} }), "api_keys");
    await expect(deriveKey(owner)).rejects.toThrow(/409/);
  });
});
