/** getEnvironmentVariableVersion: GET /v1/environments/{environment_id}/variables/versions/{version} (API_CONTRACT §18). */
import { describe, expect, it } from "vitest";
import { expectError } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import { applied, getVersion, listVersions, setsWorld } from "../../helpers/variable-sets";

describe("GET /v1/environments/{id}/variables/versions/{version}", () => {
  it("answers the version as the list shows it, with a strong ETag, never a value", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { A: { type: "secret", value: "never-in-a-version" } } });
    await applied(owner, base, { variables: { A: null, B: { type: "string", value: "b" } } });
    const listed = (await listVersions(owner, base)).body.data;
    for (const version of [1, 2]) {
      const res = await getVersion(owner, base, version);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(listed.find((v) => v.version === version));
      expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
      expect(res.raw).not.toContain("never-in-a-version");
    }
  });

  it("a version not made yet is 404; one that is not a positive integer is 400", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    expectError(await getVersion(owner, base, 1), 404, "not_found");
    await applied(owner, base, { variables: { A: { type: "string", value: "a" } } });
    expectError(await getVersion(owner, base, 2), 404, "not_found");
    expectError(await getVersion(owner, base, "99999999999999999999"), 404, "not_found");
    for (const bad of ["0", "-1", "1.5", "abc", "1e1", "0x1", " 1"]) {
      expectError(await getVersion(owner, base, encodeURIComponent(bad)), 400, "bad_input", "version");
    }
    expect((await getVersion(owner, base, "01")).body.version).toBe(1);
  });

  it("an unknown environment is 404 whatever the version", async () => {
    const { owner } = await setsWorld();
    expectError(
      await getVersion(owner, "/v1/environments/1111111111111111111111/variables", 1),
      404,
      "not_found",
    );
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables/versions/{version}", async () => {
    const world = await setsWorld();
    await applied(world.owner, world.paths.environment, { variables: { A: { type: "string", value: "a" } } });
    return { method: "GET", path: `${world.paths.environment}/versions/1`, caller: world.owner };
  });
});
