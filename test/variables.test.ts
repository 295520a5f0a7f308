import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../src/app";
import { variableKeyVersion } from "../src/crypto/variables";
import type { VariableRecord } from "../src/schemas/variable";
import { reencryptVariables } from "../src/services/variable-values";
import type { ApiResponse } from "./helpers/api";
import { serviceContext } from "./helpers/context";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createComponent,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  unique,
} from "./helpers/factories";
// Every response of these tests is also checked against /openapi.json.
import { checkedRequest as request } from "./helpers/openapi";
import { runCommonRouteTests } from "./helpers/security";

type VariableBody = VariableRecord;
type ListBody = { data: VariableBody[]; has_more: boolean; next_page?: string };
type ErrorBody = { code: string; message: string; cause?: Array<{ path: string; message: string }> };

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RECORD_KEYS = [
  "component_id",
  "created_at",
  "environment_id",
  "id",
  "name",
  "resource_id",
  "type",
  "updated_at",
];

/** An organization, a project, its default environment and one component in it. */
async function setup() {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const component = await createComponent(environmentId);
  return { org, owner, project, environmentId, componentId: component.id };
}

const componentPath = (id: string) => `/v1/components/${id}/variables`;
const environmentPath = (id: string) => `/v1/environments/${id}/variables`;

async function createVariable(
  caller: Caller,
  parentPath: string,
  body: { name?: string; type?: string; value?: string } = {},
): Promise<VariableBody> {
  const res = await request<VariableBody>("POST", parentPath, {
    key: caller.key,
    body: { name: unique("V").replace(/-/g, "_"), type: "secret", value: "v", ...body },
  });
  if (res.status !== 201) throw new Error(`create variable → ${res.status} ${res.raw}`);
  return res.body;
}

async function reveal(caller: Caller, id: string): Promise<ApiResponse<{ value: string }>> {
  return request<{ value: string }>("GET", `/v1/variables/${id}/value`, { key: caller.key });
}

describe("POST /v1/components/{id}/variables and /v1/environments/{id}/variables", () => {
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

  it("creates an environment variable with component_id null and `_` in its resource_id", async () => {
    const { owner, project, environmentId } = await setup();
    const res = await request<VariableBody>("POST", environmentPath(environmentId), {
      key: owner.key,
      body: { name: "LOG_LEVEL", type: "string", value: "debug" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      environment_id: environmentId,
      component_id: null,
      resource_id: `/${project.id}/${environmentId}/_/LOG_LEVEL`,
    });
    expect(res.raw).not.toContain("debug");
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

  it.each([
    [{ type: "secret", value: "x" }, "name"],
    [{ name: "", type: "secret", value: "x" }, "name"],
    [{ name: "1ABC", type: "secret", value: "x" }, "name"],
    [{ name: "A-B", type: "secret", value: "x" }, "name"],
    [{ name: "ÄPI", type: "secret", value: "x" }, "name"],
    [{ name: "A".repeat(256), type: "secret", value: "x" }, "name"],
    [{ name: "A", value: "x" }, "type"],
    [{ name: "A", type: "plain", value: "x" }, "type"],
    [{ name: "A", type: "secret" }, "value"],
    [{ name: "A", type: "secret", value: 5 }, "value"],
    [{ name: "A", type: "secret", value: null }, "value"],
    [{ name: "A", type: "secret", value: "x", extra: true }, "extra"],
  ])("refuses %j with bad_input naming %s, and creates nothing", async (body, field) => {
    const { owner, componentId, environmentId } = await setup();
    for (const path of [componentPath(componentId), environmentPath(environmentId)]) {
      const res = await request<ErrorBody>("POST", path, { key: owner.key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("bad_input");
      expect(res.body.cause?.map((c) => c.path)).toContain(field);
      const list = await request<ListBody>("GET", path, { key: owner.key });
      expect(list.body.data).toEqual([]);
    }
  });

  it("accepts names of 255 characters, underscores and digits after the first character", async () => {
    const { owner, environmentId } = await setup();
    for (const name of ["_", "_9", "a1_B2", `A${"b".repeat(254)}`]) {
      const res = await request("POST", environmentPath(environmentId), {
        key: owner.key,
        body: { name, type: "string", value: "" },
      });
      expect(res.status).toBe(201);
    }
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
    for (const path of [componentPath("a".repeat(32)), environmentPath("a".repeat(32))]) {
      const missing = await request<ErrorBody>("POST", path, { key: owner.key, body });
      expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    }
  });

  runCommonRouteTests("POST /v1/components/{id}/variables", async () => {
    const { owner, componentId } = await setup();
    return {
      method: "POST",
      path: componentPath(componentId),
      body: { name: "A", type: "secret", value: "x" },
      caller: owner,
    };
  });

  runCommonRouteTests("POST /v1/environments/{id}/variables", async () => {
    const { owner, environmentId } = await setup();
    return {
      method: "POST",
      path: environmentPath(environmentId),
      body: { name: "A", type: "secret", value: "x" },
      caller: owner,
    };
  });
});

describe("names are unique per scope", () => {
  it("409 on a clash in the same scope; case-sensitive; other scopes are free", async () => {
    const { owner, project, environmentId, componentId } = await setup();
    const secondComponent = await createComponent(environmentId);
    const otherEnv = await createEnvironment(project.id);
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
    await createVariable(owner, environmentPath(otherEnv.id), { name: "API_KEY" });
    const envDup = await request<ErrorBody>("POST", environmentPath(environmentId), {
      key: owner.key,
      body: { name: "API_KEY", type: "secret", value: "x" },
    });
    expect([envDup.status, envDup.body.code]).toEqual([409, "conflict"]);
  });

  it("of concurrent creates of one name, exactly one wins and the others are 409, never 500", async () => {
    const { owner, componentId, environmentId } = await setup();
    for (const path of [componentPath(componentId), environmentPath(environmentId)]) {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          request<ErrorBody>("POST", path, {
            key: owner.key,
            body: { name: "RACE", type: i % 2 ? "secret" : "string", value: `v${i}` },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      const list = await request<ListBody>("GET", path, { key: owner.key });
      expect(list.body.data.map((v) => v.name)).toEqual(["RACE"]);
    }
  });

  it("a rename onto a taken name is 409 and changes nothing", async () => {
    const { owner, componentId } = await setup();
    const a = await createVariable(owner, componentPath(componentId), { name: "A", value: "a-value" });
    await createVariable(owner, componentPath(componentId), { name: "B" });
    const res = await request<ErrorBody>("PUT", `/v1/variables/${a.id}`, {
      key: owner.key,
      body: { name: "B", type: "secret", value: "changed" },
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    expect((await request("GET", `/v1/variables/${a.id}`, { key: owner.key })).body).toEqual(a);
    expect((await reveal(owner, a.id)).body.value).toBe("a-value");
  });
});

describe("GET /v1/variables/{id}", () => {
  it("reads the record, never the value", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { value: "hidden-value" });
    const res = await request<VariableBody>("GET", `/v1/variables/${variable.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(variable);
    expect(res.raw).not.toContain("hidden-value");
    const missing = await request<ErrorBody>("GET", `/v1/variables/${"a".repeat(32)}`, { key: owner.key });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/variables/x", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests("GET /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "GET", path: `/v1/variables/${variable.id}`, caller: owner };
  });
});

describe("PUT /v1/variables/{id}", () => {
  it("replaces name, type and value; keeps id, scope and created_at", async () => {
    const { owner, project, environmentId, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { name: "OLD", value: "old" });
    for (const [type, value] of [
      ["string", "plain now"],
      ["secure_string", "secure now"],
      ["secret", "secret again"],
    ] as const) {
      const res = await request<VariableBody>("PUT", `/v1/variables/${variable.id}`, {
        key: owner.key,
        body: { name: `NEW_${type}`, type, value },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: variable.id,
        name: `NEW_${type}`,
        type,
        environment_id: environmentId,
        component_id: componentId,
        resource_id: `/${project.id}/${environmentId}/${componentId}/NEW_${type}`,
        created_at: variable.created_at,
      });
      expect(res.body.updated_at >= variable.updated_at).toBe(true);
      expect(res.raw).not.toContain(value);
      expect((await reveal(owner, variable.id)).body.value).toBe(value);
    }
    // The old name is free again.
    await createVariable(owner, componentPath(componentId), { name: "OLD" });
  });

  it("is a full replace: every field is required; bad input changes nothing", async () => {
    const { owner, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId), { value: "kept" });
    for (const [body, field] of [
      [{ name: "X", type: "secret" }, "value"],
      [{ name: "X", value: "y" }, "type"],
      [{ type: "secret", value: "y" }, "name"],
      [{ name: "X", type: "secret", value: "y", component_id: "1111111111111111111111" }, "component_id"],
      [{ name: "X", type: "secret", value: "€".repeat(21_846) }, "value"],
    ] as const) {
      const res = await request<ErrorBody>("PUT", `/v1/variables/${variable.id}`, { key: owner.key, body });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.cause?.map((c) => c.path)).toContain(field);
    }
    expect((await request("GET", `/v1/variables/${variable.id}`, { key: owner.key })).body).toEqual(variable);
    expect((await reveal(owner, variable.id)).body.value).toBe("kept");
    const missing = await request<ErrorBody>("PUT", `/v1/variables/${"a".repeat(32)}`, {
      key: owner.key,
      body: { name: "X", type: "secret", value: "y" },
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("PUT /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return {
      method: "PUT",
      path: `/v1/variables/${variable.id}`,
      body: { name: "A", type: "secret", value: "x" },
      caller: owner,
    };
  });
});

describe("DELETE /v1/variables/{id}", () => {
  it("deletes; the variable is then 404 everywhere and its name is free", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { name: "GONE" });
    const res = await request("DELETE", `/v1/variables/${variable.id}`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    for (const [method, path] of [
      ["GET", `/v1/variables/${variable.id}`],
      ["GET", `/v1/variables/${variable.id}/value`],
      ["DELETE", `/v1/variables/${variable.id}`],
    ] as const) {
      const after = await request<ErrorBody>(method, path, { key: owner.key });
      expect([after.status, after.body.code]).toEqual([404, "not_found"]);
    }
    await createVariable(owner, componentPath(componentId), { name: "GONE" });
  });

  it("deleting the project deletes its variables", async () => {
    const { owner, project, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId));
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const row = await env.DB.prepare("SELECT id FROM variables WHERE id = ?").bind(variable.id).first();
    expect(row).toBeNull();
  });

  runCommonRouteTests("DELETE /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "DELETE", path: `/v1/variables/${variable.id}`, caller: owner };
  });
});

describe("GET /v1/variables/{id}/value", () => {
  it("is under the `reveal` rate-limit policy", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    const res = await reveal(owner, variable.id);
    expect(res.headers.get("x-ratelimit-limit")).toBe("20");
    expect(res.headers.get("ratelimit-policy")).toBe('"reveal";q=20;w=60');
  });

  runCommonRouteTests("GET /v1/variables/{id}/value", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "GET", path: `/v1/variables/${variable.id}/value`, caller: owner };
  });
});

describe("lists", () => {
  it("an environment lists only its own variables; a component only its own", async () => {
    const { owner, environmentId, componentId } = await setup();
    const envVar = await createVariable(owner, environmentPath(environmentId), { name: "ENV_ONLY" });
    const compVar = await createVariable(owner, componentPath(componentId), { name: "COMP_ONLY" });
    const byEnv = await request<ListBody>("GET", environmentPath(environmentId), { key: owner.key });
    expect(byEnv.status).toBe(200);
    expect(byEnv.body).toEqual({ data: [envVar], has_more: false });
    const byComp = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
    expect(byComp.body).toEqual({ data: [compVar], has_more: false });
  });

  it.each([
    ["component", "created_at"],
    ["component", "+created_at"],
    ["component", "-created_at"],
    ["environment", "-created_at"],
    ["environment", "created_at"],
  ] as const)("pages through a %s's variables once each, in order, sort_by=%s", async (parent, sortBy) => {
    const { owner, environmentId, componentId } = await setup();
    const path = parent === "component" ? componentPath(componentId) : environmentPath(environmentId);
    const created: VariableBody[] = [];
    for (let i = 0; i < 7; i++)
      created.push(await createVariable(owner, path, { name: `V${i}`, value: `s${i}` }));
    const ascending = [...created].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
    );
    const expected = sortBy === "-created_at" ? ascending.reverse() : ascending;
    const seen: VariableBody[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const query = new URLSearchParams({ limit: "3", sort_by: sortBy });
      if (after) query.set("after", after);
      const res = await request<ListBody>("GET", `${path}?${query}`, { key: owner.key });
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      expect(res.raw).not.toMatch(/"s\d"/);
      if (!res.body.has_more) {
        expect("next_page" in res.body).toBe(false);
        break;
      }
      expect(res.body.next_page).toMatch(/^[a-zA-Z0-9+/=]+$/);
      after = res.body.next_page;
    }
    expect(seen.map((v) => v.id)).toEqual(expected.map((v) => v.id));
  });

  it("the default order is -created_at and the default limit 20; bad query values are 400", async () => {
    const { owner, environmentId } = await setup();
    const a = await createVariable(owner, environmentPath(environmentId), { name: "A" });
    const b = await createVariable(owner, environmentPath(environmentId), { name: "B" });
    const res = await request<ListBody>("GET", environmentPath(environmentId), { key: owner.key });
    const expected = [a, b].sort((x, y) => (x.created_at + x.id < y.created_at + y.id ? 1 : -1));
    expect(res.body.data.map((v) => v.id)).toEqual(expected.map((v) => v.id));
    for (const query of ["limit=0", "limit=241", "sort_by=name", "after=%%%", "after=bm90IGEgY3Vyc29y"]) {
      const bad = await request<ErrorBody>("GET", `${environmentPath(environmentId)}?${query}`, {
        key: owner.key,
      });
      expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    }
    const page = await request<ListBody>("GET", `${environmentPath(environmentId)}?limit=1`, {
      key: owner.key,
    });
    const otherOrder = await request<ErrorBody>(
      "GET",
      `${environmentPath(environmentId)}?limit=1&sort_by=created_at&after=${encodeURIComponent(page.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect([otherOrder.status, otherOrder.body.code]).toEqual([400, "bad_input"]);
  });

  it("an unknown or invisible parent is 404", async () => {
    const { owner } = await setup();
    for (const path of [componentPath("a".repeat(32)), environmentPath("a".repeat(32))]) {
      const res = await request<ErrorBody>("GET", path, { key: owner.key });
      expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    }
  });

  runCommonRouteTests("GET /v1/components/{id}/variables", async () => {
    const { owner, componentId } = await setup();
    return { method: "GET", path: componentPath(componentId), caller: owner };
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables", async () => {
    const { owner, environmentId } = await setup();
    return { method: "GET", path: environmentPath(environmentId), caller: owner };
  });
});

describe("roles", () => {
  it("a viewer reads records and lists, and is 403 forbidden for every write and for the value", async () => {
    const { org, owner, project, environmentId, componentId } = await setup();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const variable = await createVariable(owner, componentPath(componentId), {
      value: "viewer-must-not-see",
    });
    expect((await request("GET", `/v1/variables/${variable.id}`, { key: viewer.key })).status).toBe(200);
    expect((await request("GET", componentPath(componentId), { key: viewer.key })).status).toBe(200);
    expect((await request("GET", environmentPath(environmentId), { key: viewer.key })).status).toBe(200);
    const body = { name: "V", type: "secret", value: "x" };
    for (const [method, path, withBody] of [
      ["GET", `/v1/variables/${variable.id}/value`, false],
      ["PUT", `/v1/variables/${variable.id}`, true],
      ["DELETE", `/v1/variables/${variable.id}`, false],
      ["POST", componentPath(componentId), true],
      ["POST", environmentPath(environmentId), true],
    ] as const) {
      const res = await request<ErrorBody>(method, path, {
        key: viewer.key,
        body: withBody ? body : undefined,
      });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, "forbidden"]);
      expect(res.raw).not.toContain("viewer-must-not-see");
    }
    expect((await reveal(owner, variable.id)).body.value).toBe("viewer-must-not-see");
  });

  it("a contributor does everything; an org member outside the project sees nothing (404)", async () => {
    const { org, owner, project, componentId } = await setup();
    const contributor = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, contributor, "contributor");
    const variable = await createVariable(contributor, componentPath(componentId), { value: "c" });
    expect((await reveal(contributor, variable.id)).body.value).toBe("c");
    const put = await request("PUT", `/v1/variables/${variable.id}`, {
      key: contributor.key,
      body: { name: "C", type: "string", value: "d" },
    });
    expect(put.status).toBe(200);
    for (const [method, path] of [
      ["GET", `/v1/variables/${variable.id}`],
      ["GET", `/v1/variables/${variable.id}/value`],
      ["GET", componentPath(componentId)],
      ["DELETE", `/v1/variables/${variable.id}`],
    ] as const) {
      const res = await request<ErrorBody>(method, path, { key: outsider.key });
      expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    }
    expect((await request("DELETE", `/v1/variables/${variable.id}`, { key: contributor.key })).status).toBe(
      204,
    );
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

/** The real app and runtime, with the Worker's bindings overridden. */
async function callApp(
  bindings: Partial<Env> & Record<string, unknown>,
  method: string,
  path: string,
  key: string,
  body?: unknown,
) {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, {
      method,
      headers: {
        "x-api-key": key,
        accept: "application/json",
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, ...bindings },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, raw: await res.text() };
}

describe("key configuration", () => {
  it.each([
    ["missing", ""],
    ["malformed", "not-base64!"],
    ["the wrong size", btoa("sixteen-byte-key")],
  ])(
    "a %s VARIABLES_KEY fails encrypted writes and reveals with 500 internal, loudly, never in plaintext",
    async (_, bad) => {
      const { owner, componentId } = await setup();
      const existing = await createVariable(owner, componentPath(componentId), { value: "sealed-value" });
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        const broken = { VARIABLES_KEY: bad };
        for (const type of ["secret", "secure_string"]) {
          const create = await callApp(broken, "POST", componentPath(componentId), owner.key, {
            name: `NEW_${type}`,
            type,
            value: "would-be-plaintext",
          });
          expect(create.status).toBe(500);
          expect(JSON.parse(create.raw).code).toBe("internal");
          expect(create.raw).not.toContain("would-be-plaintext");
          const replace = await callApp(broken, "PUT", `/v1/variables/${existing.id}`, owner.key, {
            name: "CHANGED",
            type,
            value: "would-be-plaintext",
          });
          expect(replace.status).toBe(500);
        }
        const revealed = await callApp(broken, "GET", `/v1/variables/${existing.id}/value`, owner.key);
        expect(revealed.status).toBe(500);
        expect(JSON.parse(revealed.raw)).toEqual({ code: "internal", message: expect.any(String) });
        expect(revealed.raw).not.toContain("sealed-value");

        const logged = errors.mock.calls.map((args) => args.map(String).join(" "));
        expect(logged.some((line) => line.includes("VARIABLES_KEY"))).toBe(true);
        expect(logged.join("\n")).not.toContain("would-be-plaintext");
        expect(logged.join("\n")).not.toContain("sealed-value");

        // Plain `string` variables need no key and keep working.
        const plain = await callApp(broken, "POST", componentPath(componentId), owner.key, {
          name: "PLAIN",
          type: "string",
          value: "p",
        });
        expect(plain.status).toBe(201);
      } finally {
        errors.mockRestore();
      }
      // Nothing was written by the failed requests: the existing variable is unchanged and no NEW_* exists.
      const list = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
      expect(list.body.data.map((v) => v.name).sort()).toEqual([existing.name, "PLAIN"].sort());
      expect((await reveal(owner, existing.id)).body.value).toBe("sealed-value");
    },
  );

  it("rotation: rows under VARIABLES_KEY_PREVIOUS still reveal; writes move them to the new key", async () => {
    const { owner, environmentId } = await setup();
    const newKey = randomKey();
    const old = await createVariable(owner, environmentPath(environmentId), { value: "under-old-key" });
    const rotated = { VARIABLES_KEY: newKey, VARIABLES_KEY_PREVIOUS: env.VARIABLES_KEY };
    const read = await callApp(rotated, "GET", `/v1/variables/${old.id}/value`, owner.key);
    expect([read.status, JSON.parse(read.raw)]).toEqual([200, { value: "under-old-key" }]);

    const rewrite = await callApp(rotated, "PUT", `/v1/variables/${old.id}`, owner.key, {
      name: old.name,
      type: "secret",
      value: "under-new-key",
    });
    expect(rewrite.status).toBe(200);
    const row = await env.DB.prepare("SELECT key_version FROM variables WHERE id = ?").bind(old.id).first();
    expect(row?.key_version).toBe(await variableKeyVersion(newKey));
    const after = await callApp({ VARIABLES_KEY: newKey }, "GET", `/v1/variables/${old.id}/value`, owner.key);
    expect(JSON.parse(after.raw)).toEqual({ value: "under-new-key" });

    // Without the previous key, a row still under it fails loudly rather than leaking anything.
    const stale = await createVariable(owner, environmentPath(environmentId), { value: "stale" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const lost = await callApp(
        { VARIABLES_KEY: newKey },
        "GET",
        `/v1/variables/${stale.id}/value`,
        owner.key,
      );
      expect(lost.status).toBe(500);
      expect(errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")).toMatch(/key version/);
    } finally {
      errors.mockRestore();
    }
  });

  it("the rotation sweep moves rows from VARIABLES_KEY_PREVIOUS onto VARIABLES_KEY in batches", async () => {
    const { owner, environmentId, componentId } = await setup();
    const oldKey = randomKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const path = i % 2 ? componentPath(componentId) : environmentPath(environmentId);
      const res = await callApp({ VARIABLES_KEY: oldKey }, "POST", path, owner.key, {
        name: `R${i}`,
        type: i % 2 ? "secret" : "secure_string",
        value: `rotated-${i}`,
      });
      expect(res.status).toBe(201);
      ids.push((JSON.parse(res.raw) as VariableBody).id);
    }
    const before = await Promise.all(
      ids.map((id) => request("GET", `/v1/variables/${id}`, { key: owner.key })),
    );
    const rotated = serviceContext({ VARIABLES_KEY_PREVIOUS: oldKey }, "internal.reencryptVariables");
    const batches: number[] = [];
    for (let i = 0; i < 10; i++) {
      const step = await reencryptVariables(rotated, 2);
      expect(step.key_version).toBe(await variableKeyVersion(env.VARIABLES_KEY));
      expect(step.previous_key_version).toBe(await variableKeyVersion(oldKey));
      batches.push(step.reencrypted);
      if (!step.remaining) break;
    }
    expect(batches).toEqual([2, 2, 1]);
    expect((await reencryptVariables(rotated, 2)).reencrypted).toBe(0);
    expect((await reencryptVariables(serviceContext(), 2)).reencrypted).toBe(0);
    const current = await variableKeyVersion(env.VARIABLES_KEY);
    for (const [i, id] of ids.entries()) {
      const row = await env.DB.prepare("SELECT key_version FROM variables WHERE id = ?").bind(id).first();
      expect(row?.key_version).toBe(current);
      // The worker's own key now opens every row: the previous key can be dropped.
      expect((await reveal(owner, id)).body).toEqual({ value: `rotated-${i}` });
      // Not a change to the variable: the record, updated_at included, is as before.
      expect((await request("GET", `/v1/variables/${id}`, { key: owner.key })).body).toEqual(before[i]?.body);
    }
  });

  it("a ciphertext copied onto another row does not decrypt there", async () => {
    const { owner, componentId } = await setup();
    const a = await createVariable(owner, componentPath(componentId), { value: "belongs-to-a" });
    const b = await createVariable(owner, componentPath(componentId), { value: "belongs-to-b" });
    await env.DB.prepare(
      "UPDATE variables SET value = (SELECT value FROM variables WHERE id = ?1), key_version = (SELECT key_version FROM variables WHERE id = ?1) WHERE id = ?2",
    )
      .bind(a.id, b.id)
      .run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const res = await reveal(owner, b.id);
      expect([res.status, (res.body as unknown as ErrorBody).code]).toEqual([500, "internal"]);
      expect(res.raw).not.toContain("belongs-to");
      expect(errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")).toContain(b.id);
    } finally {
      errors.mockRestore();
    }
    expect((await reveal(owner, a.id)).body.value).toBe("belongs-to-a");
  });
});

function randomKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}
