/**
 * Operations are built on their first request (src/http/operations.ts). Each entry of the table
 * (src/routes/index.ts) loads the module that declares its method and path; the table holds every
 * published operation and every internal one.
 */
import { describe, expect, it } from "vitest";
import { built, type Operation } from "../../src/http/operations";
import { declaredRoutes } from "../../src/http/route-meta";
import { documentedRoutes } from "../../src/openapi/document";
import { OPERATIONS } from "../../src/routes";
import { request } from "../helpers/api";
import { createApiKey, createOrgWithOwner } from "../helpers/factories";

const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

describe("the operation table", () => {
  it("holds each operation once, and each entry's module declares its method and path", async () => {
    const keys = OPERATIONS.map((o) => keyOf(o.method, o.path));
    expect(new Set(keys).size).toBe(keys.length);
    for (const operation of OPERATIONS) {
      const { meta, chain } = await built(operation);
      expect(keyOf(meta.method, meta.path)).toBe(keyOf(operation.method, operation.path));
      expect(meta.operationId).toBeTruthy();
      expect(chain.length).toBeGreaterThan(0);
    }
  });

  it("is every route the modules declare: all of /openapi.json, and every internal route", async () => {
    const declared = declaredRoutes(await documentedRoutes(OPERATIONS)).map((m) => keyOf(m.method, m.path));
    expect(new Set(declared)).toEqual(new Set(OPERATIONS.map((o) => keyOf(o.method, o.path))));
    const res = await request<{ paths: Record<string, Record<string, unknown>> }>("GET", "/openapi.json", {
      key: null,
    });
    const published = Object.entries(res.body.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ["get", "post", "put", "patch", "delete"].includes(method))
        .map((method) => keyOf(method, path)),
    );
    expect(published.length).toBeGreaterThan(40);
    for (const key of published) expect(declared).toContain(key);
  });

  it("an entry whose module declares another path is refused at its first use, and tried again after", async () => {
    let loads = 0;
    const { register } = await import("../../src/routes/projects/getProject");
    const wrong: Operation = {
      method: "get",
      path: "/v1/projects/{id}",
      load: async () => {
        loads++;
        return register;
      },
    };
    await expect(built(wrong)).rejects.toThrow("declares no such route");
    await expect(built(wrong)).rejects.toThrow("declares no such route");
    expect(loads).toBe(2);
  });

  it("serves the operation through the chain its module registered: validation, the handler, the meta", async () => {
    const { owner } = await createOrgWithOwner();
    // The route's declared scope, read from its module once built, is checked before its validator.
    const reader = await createApiKey(owner, { scopes: ["deployments:read"] });
    const refused = await request<{ code: string }>("GET", "/v1/projects/not-an-id", { key: reader.key });
    expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);
    // The route's own validator (a project id that is not one) answers.
    const bad = await request("GET", "/v1/projects/not-an-id", { key: owner.key });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "bad_input" });
    const current = await request<{ id: string }>("GET", "/v1/api-keys/current", { key: owner.key });
    expect(current.status).toBe(200);
    expect(current.body.id).toBeTruthy();
  });
});
