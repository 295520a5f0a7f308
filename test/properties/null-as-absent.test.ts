/**
 * An optional body field given `null` is one not given (its default, or "unchanged"), on the
 * public API and the engine's internal API alike: clients and engine fixtures written in
 * languages whose "no value" is `null` (Python's None, a Go nil pointer) send it for every
 * optional field, and SPEC.md and API_CONTRACT.md never refuse it. The document says so
 * (each such field is nullable), walked here so that a new route cannot forget it.
 */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { StackResourceRecord } from "../../src/schemas/resource";
import { internal, request } from "../helpers/api";
import {
  createDeployment,
  createProjectWithStack,
  createResource,
  createStack,
  unique,
} from "../helpers/factories";
import { one, setupIntegration, URL_OK } from "../helpers/integrations";
import { HTTP_METHODS, type JsonSchema, openApiDocument } from "../helpers/openapi";
import { allowTheLocalReceiver } from "../helpers/webhooks";

describe("the document: every optional body field takes null", () => {
  it("walks /openapi.json: each optional request-body property is nullable, nested ones too (PUT's echoed fields aside)", async () => {
    const doc = await openApiDocument();
    const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined => {
      let s = schema;
      for (let i = 0; s && typeof s.$ref === "string" && i < 10; i++) {
        s = doc.components.schemas?.[(s.$ref as string).replace("#/components/schemas/", "")];
      }
      return s;
    };
    const nullable = (schema: JsonSchema | undefined): boolean => {
      const s = resolve(schema);
      if (!s) return false;
      if (s.type === "null" || (Array.isArray(s.type) && s.type.includes("null"))) return true;
      // A schema that names no type (`{}`: any JSON value, a patch's `value`) takes null too.
      if (s.type === undefined && !["anyOf", "oneOf", "allOf", "enum", "const"].some((k) => k in s))
        return true;
      return ["anyOf", "oneOf"].some((k) => Array.isArray(s[k]) && (s[k] as JsonSchema[]).some(nullable));
    };
    const refused: string[] = [];
    let checked = 0;
    // An object inside a body (an integration's `configuration`): its optional fields too.
    const nested = (schema: JsonSchema | undefined, where: string, depth = 0): void => {
      const s = resolve(schema);
      if (!s || depth > 8) return;
      for (const k of ["anyOf", "oneOf", "allOf"]) {
        if (Array.isArray(s[k])) for (const part of s[k] as JsonSchema[]) nested(part, where, depth + 1);
      }
      if (s.items) nested(s.items as JsonSchema, `${where}[]`, depth + 1);
      const required = new Set((s.required as string[] | undefined) ?? []);
      for (const [name, field] of Object.entries((s.properties as Record<string, JsonSchema>) ?? {})) {
        if (!required.has(name)) {
          checked++;
          if (!nullable(field)) refused.push(`${where}.${name}`);
        }
        nested(field, `${where}.${name}`, depth + 1);
      }
    };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!(HTTP_METHODS as readonly string[]).includes(method)) continue;
        const body = resolve(operation.requestBody?.content?.["application/json"]?.schema);
        if (!body?.properties) continue;
        const required = new Set((body.required as string[] | undefined) ?? []);
        // A PUT carries the whole record (SPEC.md): the record's read-only fields are echoes of
        // what was read, checked against the path or ignored, not options.
        const record = resolve(
          operation.responses["200"] && "content" in operation.responses["200"]
            ? operation.responses["200"].content?.["application/json"]?.schema
            : undefined,
        );
        const echoed =
          method === "put" ? new Set(Object.keys((record?.properties as object) ?? {})) : new Set();
        for (const [name, schema] of Object.entries(body.properties as Record<string, JsonSchema>)) {
          if (required.has(name) || (echoed.has(name) && !nullable(schema))) continue;
          checked++;
          if (!nullable(schema)) refused.push(`${method.toUpperCase()} ${path} ${name}`);
        }
        for (const [name, schema] of Object.entries(body.properties as Record<string, JsonSchema>)) {
          nested(schema, `${method.toUpperCase()} ${path} ${name}`);
        }
      }
    }
    expect(refused).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});

describe("public API", () => {
  allowTheLocalReceiver();

  it("integration create, update, test send, recover and rotate-secret read null as not given", async () => {
    const { owner, project, path } = await setupIntegration({ changelog: true });
    const created = await request<{ id: string; configuration: Record<string, boolean> }>(
      "POST",
      `/v1/projects/${project.id}/notification-integrations`,
      { key: owner.key, body: { type: "webhook", url: URL_OK, configuration: null } },
    );
    expect(created.status, created.raw).toBe(201);
    expect(Object.values(created.body.configuration).every((flag) => flag === false)).toBe(true);

    const patched = await request<{ url: string; enabled: boolean; configuration: Record<string, boolean> }>(
      "PATCH",
      one(project.id, created.body.id),
      { key: owner.key, body: { url: null, enabled: null, configuration: { changelog: true } } },
    );
    expect(patched.status, patched.raw).toBe(200);
    expect([patched.body.url, patched.body.enabled, patched.body.configuration.changelog]).toEqual([
      URL_OK,
      true,
      true,
    ]);
    // Nothing but nulls is nothing to change.
    const empty = await request("PATCH", one(project.id, created.body.id), {
      key: owner.key,
      body: { url: null, configuration: null },
    });
    expect(empty.status, empty.raw).toBe(400);

    const sent = await request<{ delivered: boolean }>("POST", `${path}/test`, {
      key: owner.key,
      body: { type: null },
    });
    expect(sent.status, sent.raw).toBe(200);
    const recovered = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      body: { since: new Date(Date.now() - 3_600_000).toISOString(), until: null },
    });
    expect([recovered.status, recovered.body.queued], recovered.raw).toEqual([202, 0]);
    const before = Date.now();
    const rotated = await request<{ previous_expires_at: string }>("POST", `${path}/rotate-secret`, {
      key: owner.key,
      body: { expire_previous_in: null },
    });
    expect(rotated.status, rotated.raw).toBe(200);
    const expiresIn = Date.parse(rotated.body.previous_expires_at) - before;
    expect(expiresIn).toBeGreaterThanOrEqual(86_400_000 - 1_000);
    expect(expiresIn).toBeLessThanOrEqual(86_400_000 + 60_000);
  });

  it("a configuration flag given null is not given: false on create, unchanged on update", async () => {
    const { owner, project } = await setupIntegration();
    const created = await request<{ id: string; configuration: Record<string, boolean> }>(
      "POST",
      `/v1/projects/${project.id}/notification-integrations`,
      {
        key: owner.key,
        body: { type: "webhook", url: URL_OK, configuration: { changelog: null, promotions: true } },
      },
    );
    expect(created.status, created.raw).toBe(201);
    expect([created.body.configuration.changelog, created.body.configuration.promotions]).toEqual([
      false,
      true,
    ]);

    const path = one(project.id, created.body.id);
    const patched = await request<{ configuration: Record<string, boolean> }>("PATCH", path, {
      key: owner.key,
      body: { configuration: { promotions: null, changelog: true } },
    });
    expect(patched.status, patched.raw).toBe(200);
    expect([patched.body.configuration.changelog, patched.body.configuration.promotions]).toEqual([
      true,
      true,
    ]);

    // Only null flags: nothing to change, and nothing changes.
    const before = await request<{ updated_at: string }>("GET", path, { key: owner.key });
    const empty = await request("PATCH", path, {
      key: owner.key,
      body: { configuration: { promotions: null, changelog: null } },
    });
    expect(empty.status, empty.raw).toBe(400);
    const after = await request<{ updated_at: string }>("GET", path, { key: owner.key });
    expect(after.body).toEqual(before.body);
  });
});

describe("internal API (the engine's)", () => {
  it("a stack's and a resource's template_id null is the default; a resource's physical_id null keeps it", async () => {
    const { environmentId } = await createProjectWithStack();
    const stack = await internal<{ id: string; template_id: string }>(
      "POST",
      `/environments/${environmentId}/stacks`,
      {
        name: unique("stack"),
        template_id: null,
      },
    );
    expect(stack.status, stack.raw).toBe(201);
    expect(stack.body.template_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    const resource = await internal<StackResourceRecord>("POST", `/stacks/${stack.body.id}/resources`, {
      resource_type: "AWS::S3::Bucket",
      physical_id: "bucket-1",
      status: "create_complete",
      status_reason: null,
      template_id: null,
    });
    expect([resource.status, resource.body.template_id], resource.raw).toEqual([201, stack.body.template_id]);
    const updated = await internal<StackResourceRecord>("PATCH", `/resources/${resource.body.id}`, {
      status: "update_complete",
      physical_id: null,
    });
    expect([updated.status, updated.body.physical_id], updated.raw).toEqual([200, "bucket-1"]);
  });

  it("a deployment report's stacks null is none; an API key's scopes null are every scope", async () => {
    const { org, owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    const moved = await internal<DeploymentRecord>("PATCH", `/deployments/${deployment.id}`, {
      status: "in_progress",
      stacks: null,
    });
    expect([moved.status, moved.body.status], moved.raw).toEqual([200, "in_progress"]);

    const key = await internal<{ key: string }>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
      scopes: null,
      project_ids: null,
    });
    expect(key.status, key.raw).toBe(201);
    const current = await request<{ scopes: string[] }>("GET", "/v1/api-keys/current", { key: key.body.key });
    expect(current.body.scopes).toEqual(["*"]);
  });

  it("a patch item's `from` null is not given (value and old_value keep their null); an event's data null is none", async () => {
    const { project, environmentId, stack } = await createProjectWithStack();
    const created = await internal<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: [stack.id],
      data: {
        patch: [
          { op: "add", path: "/x", value: 1, from: null },
          { op: "replace", path: "/y", value: null, old_value: null, from: null },
        ],
      },
    });
    expect(created.status, created.raw).toBe(201);
    expect(created.body.data.patch).toEqual([
      { op: "add", path: "/x", value: 1 },
      { op: "replace", path: "/y", value: null, old_value: null },
    ]);
    // A `from` that is not null is still a string.
    const bad = await internal("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: [],
      data: { patch: [{ op: "move", path: "/a", from: 1 }] },
    });
    expect(bad.status, bad.raw).toBe(400);

    const event = await internal<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "service.ok",
      data: null,
    });
    expect(event.status, event.raw).toBe(202);
  });

  it("names of components, stacks and accounts are free strings, empty included (§9); an environment's is 1–100 (§23)", async () => {
    const { project, environmentId } = await createProjectWithStack();
    const env = await internal<{ name: string }>("POST", `/projects/${project.id}/environments`, {
      name: "",
    });
    const component = await internal<{ name: string }>("POST", `/environments/${environmentId}/components`, {
      name: "",
    });
    const stack = await createStack(environmentId, { name: "" });
    const account = await internal<{ name: string }>("POST", "/accounts", { name: "" });
    expect([env.status, component.status, account.status]).toEqual([400, 201, 201]);
    expect([component.body.name, (stack as { name?: string }).name, account.body.name]).toEqual(["", "", ""]);
    const resource = await createResource(stack.id, { physical_id: "" });
    expect(resource.physical_id).toBe("");
  });
});
