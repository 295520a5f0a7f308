/**
 * applyEnvironmentVariableChanges: PATCH /v1/environments/{environment_id}/variables (API_CONTRACT
 * §18), a change of many variables of a scope in one step. The rules shared by both scopes are
 * tested here, under the environment; applyComponentVariableChanges.test.ts tests the component's.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { createEnvironment } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import {
  applied,
  applyChanges,
  type ChangeResult,
  exportScope,
  listVersions,
  scopeState,
  setsWorld,
  storedText,
  upTo,
  versionNumbers,
} from "../../helpers/variable-sets";
import { createVariable, type ListBody, reveal, type VariableBody } from "../../helpers/variables";

const secret = (value: string) => ({ type: "secret", value });
const plain = (value: string) => ({ type: "string", value });

describe("PATCH /v1/environments/{id}/variables", () => {
  it("creates, updates and deletes in one step, answering each name's action by name, and makes one version", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const first = await applied(owner, base, {
      variables: { B_KEY: secret("b1"), A_URL: plain("https://a"), C_OLD: plain("c") },
    });
    expect(first).toEqual({
      version: 1,
      dry_run: false,
      changes: [
        { name: "A_URL", action: "created", type: { from: null, to: "string" }, value_changed: true },
        { name: "B_KEY", action: "created", type: { from: null, to: "secret" }, value_changed: true },
        { name: "C_OLD", action: "created", type: { from: null, to: "string" }, value_changed: true },
      ],
    });
    const before = await request<ListBody>("GET", base, { key: owner.key });
    const ids = Object.fromEntries(before.body.data.map((v) => [v.name, v]));
    const second = await applied(owner, base, {
      variables: {
        A_URL: plain("https://a"),
        B_KEY: secret("b2"),
        C_OLD: null,
        D_NEW: { type: "secure_string", value: "d" },
      },
    });
    expect(second).toEqual({
      version: 2,
      dry_run: false,
      changes: [
        { name: "A_URL", action: "unchanged", type: { from: "string", to: "string" }, value_changed: false },
        { name: "B_KEY", action: "updated", type: { from: "secret", to: "secret" }, value_changed: true },
        { name: "C_OLD", action: "deleted", type: { from: "string", to: null }, value_changed: true },
        { name: "D_NEW", action: "created", type: { from: null, to: "secure_string" }, value_changed: true },
      ],
    });
    expect(await scopeState(owner, base)).toEqual({
      A_URL: ["string", "https://a"],
      B_KEY: ["secret", "b2"],
      D_NEW: ["secure_string", "d"],
    });
    // Ordinary variable records: an updated one keeps its id and created_at; an unchanged one is untouched.
    const after = await request<ListBody>("GET", base, { key: owner.key });
    const now = Object.fromEntries(after.body.data.map((v) => [v.name, v]));
    expect(now.B_KEY?.id).toBe(ids.B_KEY?.id);
    expect(now.B_KEY?.created_at).toBe(ids.B_KEY?.created_at);
    expect(now.A_URL).toEqual(ids.A_URL);
    const created = now.D_NEW as VariableBody;
    expect(
      (await request<VariableBody>("GET", `/v1/variables/${created.id}`, { key: owner.key })).body,
    ).toEqual(created);
    expect((await reveal(owner, created.id)).body).toEqual({ value: "d" });
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
  });

  it("a type change with the same value is `updated` with value_changed false; a change that changes nothing makes no version", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { TOKEN: secret("same") } });
    const retyped = await applied(owner, base, { variables: { TOKEN: plain("same") } });
    expect(retyped.changes).toEqual([
      { name: "TOKEN", action: "updated", type: { from: "secret", to: "string" }, value_changed: false },
    ]);
    const again = await applyChanges(
      owner,
      base,
      { variables: { TOKEN: plain("same") } },
      { "x-request-id": "nothing-to-change" },
    );
    expect(again.body).toEqual({
      version: 2,
      dry_run: false,
      changes: [
        { name: "TOKEN", action: "unchanged", type: { from: "string", to: "string" }, value_changed: false },
      ],
    });
    expect(await rowsOf("nothing-to-change")).toEqual([]);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
  });

  it("replace mode leaves exactly the given names", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { KEEP: plain("k"), DROP_A: secret("a"), DROP_B: secret("b") } });
    const res = await applied(owner, base, {
      mode: "replace",
      variables: { KEEP: plain("k"), NEW: plain("n") },
    });
    expect(res.changes.map((c) => [c.name, c.action])).toEqual([
      ["DROP_A", "deleted"],
      ["DROP_B", "deleted"],
      ["KEEP", "unchanged"],
      ["NEW", "created"],
    ]);
    expect(await scopeState(owner, base)).toEqual({ KEEP: ["string", "k"], NEW: ["string", "n"] });
  });

  it("a dry run answers exactly what the change would do and changes nothing: no version, no entry, no updated_at", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: secret("a"), B: plain("b") } });
    const before = await request<ListBody>("GET", base, { key: owner.key });
    const body = { mode: "replace", variables: { A: secret("a2"), C: plain("c") } };
    const dry = await applyChanges(owner, base, { ...body, dry_run: true }, { "x-request-id": "a-dry-run" });
    expect(dry.status, dry.raw).toBe(200);
    expect(await rowsOf("a-dry-run")).toEqual([]);
    expect((await request<ListBody>("GET", base, { key: owner.key })).body).toEqual(before.body);
    expect(await versionNumbers(owner, base)).toEqual([1]);
    const real = await applied(owner, base, body);
    expect(dry.body).toEqual({ ...real, dry_run: true });
    expect(real.version).toBe(2);
  });

  it("imports a .env file with the dotenv rules of §18, every entry taking `type` (default secret)", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const dotenv = [
      "# the app's settings",
      "",
      'DATABASE_URL="postgres://u:p@db/app?x=\\"y\\""',
      "export LOG_LEVEL=debug # noisy",
      "SINGLE='a \\n # literal'",
      "   INDENTED=x",
      'MULTI="line1\\nline2\\r\\\\end"',
      "EMPTY=",
      "HASH=a#b",
    ].join("\r\n");
    const res = await applied(owner, base, { dotenv, dry_run: false });
    expect(res.changes.every((c) => c.action === "created" && c.type.to === "secret")).toBe(true);
    expect(await scopeState(owner, base)).toEqual({
      DATABASE_URL: ["secret", 'postgres://u:p@db/app?x="y"'],
      EMPTY: ["secret", ""],
      HASH: ["secret", "a#b"],
      INDENTED: ["secret", "x"],
      LOG_LEVEL: ["secret", "debug"],
      MULTI: ["secret", "line1\nline2\r\\end"],
      SINGLE: ["secret", "a \\n # literal"],
    });
    const typed = await applied(owner, base, { dotenv: "LOG_LEVEL=info\n", type: "string" });
    expect(typed.changes).toEqual([
      { name: "LOG_LEVEL", action: "updated", type: { from: "secret", to: "string" }, value_changed: true },
    ]);
  });

  it("answers 409 on base_version naming the current version, and applies at the current one", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: plain("1") } });
    for (const stale of [0, 2, 99]) {
      const res = await applyChanges(owner, base, { variables: { A: plain("2") }, base_version: stale });
      expectError(res, 409, "conflict", "base_version");
    }
    expect(await scopeState(owner, base)).toEqual({ A: ["string", "1"] });
    expect((await applied(owner, base, { variables: { A: plain("2") }, base_version: 1 })).version).toBe(2);
    // A dry run is held to it too.
    expectError(
      await applyChanges(owner, base, { variables: { A: plain("3") }, base_version: 1, dry_run: true }),
      409,
      "conflict",
      "base_version",
    );
  });

  it("refuses every malformed change with 400 and a cause path a user can act on, changing nothing", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { HELD: plain("h") } });
    const many = Object.fromEntries(upTo(501).map((i) => [`V${i}`, plain("x")]));
    const cases: Array<[unknown, string]> = [
      [{}, "variables"],
      [{ variables: {} }, "variables"],
      [{ variables: many }, "variables"],
      [{ variables: { A: plain("a") }, dotenv: "B=b" }, "dotenv"],
      [{ variables: { A: plain("a") }, type: "string" }, "type"],
      [{ variables: { "1BAD": plain("a") } }, "variables.1BAD"],
      [{ variables: { [`A${"b".repeat(255)}`]: plain("a") } }, `variables.A${"b".repeat(255)}`],
      [{ variables: { A: { type: "plain", value: "a" } } }, "variables.A.type"],
      [{ variables: { A: { type: "secret", value: "x".repeat(65_537) } } }, "variables.A.value"],
      [{ variables: { A: { type: "secret", value: 5 } } }, "variables.A.value"],
      [{ variables: { A: { type: "secret" } } }, "variables.A.value"],
      [{ variables: { A: { type: "secret", value: "a", extra: 1 } } }, "variables.A.extra"],
      [{ variables: { NOT_HELD: null } }, "variables.NOT_HELD"],
      [{ mode: "replace", variables: { HELD: null } }, "variables.HELD"],
      [{ mode: "sideways", variables: { A: plain("a") } }, "mode"],
      [{ variables: { A: plain("a") }, base_version: -1 }, "base_version"],
      [{ variables: { A: plain("a") }, base_version: 1.5 }, "base_version"],
      [{ variables: { A: plain("a") }, dry_run: "yes" }, "dry_run"],
      [{ variables: { A: plain("a") }, extra: true }, "extra"],
      [{ dotenv: "" }, "dotenv"],
      [{ dotenv: "# only a comment\n\n" }, "dotenv"],
      [{ dotenv: "A=1\nB=2\nA=3" }, "dotenv.line.3"],
      [{ dotenv: "A=1\r\nB\r\n" }, "dotenv.line.2"],
      [{ dotenv: "A=1\n\n1X=2" }, "dotenv.line.3"],
      [{ dotenv: 'A="open' }, "dotenv.line.1"],
      [{ dotenv: 'A="x" trailing' }, "dotenv.line.1"],
      [{ dotenv: "A='open" }, "dotenv.line.1"],
      [{ dotenv: `A=${"x".repeat(65_537)}` }, "dotenv.line.1"],
      [{ dotenv: Array.from(upTo(501), (i) => `V${i}=x`).join("\n") }, "dotenv"],
      [{ dotenv: "A=1", type: "text" }, "type"],
    ];
    for (const [body, path] of cases) {
      const res = await applyChanges(owner, base, body);
      expectError(res, 400, "bad_input", path);
    }
    expect(await scopeState(owner, base)).toEqual({ HELD: ["string", "h"] });
    expect(await versionNumbers(owner, base)).toEqual([1]);
  });

  it("a body of a huge number of bad names or lines is a short 400, never a 500", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    // 349,000 lines that are not entries (about 1 MiB): each one used to become a spread argument.
    const lines = await applyChanges(owner, base, { dotenv: "x\n".repeat(349_000) });
    const linesBody = expectError(lines, 400, "bad_input");
    expect(linesBody.cause).toHaveLength(100);
    expect(linesBody.cause?.[0]?.path).toBe("dotenv.line.1");
    expect(lines.raw.length).toBeLessThan(20_000);
    // 20,000 names (under 1 MiB): refused for their number before any is read.
    const names = Object.fromEntries(upTo(20_000).map((i) => [`V${i}`, plain("x")]));
    const many = await applyChanges(owner, base, { variables: names });
    const manyBody = expectError(many, 400, "bad_input", "variables");
    expect(manyBody.cause).toEqual([{ path: "variables", message: "Between 1 and 500 names; got 20000." }]);
    // 150 bad names within the limit: the first 100 are listed, and the message says how many.
    const bad = Object.fromEntries(upTo(150).map((i) => [`${i}BAD`, plain("x")]));
    const badBody = expectError(await applyChanges(owner, base, { variables: bad }), 400, "bad_input");
    expect(badBody.cause).toHaveLength(100);
    expect(badBody.message).toContain("The first 100 of 150 problems are listed.");
    expect(await versionNumbers(owner, base)).toEqual([]);
  });

  it("a deletion of a name the scope does not hold names it, and the rest of the change is not applied", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const res = await applyChanges(owner, base, {
      variables: { NEW: plain("n"), GONE: null, ALSO_GONE: null },
    });
    const body = expectError(res, 400, "bad_input");
    expect(body.cause?.map((c) => c.path).sort()).toEqual(["variables.ALSO_GONE", "variables.GONE"]);
    expect(await scopeState(owner, base)).toEqual({});
  });

  it("applies 500 names in one change, all or nothing", async () => {
    const { owner, paths, project } = await setsWorld();
    const base = paths.environment;
    const names = upTo(500).map((i) => `N_${String(i).padStart(3, "0")}`);
    const big = "v".repeat(1500);
    const res = await applied(owner, base, {
      variables: Object.fromEntries(
        names.map((n, i) => [n, { type: i % 2 ? "string" : "secret", value: `${n}:${big}` }]),
      ),
    });
    expect(res.changes.map((c) => c.name)).toEqual(names);
    expect(res.changes.every((c) => c.action === "created")).toBe(true);
    const exported = await exportScope(owner, base);
    expect(exported.raw.split("\n").filter(Boolean)).toEqual(names.map((n) => `${n}="${n}:${big}"`));
    expect(await versionNumbers(owner, base)).toEqual([1]);
    // No secret value in clear anywhere in the project's rows; `string` values are stored as they are.
    const text = await storedText(project.id);
    expect(text).not.toContain(`N_001:${big}`);
    expect(text).toContain(`N_002:${big}`);

    // …or nothing: 500 changes of which the last is invalid apply none of them.
    const refused = await applyChanges(owner, base, {
      variables: Object.fromEntries(
        names.map((n, i) => [n, i === 499 ? { type: "string" } : { type: "string", value: `changed:${n}` }]),
      ),
    });
    expectError(refused, 400, "bad_input");
    expect(await versionNumbers(owner, base)).toEqual([1]);
    expect((await exportScope(owner, base)).raw).toBe(exported.raw);
  });

  it("an optional field given null is one not given", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const nulls = { type: null, mode: null, base_version: null, dry_run: null };
    const res = await applyChanges(owner, base, { variables: { A: plain("a") }, dotenv: null, ...nulls });
    expect(res.body).toMatchObject({ version: 1, dry_run: false });
    const fromDotenv = await applyChanges(owner, base, { dotenv: "B=b", variables: null, ...nulls });
    expect(fromDotenv.body.changes).toEqual([
      { name: "B", action: "created", type: { from: null, to: "secret" }, value_changed: true },
    ]);
    expectError(
      await applyChanges(owner, base, { variables: null, dotenv: null }),
      400,
      "bad_input",
      "variables",
    );
  });

  it("names such as __proto__ and constructor are names like any other", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const sent = await request<ChangeResult>("PATCH", base, {
      key: owner.key,
      rawBody:
        '{"variables":{"__proto__":{"type":"secret","value":"p"},"constructor":{"type":"string","value":"c"}}}',
      headers: { "content-type": "application/json" },
    });
    expect(sent.status, sent.raw).toBe(200);
    expect(sent.body.changes.map((c) => c.name)).toEqual(["__proto__", "constructor"]);
    // As entries: in an object literal, `__proto__` would set the prototype.
    expect(Object.entries(await scopeState(owner, base)).sort()).toEqual([
      ["__proto__", ["secret", "p"]],
      ["constructor", ["string", "c"]],
    ]);
    const bad = await request("PATCH", base, {
      key: owner.key,
      rawBody: '{"variables":{"__proto__":{"type":"secret","value":1}}}',
      headers: { "content-type": "application/json" },
    });
    expectError(bad, 400, "bad_input", "variables.__proto__.value");
  });

  it("an environment's change is not its components' nor another environment's", async () => {
    const { owner, paths, project } = await setsWorld();
    const other = await createEnvironment(project.id);
    await createVariable(owner, paths.component, { name: "SHARED", type: "string", value: "component" });
    await applied(owner, paths.environment, { mode: "replace", variables: { SHARED: plain("env") } });
    expect(await scopeState(owner, paths.component)).toEqual({ SHARED: ["string", "component"] });
    expect(await scopeState(owner, `/v1/environments/${other.id}/variables`)).toEqual({});
    expect((await listVersions(owner, paths.environment)).body.data.map((v) => v.version)).toEqual([1]);
  });

  it("writes one audit entry: the scope as target, each changed name's types, never a value", async () => {
    const { owner, paths, environmentId, project } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { KEEP: plain("k"), OLD: secret("o") } });
    const res = await applyChanges(
      owner,
      base,
      { variables: { KEEP: plain("k"), OLD: null, NEW: secret("s3cr3t-entry") } },
      { "x-request-id": `audited-${environmentId}` },
    );
    expect(res.status).toBe(200);
    const [entry, ...more] = await rowsOf(`audited-${environmentId}`);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      action: "applyEnvironmentVariableChanges",
      target_type: "environment",
      target_id: environmentId,
      project_id: project.id,
    });
    expect(JSON.parse(entry?.changes as string)).toEqual({
      NEW: { from: null, to: "secret" },
      OLD: { from: "secret", to: null },
    });
    expect(JSON.stringify(entry)).not.toContain("s3cr3t-entry");
  });

  it("an unknown environment is 404", async () => {
    const { owner, paths } = await setsWorld();
    const res = await applyChanges(owner, "/v1/environments/1111111111111111111111/variables", {
      variables: { A: plain("a") },
    });
    expectError(res, 404, "not_found");
    expect(await versionNumbers(owner, paths.environment)).toEqual([]);
  });

  it("If-Match: `*` applies; a list of ETags never matches a scope (use base_version)", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const list = await request("GET", base, { key: owner.key });
    const tag = list.headers.get("etag") ?? "";
    const refused = await applyChanges(owner, base, { variables: { A: plain("a") } }, { "if-match": tag });
    expectError(refused, 409, "conflict", "header.if-match");
    // The refused change wrote nothing: `*` then makes version 1, which creates A.
    expect(await versionNumbers(owner, base)).toEqual([]);
    expect(await scopeState(owner, base)).toEqual({});
    const star = await applyChanges(owner, base, { variables: { A: plain("a") } }, { "if-match": "*" });
    expect(star.status, star.raw).toBe(200);
    expect(await versionNumbers(owner, base)).toEqual([1]);
    expect(await scopeState(owner, base)).toEqual({ A: ["string", "a"] });
  });

  runCommonRouteTests("PATCH /v1/environments/{id}/variables", async () => {
    const world = await setsWorld();
    return {
      method: "PATCH",
      path: world.paths.environment,
      body: { variables: { A: plain("a") } },
      caller: world.owner,
    };
  });
});
