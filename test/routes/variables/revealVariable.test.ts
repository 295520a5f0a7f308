/** revealVariable, and how values are kept: encrypted at rest, never in plaintext. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { variableKeyVersion } from "../../../src/crypto/variables";
import { PRODUCTION_LIMITS, request } from "../../helpers/api";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, environmentPath, reveal, setup } from "../../helpers/variables";

describe("GET /v1/variables/{id}/value", () => {
  it("is under the `reveal` rate-limit policy", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    // The production numbers (the test configuration raises every limit).
    const res = await request("GET", `/v1/variables/${variable.id}/value`, {
      key: owner.key,
      bindings: PRODUCTION_LIMITS,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("20");
    expect(res.headers.get("ratelimit-policy")).toBe('"reveal";q=20;w=60');
  });

  runCommonRouteTests("GET /v1/variables/{id}/value", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "GET", path: `/v1/variables/${variable.id}/value`, caller: owner };
  });
});

describe("encryption at rest", () => {
  it("no row of the variables table holds a secret or secure_string plaintext", async () => {
    const { owner, environmentId, componentId } = await setup();
    const marker = `MARKER${crypto.randomUUID().replace(/-/g, "")}`;
    const ids: string[] = [];
    for (const type of ["secret", "secure_string"]) {
      ids.push((await createVariable(owner, componentPath(componentId), { type, value: marker })).id);
      ids.push(
        (await createVariable(owner, environmentPath(environmentId), { type, value: `${marker}-env` })).id,
      );
      // Replaced values too, and the old value of a replace must not linger.
      const replaced = await createVariable(owner, componentPath(componentId), {
        type,
        value: `${marker}-old`,
      });
      await request("PUT", `/v1/variables/${replaced.id}`, {
        key: owner.key,
        body: { name: replaced.name, type, value: `${marker}-new` },
      });
      ids.push(replaced.id);
    }
    const { results } = await env.DB.prepare("SELECT * FROM variables").all<Record<string, unknown>>();
    const ours = results.filter((r) => ids.includes(String(r.id)));
    expect(ours).toHaveLength(ids.length);
    const dump = JSON.stringify(results);
    expect(dump).not.toContain(marker);
    // Not merely encoded: no base64 form of the marker either.
    expect(dump).not.toContain(btoa(marker).slice(0, 16));
    const version = await variableKeyVersion(env.VARIABLES_KEY);
    for (const row of ours) {
      expect(row.key_version).toBe(version);
      expect(String(row.value)).toMatch(/^v1\.\d+\./);
    }
    for (const id of ids) expect((await reveal(owner, id)).body.value).toContain(marker);
  });

  it("a string value is stored as plaintext with no key version (the contract)", async () => {
    const { owner, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId), {
      type: "string",
      value: "plain",
    });
    const row = await env.DB.prepare("SELECT value, key_version FROM variables WHERE id = ?")
      .bind(variable.id)
      .first();
    expect(row).toEqual({ value: "plain", key_version: null });
  });
});
