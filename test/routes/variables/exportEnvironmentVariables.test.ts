/**
 * exportEnvironmentVariables: GET /v1/environments/{environment_id}/variables/export (API_CONTRACT
 * §18): the scope as a dotenv file, a reveal.
 */
import { describe, expect, it } from "vitest";
import { PRODUCTION_LIMITS, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { addProjectMember, createCaller } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, applyChanges, exportScope, setsWorld, versionNumbers } from "../../helpers/variable-sets";

describe("GET /v1/environments/{id}/variables/export", () => {
  it('writes one `NAME="value"` line per variable, sorted by name, every type, with exactly the four escapes', async () => {
    const { owner, paths, environmentId, project } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, {
      variables: {
        b_lower: { type: "string", value: "tab\there" },
        Z_SECRET: { type: "secret", value: "q\"uote\\back\nnew\rret #hash 'single' ✓ 𝄞" },
        A_SECURE: { type: "secure_string", value: "" },
        _UNDER: { type: "string", value: "$HOME $X `cmd`" },
      },
    });
    const res = await exportScope(owner, base, { "x-request-id": `export-${environmentId}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("etag")).toBeNull();
    expect(res.raw).toBe(
      [
        'A_SECURE=""',
        'Z_SECRET="q\\"uote\\\\back\\nnew\\rret #hash \'single\' ✓ 𝄞"',
        '_UNDER="$HOME $X `cmd`"',
        'b_lower="tab\there"',
        "",
      ].join("\n"),
    );
    // A reveal: one entry, with the names and never a value.
    const [entry, ...more] = await rowsOf(`export-${environmentId}`);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      action: "exportEnvironmentVariables",
      target_type: "environment",
      target_id: environmentId,
      project_id: project.id,
    });
    expect(JSON.parse(entry?.changes as string)).toEqual({
      names: { from: null, to: ["A_SECURE", "Z_SECRET", "_UNDER", "b_lower"] },
    });
    expect(entry?.changes).not.toContain('q\\"uote');
  });

  it("importing an export with mode replace and the scope's type changes nothing (import ∘ export is the identity)", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const values = [
      "",
      " padded ",
      "a#b",
      "a #b",
      "'",
      '"',
      "\\n",
      "\r\n",
      "=",
      "x=y",
      "# not a comment",
      "ü\u2028\u0000",
    ];
    await applied(owner, base, {
      variables: Object.fromEntries(values.map((value, i) => [`V${i}`, { type: "secure_string", value }])),
    });
    const exported = await exportScope(owner, base);
    const res = await applyChanges(owner, base, {
      dotenv: exported.raw,
      mode: "replace",
      type: "secure_string",
    });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.version).toBe(1);
    expect(res.body.changes).toHaveLength(values.length);
    expect(res.body.changes.every((c) => c.action === "unchanged")).toBe(true);
    expect(await versionNumbers(owner, base)).toEqual([1]);
    expect((await exportScope(owner, base)).raw).toBe(exported.raw);
  });

  it("an empty scope is an empty body (still recorded)", async () => {
    const { owner, paths, environmentId } = await setsWorld();
    const res = await exportScope(owner, paths.environment, {
      "x-request-id": `empty-export-${environmentId}`,
    });
    expect([res.status, res.raw]).toEqual([200, ""]);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await rowsOf(`empty-export-${environmentId}`)).toHaveLength(1);
  });

  it("needs a contributor (a viewer is 403 and sees nothing) and counts against the `reveal` policy", async () => {
    const { org, owner, project, paths } = await setsWorld();
    await applied(owner, paths.environment, {
      variables: { HIDDEN: { type: "secret", value: "viewers-never" } },
    });
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const denied = await exportScope(viewer, paths.environment);
    expectError(denied, 403, "forbidden");
    expect(denied.raw).not.toContain("viewers-never");
    const limited = await request("GET", `${paths.environment}/export`, {
      key: owner.key,
      bindings: PRODUCTION_LIMITS,
    });
    expect(limited.status).toBe(200);
    expect(limited.headers.get("ratelimit-policy")).toBe('"reveal";q=20;w=60');
    // One window with the value reveals.
    const before = Number(limited.headers.get("x-ratelimit-remaining"));
    const variable = (await request<{ data: { id: string }[] }>("GET", paths.environment, { key: owner.key }))
      .body.data[0];
    const reveal = await request("GET", `/v1/variables/${variable?.id}/value`, {
      key: owner.key,
      bindings: PRODUCTION_LIMITS,
    });
    expect(Number(reveal.headers.get("x-ratelimit-remaining"))).toBe(before - 1);
  });

  it("an unknown environment is 404", async () => {
    const { owner } = await setsWorld();
    expectError(
      await exportScope(owner, "/v1/environments/1111111111111111111111/variables"),
      404,
      "not_found",
    );
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables/export", async () => {
    const world = await setsWorld();
    return { method: "GET", path: `${world.paths.environment}/export`, caller: world.owner };
  });
});
