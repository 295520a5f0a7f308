/**
 * listEnvironmentVariableVersions: GET /v1/environments/{environment_id}/variables/versions
 * (API_CONTRACT §18): every change to the scope made one version, 1, 2, 3…, by any operation.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectError, TS } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, listVersions, restore, setsWorld, versionNumbers } from "../../helpers/variable-sets";
import { createVariable } from "../../helpers/variables";

describe("GET /v1/environments/{id}/variables/versions", () => {
  it("every change makes one version, whatever made it: create, replace, delete, a change, a restore", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    expect((await listVersions(owner, base)).body).toEqual({ data: [], has_more: false });
    const variable = await createVariable(owner, base, { name: "ONE", type: "secret", value: "1" });
    await request("PUT", `/v1/variables/${variable.id}`, {
      key: owner.key,
      body: { name: "ONE", type: "secret", value: "1b" },
    });
    // A replace that changes neither name, type nor value changes no variable: no version.
    await request("PUT", `/v1/variables/${variable.id}`, {
      key: owner.key,
      body: { name: "ONE", type: "secret", value: "1b" },
    });
    await request("PUT", `/v1/variables/${variable.id}`, {
      key: owner.key,
      body: { name: "RENAMED", type: "string", value: "1b" },
    });
    await applied(owner, base, { variables: { TWO: { type: "string", value: "2" } } });
    await request("DELETE", `/v1/variables/${variable.id}`, { key: owner.key });
    await restore(owner, base, 2);
    const res = await listVersions(owner, base);
    expect(res.status).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((v) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    const changes = Object.fromEntries(res.body.data.map((v) => [v.version, v.changes]));
    expect(changes).toEqual({
      1: [{ name: "ONE", action: "created", type: { from: null, to: "secret" }, value_changed: true }],
      2: [{ name: "ONE", action: "updated", type: { from: "secret", to: "secret" }, value_changed: true }],
      3: [
        { name: "ONE", action: "deleted", type: { from: "secret", to: null }, value_changed: true },
        { name: "RENAMED", action: "created", type: { from: null, to: "string" }, value_changed: true },
      ],
      4: [{ name: "TWO", action: "created", type: { from: null, to: "string" }, value_changed: true }],
      5: [{ name: "RENAMED", action: "deleted", type: { from: "string", to: null }, value_changed: true }],
      6: [
        { name: "ONE", action: "created", type: { from: null, to: "secret" }, value_changed: true },
        { name: "TWO", action: "deleted", type: { from: "string", to: null }, value_changed: true },
      ],
    });
    for (const v of res.body.data) {
      expect(v.scope).toEqual({ type: "environment", id: paths.environment.split("/")[3] });
      expect(v.actor).toEqual({ type: "api_key", account_id: owner.accountId, api_key_id: owner.keyId });
      expect(v.created_at).toMatch(TS);
      expect(v.request_id.length).toBeGreaterThan(0);
    }
    // created_at order is version order.
    const times = res.body.data.map((v) => v.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("pages by the §4 rules: newest first by default, `created_at` ascending, cursors bound to their order", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    for (let i = 1; i <= 5; i++)
      await applied(owner, base, { variables: { N: { type: "string", value: `${i}` } } });
    const first = await listVersions(owner, base, "?limit=2");
    expect(first.body.data.map((v) => v.version)).toEqual([5, 4]);
    expect(first.body.has_more).toBe(true);
    const cursor = first.body.next_page ?? "";
    expect(cursor).toMatch(/^[A-Za-z0-9+/=]+$/);
    const second = await listVersions(owner, base, `?limit=2&after=${encodeURIComponent(cursor)}`);
    expect(second.body.data.map((v) => v.version)).toEqual([3, 2]);
    // URL-safe base64 and a `+` read as a space are the same cursor.
    const urlSafe = cursor.replace(/\+/g, "-").replace(/\//g, "_");
    expect((await listVersions(owner, base, `?limit=2&after=${urlSafe}`)).body).toEqual(second.body);
    const last = await listVersions(
      owner,
      base,
      `?limit=2&after=${encodeURIComponent(second.body.next_page ?? "")}`,
    );
    expect(last.body).toMatchObject({ has_more: false });
    expect(last.body.data.map((v) => v.version)).toEqual([1]);
    expect("next_page" in last.body).toBe(false);
    expect(await versionNumbers(owner, base)).toEqual([1, 2, 3, 4, 5]);
    const asc = await listVersions(owner, base, "?sort_by=%2Bcreated_at&limit=3");
    expect(asc.body.data.map((v) => v.version)).toEqual([1, 2, 3]);
    // A cursor made under one order is refused under another; a malformed one too.
    expectError(
      await listVersions(owner, base, `?sort_by=created_at&after=${encodeURIComponent(cursor)}`),
      400,
      "bad_input",
      "after",
    );
    expectError(await listVersions(owner, base, "?after=bm90LWEtY3Vyc29y"), 400, "bad_input", "after");
    expectError(await listVersions(owner, base, "?limit=241"), 400, "bad_input", "limit");
  });

  it("an unknown environment is 404", async () => {
    const { owner } = await setsWorld();
    expectError(
      await listVersions(owner, "/v1/environments/1111111111111111111111/variables"),
      404,
      "not_found",
    );
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables/versions", async () => {
    const world = await setsWorld();
    return { method: "GET", path: `${world.paths.environment}/versions`, caller: world.owner };
  });
});
