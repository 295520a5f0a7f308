/** createComponentVariable: POST /v1/components/{component_id}/variables, and names unique per component. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import { createComponent, createEnvironment } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import {
  componentPath,
  createRoute,
  createVariable,
  environmentPath,
  expectCreateRefused,
  expectOneOfConcurrentCreates,
  INVALID_BODIES,
  type ListBody,
  RECORD_KEYS,
  reveal,
  setup,
  type VariableBody,
} from "../../helpers/variables";

describe("POST /v1/components/{id}/variables", () => {
  it("creates a component variable that carries its component's environment", async () => {
    const { owner, project, componentId } = await setup();
    const otherEnv = await createEnvironment(project.id);
    const component = await createComponent(otherEnv.id);
    const res = await request<VariableBody>("POST", componentPath(component.id), {
      key: owner.key,
      body: { name: "DATABASE_URL", type: "secret", value: "postgres://x" },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(RECORD_KEYS);
    expect(res.body).toMatchObject({
      name: "DATABASE_URL",
      type: "secret",
      environment_id: otherEnv.id,
      component_id: component.id,
      resource_id: `/${project.id}/${otherEnv.id}/${component.id}/DATABASE_URL`,
    });
    expect(res.body.id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(res.body.created_at).toMatch(TS);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(res.raw).not.toContain("postgres://x");
    // Another component's list does not show it.
    const other = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
    expect(other.body.data).toEqual([]);
  });

  it.each(["secret", "secure_string", "string"])("stores and reveals a %s value", async (type) => {
    const { owner, componentId } = await setup();
    const value = `va lue ✓ ${type} "quoted" \n line`;
    const variable = await createVariable(owner, componentPath(componentId), { type, value });
    const res = await reveal(owner, variable.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ value });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it.each(INVALID_BODIES)("refuses %j with bad_input naming %s, and creates nothing", async (body, field) => {
    const { owner, componentId } = await setup();
    await expectCreateRefused(owner, componentPath(componentId), body, field);
  });

  it("a value is at most 65,536 bytes of UTF-8, counted in bytes, not characters", async () => {
    const { owner, componentId } = await setup();
    // "€" is 3 bytes: 21,845 of them and one ASCII byte make exactly 65,536 bytes.
    const exact = `${"€".repeat(21_845)}x`;
    const over = `${exact}y`;
    const fewCharsManyBytes = "🚀".repeat(16_385); // 32,770 UTF-16 units, 65,540 bytes
    for (const type of ["secret", "secure_string", "string"]) {
      const ok = await createVariable(owner, componentPath(componentId), { type, value: exact });
      expect((await reveal(owner, ok.id)).body.value).toBe(exact);
      for (const value of [over, fewCharsManyBytes, "a".repeat(65_537)]) {
        const res = await request<ErrorBody>("POST", componentPath(componentId), {
          key: owner.key,
          body: { name: "TOO_BIG", type, value },
        });
        expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
        expect(res.body.cause?.map((c) => c.path)).toEqual(["value"]);
        expect(res.raw.length).toBeLessThan(1000);
      }
    }
  });

  it("a malformed parent id is 400; an unknown one is 404", async () => {
    const { owner } = await setup();
    const body = { name: "A", type: "string", value: "x" };
    const bad = await request<ErrorBody>("POST", componentPath("nope!"), { key: owner.key, body });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    const missing = await request<ErrorBody>("POST", componentPath("a".repeat(32)), { key: owner.key, body });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests(
    "POST /v1/components/{id}/variables",
    createRoute((w) => componentPath(w.componentId)),
  );
});

describe("names are unique per scope", () => {
  it("409 on a clash in the same component; case-sensitive; other components and scopes are free", async () => {
    const { owner, environmentId, componentId } = await setup();
    const secondComponent = await createComponent(environmentId);
    await createVariable(owner, componentPath(componentId), { name: "API_KEY", value: "first-value" });
    const dup = await request<ErrorBody>("POST", componentPath(componentId), {
      key: owner.key,
      body: { name: "API_KEY", type: "string", value: "second-value" },
    });
    expect([dup.status, dup.body.code]).toEqual([409, "conflict"]);
    expect(dup.body.cause?.[0]?.path).toBe("name");
    expect(dup.raw).not.toContain("second-value");
    await createVariable(owner, componentPath(componentId), { name: "api_key" });
    await createVariable(owner, componentPath(secondComponent.id), { name: "API_KEY" });
    await createVariable(owner, environmentPath(environmentId), { name: "API_KEY" });
  });

  it("of concurrent creates of one name, exactly one wins and the others are 409, never 500", async () => {
    const { owner, componentId } = await setup();
    await expectOneOfConcurrentCreates(owner, componentPath(componentId));
  });
});
