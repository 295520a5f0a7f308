/**
 * The configuration each deployment runs with (API_CONTRACT §24), across routes: every create
 * records `config` and `created_by`; a variable change racing a create is wholly in it or wholly
 * not; the environment's `config_pending`; a redeploy's `config` (`pinned` | `current`).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { request } from "../helpers/api";
import {
  byCodeUnits,
  type Changes,
  change,
  configOk,
  configPending,
  configWorld,
  createDeploymentApi,
  engineConfigOk,
  redeploy,
  stateOf,
  succeed,
  succeeded,
  withoutConfig,
} from "../helpers/deployment-config";
import { PATCH, reportOk } from "../helpers/engine";
import { expectError } from "../helpers/expect";
import {
  createComponent,
  createDeployment,
  createProjectWithStack,
  deriveKey,
  projectRoleCallers,
} from "../helpers/factories";
import type { VersionList } from "../helpers/variable-sets";
import { componentPath, environmentPath } from "../helpers/variables";

type Config = NonNullable<DeploymentRecord["config"]>;

/** The deployments of an environment, read straight from D1 (a refusal makes none). */
async function deploymentCount(environmentId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM deployments WHERE environment_id = ?")
    .bind(environmentId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The deployment as GET /v1/deployments/{id} reads it. */
async function readDeployment(key: string, id: string): Promise<DeploymentRecord> {
  const res = await request<DeploymentRecord>("GET", `/v1/deployments/${id}`, { key });
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

const sortedPins = (pins: Array<{ component_id: string; version: number }>) =>
  [...pins].sort((a, b) => byCodeUnits(a.component_id, b.component_id));

describe("every deployment records config: the §18 versions of its scopes when it is created", () => {
  it("before any change: the environment at 0 and each component (sorted by id) at 0, by every route", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const comps = [];
    for (let i = 0; i < 3; i++) comps.push(await createComponent(environmentId, `c${i}`));
    const expected: Config = {
      environment_version: 0,
      components: sortedPins(comps.map((c) => ({ component_id: c.id, version: 0 }))),
    };
    const internal = await createDeployment(environmentId, [stack.id]);
    expect(internal.config).toEqual(expected);
    const api = await createDeploymentApi(owner, environmentId, { data: { patch: PATCH } });
    expect(api.status, api.raw).toBe(201);
    expect(api.body.config).toEqual(expected);
    const again = await redeploy(owner, internal.id);
    expect(again.status, again.raw).toBe(201);
    expect(again.body.config).toEqual(expected);
    const listed = await request<{ data: DeploymentRecord[] }>(
      "GET",
      `/v1/environments/${environmentId}/deployments?limit=240`,
      { key: owner.key },
    );
    for (const d of [internal, api.body, again.body]) {
      expect((await readDeployment(owner.key, d.id)).config).toEqual(expected);
      expect(listed.body.data.find((l) => l.id === d.id)?.config).toEqual(expected);
    }
  });

  it("after changes: each scope's latest version, a component without variables at 0, by every route", async () => {
    const w = await configWorld();
    const [api, worker] = w.components;
    const third = await createComponent(w.environmentId, "third");
    await change(w.owner, w.envPath, { A: { type: "secret", value: "1" } });
    await change(w.owner, w.envPath, { B: { type: "string", value: "2" } });
    await change(w.owner, w.componentPaths[0] as string, { C: { type: "secure_string", value: "3" } });
    for (let i = 0; i < 3; i++) {
      await change(w.owner, componentPath(third.id), { D: { type: "string", value: `d${i}` } });
    }
    // A single-variable create (§3) is a version too.
    const single = await request("POST", w.envPath, {
      key: w.owner.key,
      body: { name: "E", type: "secret", value: "e" },
    });
    expect(single.status, single.raw).toBe(201);
    const expected: Config = {
      environment_version: 3,
      components: sortedPins([
        { component_id: api?.id as string, version: 1 },
        { component_id: worker?.id as string, version: 0 },
        { component_id: third.id, version: 3 },
      ]),
    };
    const internal = await createDeployment(w.environmentId, [w.stack.id]);
    const made = await createDeploymentApi(w.owner, w.environmentId, { data: { patch: PATCH } });
    const current = await redeploy(w.owner, internal.id, { config: "current" });
    for (const d of [internal, made.body, current.body]) {
      expect(d.config).toEqual(expected);
      expect((await readDeployment(w.owner.key, d.id)).config).toEqual(expected);
    }
    // Later changes do not touch what a deployment recorded.
    await change(w.owner, w.envPath, { A: null });
    expect((await readDeployment(w.owner.key, internal.id)).config).toEqual(expected);
  });

  it("an environment created with copy_variables_from starts at version 1, and so do its deployments' configs", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    await change(owner, environmentPath(environmentId), { COPIED: { type: "secret", value: "c" } });
    const made = await request<{ id: string }>("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: "staging-copy", copy_variables_from: environmentId },
    });
    expect(made.status, made.raw).toBe(201);
    const stackRes = await request<{ id: string }>(
      "POST",
      `/internal/v1/environments/${made.body.id}/stacks`,
      {
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
        body: { name: "s" },
      },
    );
    const d = await createDeployment(made.body.id, [stackRes.body.id]);
    expect(d.config).toEqual({ environment_version: 1, components: [] });
    expect((await engineConfigOk(d.id)).environment.variables).toEqual([
      { name: "COPIED", type: "secret", value: "c" },
    ]);
  });
});

describe("created_by: the account of the API key that created it, null for the internal API", () => {
  it("internal create null; /v1 create and redeploy the caller's account", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const { contributor } = await projectRoleCallers({ org, owner, project });
    const internal = await createDeployment(environmentId, [stack.id]);
    expect(internal.created_by).toBeNull();
    expect((await readDeployment(owner.key, internal.id)).created_by).toBeNull();

    const byContributor = await createDeploymentApi(contributor, environmentId, { data: { patch: PATCH } });
    expect(byContributor.status, byContributor.raw).toBe(201);
    expect(byContributor.body.created_by).toBe(contributor.accountId);

    // A key made from the owner's key acts as the owner's account.
    const derived = await deriveKey(owner, { scopes: ["deployments:write", "deployments:read"] });
    const byDerived = await createDeploymentApi(derived, environmentId, { data: { patch: PATCH } });
    expect(byDerived.status, byDerived.raw).toBe(201);
    expect(byDerived.body.created_by).toBe(owner.accountId);

    const again = await redeploy(contributor, internal.id);
    expect(again.status, again.raw).toBe(201);
    expect(again.body.created_by).toBe(contributor.accountId);
    const ofRedeploy = await redeploy(owner, byContributor.body.id);
    expect(ofRedeploy.body.created_by).toBe(owner.accountId);
    for (const d of [byContributor.body, byDerived.body, again.body, ofRedeploy.body]) {
      expect((await readDeployment(owner.key, d.id)).created_by).toBe(d.created_by);
    }
  });
});

describe("a variable change racing a create is wholly in it or wholly not", () => {
  it("each deployment's versions and values are exactly its scopes' state right after those versions", async () => {
    const w = await configWorld();
    const [api] = w.components;
    const apiPath = w.componentPaths[0] as string;
    const types = ["secret", "secure_string", "string"];
    const names = ["ALPHA", "BRAVO", "CHARLIE", "DELTA"];
    // Request i of a scope: a subset of the names, each with a value only it writes; every third
    // request replaces the whole scope (the names it leaves out are deleted).
    const bodyOf = (scope: string, i: number) => {
      const variables: Changes = {};
      for (const [n, name] of names.entries()) {
        if ((i + n) % 3 === 2) continue;
        variables[name] = { type: types[(i + n) % 3] as string, value: `${scope}-${name}-${i}` };
      }
      return { variables, mode: i % 3 === 0 ? "replace" : "merge" };
    };
    const tag = crypto.randomUUID();
    const patchOf = (scope: string, base: string, i: number) =>
      request<{ version: number }>("PATCH", base, {
        key: w.owner.key,
        body: bodyOf(scope, i),
        headers: { "x-request-id": `${tag}-${scope}-${i}` },
      });
    const changeTasks = [
      ...Array.from({ length: 10 }, (_, i) => () => patchOf("env", w.envPath, i)),
      ...Array.from({ length: 6 }, (_, i) => () => patchOf("api", apiPath, i)),
    ];
    const createOne = async (i: number): Promise<DeploymentRecord> => {
      if (i % 2 === 0) return createDeployment(w.environmentId, [w.stack.id]);
      const r = await createDeploymentApi(w.owner, w.environmentId, { data: { patch: PATCH } });
      expect(r.status, r.raw).toBe(201);
      return r.body;
    };
    // Every change started at once; meanwhile two creators make deployment after deployment, a
    // few milliseconds apart, until the last change is answered (and one more each).
    let settled = false;
    let made = 0;
    const patching = Promise.all(changeTasks.map((t) => t())).finally(() => {
      settled = true;
    });
    const creator = async () => {
      const out: DeploymentRecord[] = [];
      while (!settled && made < 60) {
        out.push(await createOne(made++));
        await new Promise((r) => setTimeout(r, 15));
      }
      out.push(await createOne(made++));
      return out;
    };
    const [patched, first, second] = await Promise.all([patching, creator(), creator()]);
    const deployments = [...first, ...second];
    for (const p of patched) expect(p.status, p.raw).toBe(200);

    /** The scope's state right after each version, from its version records (which request made it). */
    const statesOf = async (scope: string, base: string, count: number) => {
      const list = await request<VersionList>("GET", `${base}/versions?sort_by=created_at&limit=240`, {
        key: w.owner.key,
      });
      expect(list.status, list.raw).toBe(200);
      expect(list.body.data.map((v) => v.version)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      const states: Array<Record<string, [string, string]>> = [{}];
      let state: Record<string, [string, string]> = {};
      for (const version of list.body.data) {
        const i = Number(version.request_id.slice(`${tag}-${scope}-`.length));
        expect(version.request_id).toBe(`${tag}-${scope}-${i}`);
        const body = bodyOf(scope, i);
        const next: Record<string, [string, string]> = body.mode === "replace" ? {} : { ...state };
        for (const [name, v] of Object.entries(body.variables)) if (v) next[name] = [v.type, v.value];
        // The version record names exactly what this request changed.
        const changed = [...new Set([...Object.keys(state), ...Object.keys(next)])]
          .filter((n) => JSON.stringify(state[n]) !== JSON.stringify(next[n]))
          .sort(byCodeUnits);
        expect(version.changes.map((c) => c.name)).toEqual(changed);
        // And the PATCH answered the version its record holds.
        expect(patched[scope === "env" ? i : 10 + i]?.body.version).toBe(version.version);
        state = next;
        states.push(state);
      }
      return states;
    };
    const envStates = await statesOf("env", w.envPath, 10);
    const apiStates = await statesOf("api", apiPath, 6);

    for (const d of deployments) {
      const config = d.config as Config;
      const engine = await engineConfigOk(d.id);
      expect(engine.environment.version).toBe(config.environment_version);
      expect(stateOf(engine.environment.variables)).toEqual(envStates[config.environment_version]);
      const apiPin = config.components.find((c) => c.component_id === api?.id);
      const apiRead = engine.components.find((c) => c.id === api?.id);
      expect(apiRead?.version).toBe(apiPin?.version);
      expect(stateOf(apiRead?.variables ?? [])).toEqual(apiStates[apiPin?.version ?? -1]);
    }
    // A create after every change records the last versions.
    const after = await createDeployment(w.environmentId, [w.stack.id]);
    expect(after.config?.environment_version).toBe(10);
    expect(after.config?.components.find((c) => c.component_id === api?.id)?.version).toBe(6);
  });
});

describe("config_pending on the environment (GET /v1/environments/{id} and the project's list)", () => {
  it("false without a current deployment; false after a success; true after a change; false again after a newer success", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const component = await createComponent(environmentId, "api");
    const pending = () => configPending(owner, project.id, environmentId);
    const base = environmentPath(environmentId);

    expect(await pending()).toBe(false);
    // Changes and unfinished or failed deployments: still no current deployment.
    await change(owner, base, { A: { type: "secret", value: "1" } });
    const queued = await createDeployment(environmentId, [stack.id]);
    await reportOk((await createDeployment(environmentId, [stack.id])).id, { status: "in_progress" });
    const failed = await createDeployment(environmentId, [stack.id]);
    await reportOk(failed.id, { status: "in_progress" });
    await reportOk(failed.id, { status: "failed" });
    expect(await pending()).toBe(false);

    const first = await succeed(queued.id);
    expect(
      (
        await request<{ current_deployment_id: string }>("GET", `/v1/environments/${environmentId}`, {
          key: owner.key,
        })
      ).body.current_deployment_id,
    ).toBe(first.id);
    expect(await pending()).toBe(false);

    // A change of the environment's own scope.
    await change(owner, base, { A: { type: "secret", value: "2" } });
    expect(await pending()).toBe(true);
    // A newer deployment made after the change: pending until it succeeds; a failure changes nothing.
    const next = await createDeployment(environmentId, [stack.id]);
    expect(await pending()).toBe(true);
    await reportOk(next.id, { status: "in_progress" });
    expect(await pending()).toBe(true);
    const broken = await createDeployment(environmentId, [stack.id]);
    await reportOk(broken.id, { status: "in_progress" });
    await reportOk(broken.id, { status: "failed" });
    expect(await pending()).toBe(true);
    await reportOk(next.id, { status: "succeeded" });
    expect(await pending()).toBe(false);

    // A change of a component's scope.
    await change(owner, componentPath(component.id), { C: { type: "string", value: "c" } });
    expect(await pending()).toBe(true);
    await succeeded(environmentId, [stack.id]);
    expect(await pending()).toBe(false);

    // A component added, even without variables.
    await createComponent(environmentId, "added");
    expect(await pending()).toBe(true);
    await succeeded(environmentId, [stack.id]);
    expect(await pending()).toBe(false);

    // A deletion is a change too.
    await change(owner, base, { A: null });
    expect(await pending()).toBe(true);
    await succeeded(environmentId, [stack.id]);
    expect(await pending()).toBe(false);
  });

  it("config_pending is a field of the environment record: its ETag changes with it, and so does every answer carrying the record", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    await succeeded(environmentId, [stack.id]);
    const path = `/v1/environments/${environmentId}`;
    const before = await request<{ config_pending: boolean }>("GET", path, { key: owner.key });
    expect(before.body.config_pending).toBe(false);
    const etag = before.headers.get("etag") as string;
    expect(etag).toBeTruthy();

    await change(owner, environmentPath(environmentId), { A: { type: "secret", value: "1" } });
    const after = await request<{ config_pending: boolean }>("GET", path, {
      key: owner.key,
      headers: { "if-none-match": etag },
    });
    expect(after.status, after.raw).toBe(200);
    expect(after.body.config_pending).toBe(true);
    expect(after.headers.get("etag")).not.toBe(etag);
    // A write holding the old ETag is refused: the record it saw is no longer the current one.
    const stale = await request("PATCH", path, {
      key: owner.key,
      body: { name: "renamed" },
      headers: { "if-match": etag },
    });
    expectError(stale, 409, "conflict", "header.if-match");
    const renamed = await request<{ config_pending: boolean }>("PATCH", path, {
      key: owner.key,
      body: { name: "renamed" },
    });
    expect(renamed.status, renamed.raw).toBe(200);
    expect(renamed.body.config_pending).toBe(true);
    expect(await configPending(owner, project.id, environmentId)).toBe(true);
  });

  it("a deployment created before a change that succeeds after it leaves the change pending", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const base = environmentPath(environmentId);
    await change(owner, base, { A: { type: "string", value: "1" } });
    const early = await createDeployment(environmentId, [stack.id]);
    await change(owner, base, { A: { type: "string", value: "2" } });
    await succeed(early.id);
    expect(await configPending(owner, project.id, environmentId)).toBe(true);
  });

  it("a rollback (a pinned redeploy of an older configuration) that succeeds is pending", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const base = environmentPath(environmentId);
    await change(owner, base, { A: { type: "string", value: "1" } });
    const old = await succeeded(environmentId, [stack.id]);
    await change(owner, base, { A: { type: "string", value: "2" } });
    await succeeded(environmentId, [stack.id]);
    expect(await configPending(owner, project.id, environmentId)).toBe(false);
    const rollback = await redeploy(owner, old.id);
    expect(rollback.status, rollback.raw).toBe(201);
    await succeed(rollback.body.id);
    expect(await configPending(owner, project.id, environmentId)).toBe(true);
  });

  it("false when the current deployment's config is null, whatever changed", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const current = await succeeded(environmentId, [stack.id]);
    await withoutConfig(current.id);
    await change(owner, environmentPath(environmentId), { A: { type: "secret", value: "1" } });
    await createComponent(environmentId, "added");
    const read = await request<{ current_deployment_id: string }>(
      "GET",
      `/v1/environments/${environmentId}`,
      {
        key: owner.key,
      },
    );
    expect(read.body.current_deployment_id).toBe(current.id);
    expect(await configPending(owner, project.id, environmentId)).toBe(false);
  });

  it("each environment is judged on its own scopes", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    await succeeded(environmentId, [stack.id]);
    const made = await request<{ id: string }>("POST", `/v1/projects/${project.id}/environments`, {
      key: owner.key,
      body: { name: "other" },
    });
    expect(made.status, made.raw).toBe(201);
    await change(owner, environmentPath(made.body.id), { ELSEWHERE: { type: "string", value: "e" } });
    await createComponent(made.body.id, "elsewhere");
    expect(await configPending(owner, project.id, environmentId)).toBe(false);
  });
});

describe("redeploy's config: pinned | current (§24)", () => {
  /** An original at versions 1 with known values, then every scope changed and a component added. */
  async function changedSince() {
    const w = await configWorld();
    const [apiPath] = w.componentPaths;
    await change(w.owner, w.envPath, {
      DB_PASSWORD: { type: "secret", value: "old-password" },
      MODE: { type: "string", value: "old-mode" },
    });
    await change(w.owner, apiPath as string, { API_TOKEN: { type: "secure_string", value: "old-token" } });
    const original = await succeeded(w.environmentId, [w.stack.id]);
    const pinnedRead = await engineConfigOk(original.id);
    await change(w.owner, w.envPath, {
      DB_PASSWORD: { type: "secret", value: "new-password" },
      MODE: null,
      ADDED: { type: "string", value: "added" },
    });
    await change(w.owner, apiPath as string, { API_TOKEN: { type: "secure_string", value: "new-token" } });
    const added = await createComponent(w.environmentId, "added");
    return { ...w, original, pinnedRead, added };
  }

  it("pinned is the default when the original has a config: the new deployment runs the original's configuration", async () => {
    const w = await changedSince();
    for (const body of [undefined, {}, { config: "pinned" }]) {
      const res = await redeploy(w.owner, w.original.id, body);
      expect(res.status, res.raw).toBe(201);
      expect(res.body.config).toEqual(w.original.config);
      expect((await readDeployment(w.owner.key, res.body.id)).config).toEqual(w.original.config);
      // The engine's read gives the OLD values: code and configuration roll back together.
      const read = await engineConfigOk(res.body.id);
      expect(read).toEqual({ ...w.pinnedRead, deployment_id: res.body.id });
      expect(stateOf(read.environment.variables)).toEqual({
        DB_PASSWORD: ["secret", "old-password"],
        MODE: ["string", "old-mode"],
      });
      expect(await configOk(w.owner, res.body.id)).toEqual({
        ...(await configOk(w.owner, w.original.id)),
        deployment_id: res.body.id,
      });
      // Nothing differs between the two configurations.
      const diff = await request<{ changes: unknown[] }>(
        "GET",
        `/v1/deployments/${res.body.id}/config/diff?against=${w.original.id}`,
        { key: w.owner.key },
      );
      expect([diff.status, diff.body.changes]).toEqual([200, []]);
    }
  });

  it("current records the versions as they are now", async () => {
    const w = await changedSince();
    const res = await redeploy(w.owner, w.original.id, { config: "current" });
    expect(res.status, res.raw).toBe(201);
    const [api, worker] = w.components;
    expect(res.body.config).toEqual({
      environment_version: 2,
      components: sortedPins([
        { component_id: api?.id as string, version: 2 },
        { component_id: worker?.id as string, version: 0 },
        { component_id: w.added.id, version: 0 },
      ]),
    });
    const read = await engineConfigOk(res.body.id);
    expect(stateOf(read.environment.variables)).toEqual({
      ADDED: ["string", "added"],
      DB_PASSWORD: ["secret", "new-password"],
    });
    expect(read.components.find((c) => c.id === api?.id)?.variables).toEqual([
      { name: "API_TOKEN", type: "secure_string", value: "new-token" },
    ]);
  });

  it("an original without a config: current is the default, pinned is 409 conflict and makes nothing", async () => {
    const w = await changedSince();
    await withoutConfig(w.original.id);
    const before = await deploymentCount(w.environmentId);
    const refused = await redeploy(w.owner, w.original.id, { config: "pinned" });
    expectError(refused, 409, "conflict");
    expect(await deploymentCount(w.environmentId)).toBe(before);

    const [api, worker] = w.components;
    const now: Config = {
      environment_version: 2,
      components: sortedPins([
        { component_id: api?.id as string, version: 2 },
        { component_id: worker?.id as string, version: 0 },
        { component_id: w.added.id, version: 0 },
      ]),
    };
    for (const body of [undefined, {}, { config: "current" }]) {
      const res = await redeploy(w.owner, w.original.id, body);
      expect(res.status, res.raw).toBe(201);
      expect(res.body.config).toEqual(now);
      expect(res.body.redeploy_of).toBe(w.original.id);
    }
  });

  it("a config that is not pinned or current is 400 bad_input (cause path config); nothing is made", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const original = await createDeployment(environmentId, [stack.id]);
    const before = await deploymentCount(environmentId);
    for (const config of ["latest", "PINNED", "Current", "", 1, true, [], {}, ["pinned"]]) {
      expectError(await redeploy(owner, original.id, { config }), 400, "bad_input", "config");
    }
    expectError(
      await redeploy(owner, original.id, { config: "pinned", extra: 1 }),
      400,
      "bad_input",
      "extra",
    );
    expect(await deploymentCount(environmentId)).toBe(before);
  });
});
