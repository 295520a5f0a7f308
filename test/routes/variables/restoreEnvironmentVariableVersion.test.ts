/**
 * restoreEnvironmentVariableVersion: POST /v1/environments/{environment_id}/variables/versions/{version}/restore
 * (API_CONTRACT §18): the scope becomes exactly what it was right after a version, as a new version.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import {
  applied,
  entries,
  restore,
  scopeState,
  setsWorld,
  versionNumbers,
} from "../../helpers/variable-sets";
import { type ListBody, reveal } from "../../helpers/variables";

const V1 = {
  DB_PASSWORD: ["secret", 'p@ss "one"\n\\'],
  API_TOKEN: ["secure_string", "tok-1"],
  LOG_LEVEL: ["string", "debug"],
} as Record<string, [string, string]>;

describe("POST /v1/environments/{id}/variables/versions/{version}/restore", () => {
  it("brings back every name, type and value of the version as a new version; a kept variable keeps its id", async () => {
    const { owner, paths, environmentId } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: entries(V1) });
    const idOf = async (name: string) =>
      (await request<ListBody>("GET", base, { key: owner.key })).body.data.find((v) => v.name === name)?.id;
    const keptId = await idOf("API_TOKEN");
    await applied(owner, base, {
      mode: "replace",
      variables: { API_TOKEN: { type: "string", value: "tok-2" }, NEW_ONE: { type: "secret", value: "n" } },
    });
    const dbPassword = await idOf("DB_PASSWORD");
    expect(dbPassword).toBeUndefined();
    const res = await request<{ version: number; dry_run: boolean; changes: unknown[] }>(
      "POST",
      `${base}/versions/1/restore`,
      { key: owner.key, headers: { "x-request-id": `restore-${environmentId}` } },
    );
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({
      version: 3,
      dry_run: false,
      changes: [
        {
          name: "API_TOKEN",
          action: "updated",
          type: { from: "string", to: "secure_string" },
          value_changed: true,
        },
        { name: "DB_PASSWORD", action: "created", type: { from: null, to: "secret" }, value_changed: true },
        { name: "LOG_LEVEL", action: "created", type: { from: null, to: "string" }, value_changed: true },
        { name: "NEW_ONE", action: "deleted", type: { from: "secret", to: null }, value_changed: true },
      ],
    });
    expect(await scopeState(owner, base)).toEqual(V1);
    expect(await idOf("API_TOKEN")).toBe(keptId);
    const restoredSecret = (await idOf("DB_PASSWORD")) as string;
    expect((await reveal(owner, restoredSecret)).body.value).toBe(V1.DB_PASSWORD?.[1]);
    expect(await versionNumbers(owner, base)).toEqual([1, 2, 3]);
    const [entry, ...more] = await rowsOf(`restore-${environmentId}`);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      action: "restoreEnvironmentVariableVersion",
      target_type: "environment",
      target_id: environmentId,
    });
    expect(JSON.parse(entry?.changes as string)).toEqual({
      API_TOKEN: { from: "string", to: "secure_string" },
      DB_PASSWORD: { from: null, to: "secret" },
      LOG_LEVEL: { from: null, to: "string" },
      NEW_ONE: { from: "secret", to: null },
    });
    // Restoring the version the scope already matches changes nothing: no version, the current number.
    const again = await restore(owner, base, 3);
    expect(again.body.version).toBe(3);
    expect(again.body.changes.every((c) => c.action === "unchanged")).toBe(true);
    expect((await restore(owner, base, 1)).body.version).toBe(3);
    // And any later state is reachable again.
    expect((await restore(owner, base, 2)).body.version).toBe(4);
    expect(await scopeState(owner, base)).toEqual({
      API_TOKEN: ["string", "tok-2"],
      NEW_ONE: ["secret", "n"],
    });
  });

  it("restores values of variables deleted, renamed and re-created since, sealed anew for the variable that holds them", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const created = await applied(owner, base, { variables: { KEY: { type: "secret", value: "first" } } });
    expect(created.version).toBe(1);
    const id = (await request<ListBody>("GET", base, { key: owner.key })).body.data[0]?.id as string;
    await request("PUT", `/v1/variables/${id}`, {
      key: owner.key,
      body: { name: "KEY2", type: "secret", value: "second" },
    });
    await request("DELETE", `/v1/variables/${id}`, { key: owner.key });
    await applied(owner, base, { variables: { KEY: { type: "secret", value: "third" } } });
    expect((await restore(owner, base, 2)).status).toBe(200);
    expect(await scopeState(owner, base)).toEqual({ KEY2: ["secret", "second"] });
    expect((await restore(owner, base, 1)).status).toBe(200);
    expect(await scopeState(owner, base)).toEqual({ KEY: ["secret", "first"] });
    expect((await restore(owner, base, 4)).status).toBe(200);
    expect(await scopeState(owner, base)).toEqual({ KEY: ["secret", "third"] });
  });

  it("a dry run answers what the restore would do and changes nothing", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: { type: "string", value: "1" } } });
    await applied(owner, base, {
      variables: { A: { type: "string", value: "2" }, B: { type: "secret", value: "b" } },
    });
    const dry = await restore(owner, base, 1, { dry_run: true });
    expect(dry.status, dry.raw).toBe(200);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
    expect(await scopeState(owner, base)).toEqual({ A: ["string", "2"], B: ["secret", "b"] });
    // `null` is not given: a restore.
    const real = await restore(owner, base, 1, { dry_run: null });
    expect(dry.body).toEqual({ ...real.body, dry_run: true });
    expect(real.body.version).toBe(3);
  });

  it("a version not made yet is 404, one that is not a positive integer 400, an unknown field 400; nothing changes", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    expectError(await restore(owner, base, 1), 404, "not_found");
    await applied(owner, base, { variables: { A: { type: "string", value: "1" } } });
    expectError(await restore(owner, base, 2), 404, "not_found");
    expectError(await restore(owner, base, 0), 400, "bad_input", "version");
    expectError(await restore(owner, base, "x"), 400, "bad_input", "version");
    // A second version, so that a restore of version 1 run by mistake would make a third.
    await applied(owner, base, { variables: { A: { type: "string", value: "2" } } });
    const before = await scopeState(owner, base);
    expectError(await restore(owner, base, 3), 404, "not_found");
    expectError(await restore(owner, base, 1, { dry_run: "no" }), 400, "bad_input", "dry_run");
    expectError(await restore(owner, base, 1, { base_version: 1 }), 400, "bad_input", "base_version");
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
    expect(await scopeState(owner, base)).toEqual(before);
    expect(before).toEqual({ A: ["string", "2"] });
  });

  runCommonRouteTests("POST /v1/environments/{id}/variables/versions/{version}/restore", async () => {
    const world = await setsWorld();
    await applied(world.owner, world.paths.environment, { variables: { A: { type: "string", value: "a" } } });
    return { method: "POST", path: `${world.paths.environment}/versions/1/restore`, caller: world.owner };
  });
});
