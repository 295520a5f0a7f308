/**
 * internalGetDeploymentConfig: GET /internal/v1/deployments/{id}/config (API_CONTRACT §24), what the
 * engine deploys: the public read with each variable's `value`, `Cache-Control: no-store`, never
 * the variables as they are now.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../../helpers/api";
import { call, rowsOf } from "../../../helpers/audit-log";
import {
  byCodeUnits,
  type Configuration,
  change,
  configOk,
  configWorld,
  engineConfig,
  engineConfigOk,
  stateOf,
  type ValuedVariable,
  withoutConfig,
  withoutValues,
} from "../../../helpers/deployment-config";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { createComponent, createDeployment, createProjectWithStack } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";
import { componentPath, environmentPath, randomKey } from "../../../helpers/variables";

const admin = () => ({ authorization: `Bearer ${env.ADMIN_TOKEN}` });

const TRICKY = 'multi\nline "quoted" \\ back\rslash ünïcødé 🚀';

describe("GET /internal/v1/deployments/{id}/config", () => {
  it("the pinned configuration with each value decrypted (secret, secure_string, string); Cache-Control: no-store", async () => {
    const w = await configWorld();
    const [api, worker] = w.components;
    const [apiPath] = w.componentPaths;
    await change(w.owner, w.envPath, {
      DB_PASSWORD: { type: "secret", value: TRICKY },
      TOKEN: { type: "secure_string", value: "tok-1" },
      LOG_LEVEL: { type: "string", value: "debug" },
      EMPTY: { type: "string", value: "" },
    });
    await change(w.owner, apiPath as string, {
      API_SECRET: { type: "secret", value: "api-secret" },
      PORT: { type: "string", value: "8080" },
    });
    const d = await createDeployment(w.environmentId, [w.stack.id]);

    const res = await engineConfig(d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toEqual({
      deployment_id: d.id,
      environment: {
        id: w.environmentId,
        version: 1,
        variables: [
          { name: "DB_PASSWORD", type: "secret", value: TRICKY },
          { name: "EMPTY", type: "string", value: "" },
          { name: "LOG_LEVEL", type: "string", value: "debug" },
          { name: "TOKEN", type: "secure_string", value: "tok-1" },
        ],
      },
      components: [
        {
          id: api?.id as string,
          name: "api",
          version: 1,
          variables: [
            { name: "API_SECRET", type: "secret", value: "api-secret" },
            { name: "PORT", type: "string", value: "8080" },
          ],
        },
        { id: worker?.id as string, name: "worker", version: 0, variables: [] },
      ].sort((a, b) => byCodeUnits(a.id, b.id)),
    });
    // The same as the public read, each variable with its value.
    expect(withoutValues(res.body)).toEqual(await configOk(w.owner, d.id));
  });

  it("the staging rule: a change after a deployment does not reach it, it reaches the next one", async () => {
    const w = await configWorld();
    const [apiPath] = w.componentPaths;
    await change(w.owner, w.envPath, {
      SECRET: { type: "secret", value: "old-secret" },
      SECURE: { type: "secure_string", value: "old-secure" },
      PLAIN: { type: "string", value: "old-plain" },
      DROPPED: { type: "secret", value: "dropped-later" },
    });
    await change(w.owner, apiPath as string, { C: { type: "secret", value: "old-c" } });
    const before = await createDeployment(w.environmentId, [w.stack.id]);
    const pinned = await engineConfigOk(before.id);

    await change(w.owner, w.envPath, {
      SECRET: { type: "secret", value: "new-secret" },
      SECURE: { type: "string", value: "now-plain" },
      PLAIN: { type: "string", value: "new-plain" },
      DROPPED: null,
      ADDED: { type: "secure_string", value: "added" },
    });
    await change(w.owner, apiPath as string, { C: { type: "secret", value: "new-c" } });
    const added = await createComponent(w.environmentId, "added");
    await change(w.owner, componentPath(added.id), { LATE: { type: "string", value: "late" } });

    const again = await engineConfigOk(before.id);
    expect(again).toEqual(pinned);
    expect(stateOf(again.environment.variables)).toEqual({
      DROPPED: ["secret", "dropped-later"],
      PLAIN: ["string", "old-plain"],
      SECRET: ["secret", "old-secret"],
      SECURE: ["secure_string", "old-secure"],
    });
    expect(again.components.map((c) => c.id)).not.toContain(added.id);

    const after = await createDeployment(w.environmentId, [w.stack.id]);
    const next = await engineConfigOk(after.id);
    expect(stateOf(next.environment.variables)).toEqual({
      ADDED: ["secure_string", "added"],
      PLAIN: ["string", "new-plain"],
      SECRET: ["secret", "new-secret"],
      SECURE: ["string", "now-plain"],
    });
    const late = next.components.find((c) => c.id === added.id);
    expect(late?.variables).toEqual([{ name: "LATE", type: "string", value: "late" }]);
    const api = next.components.find((c) => c.id === w.components[0]?.id);
    expect(api?.variables).toEqual([{ name: "C", type: "secret", value: "new-c" }]);
  });

  it("values a §18 restore brought back, and a name deleted and made again, read as they were pinned", async () => {
    const w = await configWorld();
    await change(w.owner, w.envPath, {
      RESTORED: { type: "secret", value: "restored-one" },
      REMADE: { type: "secure_string", value: "remade-one" },
      PLAIN: { type: "string", value: "plain-one" },
    });
    await change(w.owner, w.envPath, {
      RESTORED: null,
      REMADE: null,
      PLAIN: { type: "string", value: "plain-two" },
    });
    const gap = await createDeployment(w.environmentId, [w.stack.id]);
    const restored = await request<{ version: number }>("POST", `${w.envPath}/versions/1/restore`, {
      key: w.owner.key,
    });
    expect(restored.status, restored.raw).toBe(200);
    expect(restored.body.version).toBe(3);
    const afterRestore = await createDeployment(w.environmentId, [w.stack.id]);
    await change(w.owner, w.envPath, { REMADE: { type: "secure_string", value: "remade-two" } });
    await change(w.owner, w.envPath, { OTHER: { type: "string", value: "o" } });
    const later = await createDeployment(w.environmentId, [w.stack.id]);

    expect(stateOf((await engineConfigOk(gap.id)).environment.variables)).toEqual({
      PLAIN: ["string", "plain-two"],
    });
    expect(stateOf((await engineConfigOk(afterRestore.id)).environment.variables)).toEqual({
      PLAIN: ["string", "plain-one"],
      REMADE: ["secure_string", "remade-one"],
      RESTORED: ["secret", "restored-one"],
    });
    expect(stateOf((await engineConfigOk(later.id)).environment.variables)).toEqual({
      OTHER: ["string", "o"],
      PLAIN: ["string", "plain-one"],
      REMADE: ["secure_string", "remade-two"],
      RESTORED: ["secret", "restored-one"],
    });
  });

  it("a key rotation keeps every pinned configuration readable with the same values", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const base = environmentPath(environmentId);
    const oldKey = randomKey();
    const underOld = { VARIABLES_KEY: oldKey };
    const patch = async (variables: Record<string, unknown>) => {
      const res = await request("PATCH", base, { key: owner.key, body: { variables }, bindings: underOld });
      expect(res.status, res.raw).toBe(200);
    };
    await patch({
      KEPT: { type: "secret", value: "kept-secret" },
      OVERWRITTEN: { type: "secure_string", value: "first-secure" },
      DELETED: { type: "secret", value: "deleted-later" },
      PLAIN: { type: "string", value: "plain" },
    });
    const d = await createDeployment(environmentId, [stack.id]);
    await patch({ OVERWRITTEN: { type: "secure_string", value: "second-secure" }, DELETED: null });
    const later = await createDeployment(environmentId, [stack.id]);

    const readUnder = async (bindings: Record<string, string>, id: string) => {
      const res = await request<Configuration<ValuedVariable>>(
        "GET",
        `/internal/v1/deployments/${id}/config`,
        {
          headers: admin(),
          bindings,
        },
      );
      expect(res.status, res.raw).toBe(200);
      return res.body;
    };
    const before = [await readUnder(underOld, d.id), await readUnder(underOld, later.id)];
    expect(stateOf(before[0]?.environment.variables ?? [])).toEqual({
      DELETED: ["secret", "deleted-later"],
      KEPT: ["secret", "kept-secret"],
      OVERWRITTEN: ["secure_string", "first-secure"],
      PLAIN: ["string", "plain"],
    });

    // The operator rotates: the old key becomes VARIABLES_KEY_PREVIOUS.
    const rotated = { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey };
    expect([await readUnder(rotated, d.id), await readUnder(rotated, later.id)]).toEqual(before);
    let moved = 0;
    for (let i = 0; i < 50; i++) {
      const step = await request<{ reencrypted: number; remaining: boolean }>(
        "POST",
        "/internal/v1/variables/reencrypt",
        {
          headers: admin(),
          body: { limit: 2 },
          bindings: rotated,
        },
      );
      expect(step.status, step.raw).toBe(200);
      moved += step.body.reencrypted;
      if (!step.body.remaining) break;
    }
    // The sealed values were under the old key: live rows and the ones their versions keep.
    expect(moved).toBeGreaterThanOrEqual(4);
    // After the sweep the worker's own key alone opens every pinned value.
    expect([await engineConfigOk(d.id), await engineConfigOk(later.id)]).toEqual(before);
  });

  it("404 for an unknown deployment and for one whose config is null; 400 for a malformed id", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    await withoutConfig(d.id);
    expectError(await engineConfig(d.id), 404, "not_found");
    expectError(await engineConfig(UNKNOWN_ID), 404, "not_found");
    expectError(await engineConfig("not-an-id"), 400, "bad_input");
  });

  it("is a reveal (API_CONTRACT §14): one audit entry per answered read, never a value; none for a 404", async () => {
    const w = await configWorld();
    await change(w.owner, w.envPath, { DB_PASSWORD: { type: "secret", value: "hunter2-secret" } });
    const d = await createDeployment(w.environmentId, [w.stack.id]);
    const path = `/internal/v1/deployments/${d.id}/config`;
    const read = await call("GET", path, { admin: true });
    expect(read.status, read.raw).toBe(200);
    const rows = await rowsOf(read.requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "internal.getDeploymentConfig",
      target_type: "deployment",
      target_id: d.id,
      project_id: w.project.id,
      org_id: w.org.id,
      actor_type: "admin",
      changes: null,
    });
    expect(JSON.stringify(rows)).not.toContain("hunter2-secret");
    // Each read is a reveal of its own.
    const again = await call("GET", path, { admin: true });
    expect(await rowsOf(again.requestId)).toHaveLength(1);
    await withoutConfig(d.id);
    for (const refused of [path, `/internal/v1/deployments/${UNKNOWN_ID}/config`]) {
      const res = await call("GET", refused, { admin: true });
      expect(res.status).toBe(404);
      expect(await rowsOf(res.requestId)).toEqual([]);
    }
  });

  runInternalRouteTests("GET /internal/v1/deployments/{id}/config", async () => {
    const s = await createProjectWithStack();
    await change(s.owner, environmentPath(s.environmentId), { S: { type: "secret", value: "s" } });
    const d = await createDeployment(s.environmentId, [s.stack.id]);
    return { method: "GET", path: `/internal/v1/deployments/${d.id}/config` };
  });
});
