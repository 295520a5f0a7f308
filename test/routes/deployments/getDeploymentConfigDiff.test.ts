/**
 * getDeploymentConfigDiff: GET /v1/deployments/{id}/config/diff (API_CONTRACT §24), the changes
 * from a deployment's configuration to `against` (`current`, the default, or another deployment of
 * the same environment with a config). Never an oracle for a secret.
 */
import { describe, expect, it } from "vitest";
import {
  byCodeUnits,
  change,
  configWorld,
  type DiffChange,
  getDiff,
  withoutConfig,
} from "../../helpers/deployment-config";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import {
  createApiKey,
  createComponent,
  createDeployment,
  createEnvironment,
  createProjectWithStack,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, environmentPath } from "../../helpers/variables";

const envScope = (id: string) => ({ type: "environment" as const, id });
const compScope = (id: string) => ({ type: "component" as const, id });

/** A change of the diff, `value_changed` true unless said. */
const item = (
  scope: DiffChange["scope"],
  name: string,
  action: DiffChange["action"],
  from: string | null,
  to: string | null,
  valueChanged = true,
): DiffChange => ({ scope, name, action, type: { from, to }, value_changed: valueChanged });

/** The reverse of a diff's changes (from B to A instead of A to B), in the same order. */
const reversed = (changes: DiffChange[]) =>
  changes.map((c) => ({
    ...c,
    action: c.action === "created" ? "deleted" : c.action === "deleted" ? "created" : "updated",
    type: { from: c.type.to, to: c.type.from },
  }));

describe("GET /v1/deployments/{id}/config/diff", () => {
  it("against defaults to current: each scope as it is now, sorted by scope (environment, then components by id) and name", async () => {
    const w = await configWorld();
    const [apiPath] = w.componentPaths;
    const [api, worker] = w.components;
    await change(w.owner, w.envPath, {
      KEEP_SECRET: { type: "secret", value: "k" },
      KEEP_STRING: { type: "string", value: "same" },
      CHANGED: { type: "string", value: "old" },
      GONE: { type: "secure_string", value: "g" },
      RETYPED: { type: "string", value: "r" },
    });
    await change(w.owner, apiPath as string, { API_KEY: { type: "secret", value: "a" } });
    const d = await createDeployment(w.environmentId, [w.stack.id]);

    await change(w.owner, w.envPath, {
      CHANGED: { type: "string", value: "new" },
      GONE: null,
      RETYPED: { type: "secret", value: "r" },
      ADDED: { type: "string", value: "n" },
    });
    await change(w.owner, apiPath as string, { API_KEY: null });
    await change(w.owner, componentPath(worker?.id as string), { QUEUE: { type: "string", value: "q" } });
    const added = await createComponent(w.environmentId, "added-later");
    await change(w.owner, componentPath(added.id), { FRESH: { type: "secure_string", value: "f" } });

    const expected = [
      item(envScope(w.environmentId), "ADDED", "created", null, "string"),
      item(envScope(w.environmentId), "CHANGED", "updated", "string", "string"),
      item(envScope(w.environmentId), "GONE", "deleted", "secure_string", null),
      item(envScope(w.environmentId), "RETYPED", "updated", "string", "secret"),
      ...[
        [item(compScope(api?.id as string), "API_KEY", "deleted", "secret", null)],
        [item(compScope(worker?.id as string), "QUEUE", "created", null, "string")],
        [item(compScope(added.id), "FRESH", "created", null, "secure_string")],
      ]
        .sort((a, b) => byCodeUnits(a[0]?.scope.id as string, b[0]?.scope.id as string))
        .flat(),
    ];
    const res = await getDiff(w.owner, d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ deployment_id: d.id, against: "current", changes: expected });
    const explicit = await getDiff(w.owner, d.id, "?against=current");
    expect(explicit.body).toEqual(res.body);
    // Names and types, never a value.
    expect(res.raw).not.toMatch(/"value"/);
  });

  it("against another deployment of the environment: from this one's versions to that one's; later changes do not count", async () => {
    const w = await configWorld();
    const [apiPath] = w.componentPaths;
    const [api] = w.components;
    await change(w.owner, w.envPath, {
      A_STRING: { type: "string", value: "one" },
      B_SECRET: { type: "secret", value: "s1" },
      C_STAYS: { type: "secure_string", value: "c" },
    });
    const first = await createDeployment(w.environmentId, [w.stack.id]);
    await change(w.owner, w.envPath, {
      A_STRING: { type: "string", value: "two" },
      B_SECRET: null,
      D_NEW: { type: "secure_string", value: "d" },
    });
    await change(w.owner, apiPath as string, { IN_API: { type: "string", value: "x" } });
    // A component added between the two: its variables are created.
    const between = await createComponent(w.environmentId, "between");
    await change(w.owner, componentPath(between.id), { NEWCOMER: { type: "secret", value: "n" } });
    const second = await createDeployment(w.environmentId, [w.stack.id]);
    // After the second: nothing of this shows in a diff of the two.
    await change(w.owner, w.envPath, {
      C_STAYS: { type: "string", value: "now" },
      LATER: { type: "secret", value: "l" },
    });

    const forward = [
      item(envScope(w.environmentId), "A_STRING", "updated", "string", "string"),
      item(envScope(w.environmentId), "B_SECRET", "deleted", "secret", null),
      item(envScope(w.environmentId), "D_NEW", "created", null, "secure_string"),
      ...[
        [item(compScope(api?.id as string), "IN_API", "created", null, "string")],
        [item(compScope(between.id), "NEWCOMER", "created", null, "secret")],
      ]
        .sort((a, b) => byCodeUnits(a[0]?.scope.id as string, b[0]?.scope.id as string))
        .flat(),
    ];
    const res = await getDiff(w.owner, first.id, `?against=${second.id}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ deployment_id: first.id, against: second.id, changes: forward });
    const back = await getDiff(w.owner, second.id, `?against=${first.id}`);
    expect(back.body).toEqual({ deployment_id: second.id, against: first.id, changes: reversed(forward) });
  });

  it("`against` that is not current nor another deployment of this environment with a config: 400, cause path `against`", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    const otherEnv = await createEnvironment(project.id);
    const elsewhere = await createDeployment(otherEnv.id, [(await createStack(otherEnv.id)).id]);
    const noConfig = await createDeployment(environmentId, [stack.id]);
    await withoutConfig(noConfig.id);
    const stranger = await createProjectWithStack();
    const strangers = await createDeployment(stranger.environmentId, [stranger.stack.id]);
    for (const against of [
      elsewhere.id,
      noConfig.id,
      UNKNOWN_ID,
      strangers.id,
      stack.id,
      environmentId,
      "garbage",
      "CURRENT",
      "not-an-id",
      crypto.randomUUID(),
      crypto.randomUUID().replaceAll("-", ""),
      "",
      "current,current",
    ]) {
      const res = await getDiff(owner, d.id, `?against=${encodeURIComponent(against)}`);
      expectError(res, 400, "bad_input", "against");
    }
  });

  it("`against` the deployment itself is not another deployment: 400, cause path `against`", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    expectError(await getDiff(owner, d.id, `?against=${d.id}`), 400, "bad_input", "against");
  });

  it("a string on both sides: value_changed is whether the values differ; the same value written again is left out", async () => {
    const w = await configWorld();
    const scope = envScope(w.environmentId);
    await change(w.owner, w.envPath, {
      BACK_AND_FORTH: { type: "string", value: "a" },
      RECREATED: { type: "string", value: "r" },
      RETYPED_BACK: { type: "string", value: "t" },
      UNTOUCHED: { type: "string", value: "u" },
    });
    const first = await createDeployment(w.environmentId, [w.stack.id]);
    // Each name is written between the two, and ends with the value it had.
    await change(w.owner, w.envPath, {
      BACK_AND_FORTH: { type: "string", value: "b" },
      RECREATED: null,
      RETYPED_BACK: { type: "secret", value: "t" },
    });
    const middle = await createDeployment(w.environmentId, [w.stack.id]);
    await change(w.owner, w.envPath, {
      BACK_AND_FORTH: { type: "string", value: "a" },
      RECREATED: { type: "string", value: "r" },
      RETYPED_BACK: { type: "string", value: "t" },
    });
    const last = await createDeployment(w.environmentId, [w.stack.id]);

    expect((await getDiff(w.owner, first.id, `?against=${last.id}`)).body.changes).toEqual([]);
    expect((await getDiff(w.owner, first.id)).body.changes).toEqual([]);
    expect((await getDiff(w.owner, first.id, `?against=${middle.id}`)).body.changes).toEqual([
      item(scope, "BACK_AND_FORTH", "updated", "string", "string"),
      item(scope, "RECREATED", "deleted", "string", null),
      item(scope, "RETYPED_BACK", "updated", "string", "secret"),
    ]);
  });

  it("a secret or secure_string: value_changed is whether a value was written between the versions, whatever the value", async () => {
    const w = await configWorld();
    const scope = envScope(w.environmentId);
    // A key without variables:reveal: writing a secret's own value again is a change (§28).
    const writer = await createApiKey(w.owner, { scopes: ["variables:write", "variables:read"] });
    await change(w.owner, w.envPath, {
      SAME_SECRET: { type: "secret", value: "same" },
      SAME_SECURE: { type: "secure_string", value: "same" },
      BACK_SECRET: { type: "secret", value: "s1" },
      RECREATED: { type: "secret", value: "r" },
      NOT_WRITTEN: { type: "secret", value: "n" },
      NOT_WRITTEN_SECURE: { type: "secure_string", value: "n" },
      TO_STRING: { type: "secure_string", value: "v" },
    });
    const first = await createDeployment(w.environmentId, [w.stack.id]);
    const written = await change(writer, w.envPath, {
      SAME_SECRET: { type: "secret", value: "same" },
      SAME_SECURE: { type: "secure_string", value: "same" },
      BACK_SECRET: { type: "secret", value: "s2" },
      RECREATED: null,
      TO_STRING: { type: "string", value: "v" },
    });
    expect(written).toBe(2);
    await change(w.owner, w.envPath, {
      BACK_SECRET: { type: "secret", value: "s1" },
      RECREATED: { type: "secret", value: "r" },
    });
    const last = await createDeployment(w.environmentId, [w.stack.id]);

    const expected = [
      item(scope, "BACK_SECRET", "updated", "secret", "secret"),
      item(scope, "RECREATED", "updated", "secret", "secret"),
      item(scope, "SAME_SECRET", "updated", "secret", "secret"),
      item(scope, "SAME_SECURE", "updated", "secure_string", "secure_string"),
      item(scope, "TO_STRING", "updated", "secure_string", "string"),
    ];
    const res = await getDiff(w.owner, first.id, `?against=${last.id}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body.changes).toEqual(expected);
    expect((await getDiff(w.owner, first.id)).body.changes).toEqual(expected);
    // And from the other side, the same writes.
    expect((await getDiff(w.owner, last.id, `?against=${first.id}`)).body.changes).toEqual(
      reversed(expected),
    );
  });

  it("a type change from string to secret counts, even with the same value", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const base = environmentPath(environmentId);
    await change(owner, base, { TOKEN: { type: "string", value: "t" } });
    const d = await createDeployment(environmentId, [stack.id]);
    await change(owner, base, { TOKEN: { type: "secret", value: "t" } });
    expect((await getDiff(owner, d.id)).body.changes).toEqual([
      item(envScope(environmentId), "TOKEN", "updated", "string", "secret"),
    ]);
  });

  it("no change since: an empty list", async () => {
    const w = await configWorld();
    await change(w.owner, w.envPath, { X: { type: "secret", value: "x" } });
    const d = await createDeployment(w.environmentId, [w.stack.id]);
    expect((await getDiff(w.owner, d.id)).body).toEqual({
      deployment_id: d.id,
      against: "current",
      changes: [],
    });
  });

  it("components are ordered by id, names within each scope by name", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const comps = [];
    for (let i = 0; i < 4; i++) comps.push(await createComponent(environmentId, `c${i}`));
    const d = await createDeployment(environmentId, [stack.id]);
    for (const c of comps) {
      await change(owner, componentPath(c.id), {
        ZED: { type: "string", value: "z" },
        ALPHA: { type: "secret", value: "a" },
        MIKE: { type: "secure_string", value: "m" },
      });
    }
    await change(owner, environmentPath(environmentId), { ONLY: { type: "string", value: "o" } });
    const ids = comps.map((c) => c.id).sort(byCodeUnits);
    const res = await getDiff(owner, d.id);
    expect(res.body.changes.map((c) => [c.scope.type, c.scope.id, c.name])).toEqual([
      ["environment", environmentId, "ONLY"],
      ...ids.flatMap((id) => ["ALPHA", "MIKE", "ZED"].map((name) => ["component", id, name])),
    ]);
  });

  it("404 when the deployment's config is null; 404 for an unknown deployment, 400 for a malformed id", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    await withoutConfig(d.id);
    expectError(await getDiff(owner, d.id), 404, "not_found");
    expectError(await getDiff(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await getDiff(owner, "not-an-id"), 400, "bad_input");
  });

  it("viewers read it; outsiders get 404; needs deployments:read", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const { viewer, outsider } = await projectRoleCallers({ org, owner, project });
    const d = await createDeployment(environmentId, [stack.id]);
    await change(owner, environmentPath(environmentId), { V: { type: "secret", value: "v" } });
    const res = await getDiff(viewer, d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.body.changes).toEqual([item(envScope(environmentId), "V", "created", null, "secret")]);
    expectError(await getDiff(outsider, d.id), 404, "not_found");
    const reader = await createApiKey(owner, { scopes: ["deployments:read"] });
    expect((await getDiff(reader, d.id)).status).toBe(200);
    const other = await createApiKey(owner, { scopes: ["variables:read"] });
    const refused = await getDiff(other, d.id);
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("`deployments:read`");
  });

  runCommonRouteTests("GET /v1/deployments/{id}/config/diff", async () => {
    const s = await createProjectWithStack();
    const d = await createDeployment(s.environmentId, [s.stack.id]);
    return { method: "GET", path: `/v1/deployments/${d.id}/config/diff`, caller: s.owner };
  });
});
