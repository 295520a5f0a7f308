/** internalReencryptVariables: POST /internal/v1/variables/reencrypt, the operator's rotation sweep, through the real Worker. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../../helpers/api";
import { createOrgWithOwner, createProject } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";
import { randomKey } from "../../../helpers/variables";

async function call(
  bindings: Record<string, string>,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const res = await request<Record<string, unknown>>(method, path, { headers, body, bindings });
  return { status: res.status, body: res.body };
}

describe("POST /internal/v1/variables/reencrypt", () => {
  it("moves every value under VARIABLES_KEY_PREVIOUS onto VARIABLES_KEY, in batches, then reports nothing remaining", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const oldKey = randomKey();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(
        { VARIABLES_KEY: oldKey },
        "POST",
        `/v1/environments/${project.default_environment_id}/variables`,
        { "x-api-key": owner.key },
        { name: `ROTATE_${i}`, type: "secret", value: `value-${i}` },
      );
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }

    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const rotated = { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey };
    const bad = await call(rotated, "POST", "/internal/v1/variables/reencrypt", admin, { limit: 0 });
    expect(bad.status).toBe(400);
    expect((await call(rotated, "POST", "/internal/v1/variables/reencrypt", {}, {})).status).toBe(401);

    let moved = 0;
    for (let i = 0; i < 50; i++) {
      const step = await call(rotated, "POST", "/internal/v1/variables/reencrypt", admin, { limit: 2 });
      expect(step.status).toBe(200);
      moved += step.body.reencrypted as number;
      if (!step.body.remaining) break;
    }
    // Only these rows are under this random key: the three values, and the three their versions keep.
    expect(moved).toBe(6);
    // The worker's own key alone now opens each of them.
    for (const [i, id] of ids.entries()) {
      const reveal = await request<{ value: string }>("GET", `/v1/variables/${id}/value`, { key: owner.key });
      expect(reveal.body).toEqual({ value: `value-${i}` });
    }
    const again = await call(rotated, "POST", "/internal/v1/variables/reencrypt", admin);
    expect(again.body).toMatchObject({ reencrypted: 0, remaining: false });
  });

  runInternalRouteTests("POST /internal/v1/variables/reencrypt", async () => ({
    method: "POST",
    path: "/internal/v1/variables/reencrypt",
    body: { limit: 2 },
  }));
});
