import { describe, expect, it } from "vitest";
import { RATE_LIMIT_POLICIES } from "../../../src/config";
import { ERROR_CODES } from "../../../src/errors";
import { isKeylessOperation } from "../../../src/http/keyless";
import { ID_PATTERN } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import {
  type JsonSchema,
  type OpenApiOperation,
  type OpenApiResponse,
  openApiDocument,
  operations,
  resolveParameters,
} from "../../helpers/openapi";

/** Lists in `seq` order, with `after_seq` and no `sort_by` (API_CONTRACT §19). */
const SEQ_ORDERED_LISTS = new Set(["getDeploymentTimeline"]);

const SHARED_ERROR_STATUSES = ["400", "401", "403", "404", "408", "409", "429", "500", "501"];

function refName(schema: JsonSchema | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === "string" ? ref.replace("#/components/schemas/", "") : undefined;
}

function successStatuses(operation: Pick<OpenApiOperation, "responses">): string[] {
  return Object.keys(operation.responses).filter((s) => s.startsWith("2"));
}

describe("/openapi.json", () => {
  it("is OpenAPI 3.1, served without a key, with the ApiKey (x-api-key header) scheme", async () => {
    const res = await request("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = await openApiDocument();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.components.securitySchemes?.ApiKey).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  it("publishes no /internal path and nothing outside /v1", async () => {
    const doc = await openApiDocument();
    const paths = Object.keys(doc.paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(path).not.toMatch(/internal/);
      expect(path).toMatch(/^\/v1\//);
    }
  });

  it("gives every operation a unique operationId, the ApiKey requirement and a rate-limit policy", async () => {
    const ops = await operations();
    const ids = ops.map(({ operation }) => operation.operationId);
    for (const [i, id] of ids.entries()) {
      expect(id, `${ops[i]?.method} ${ops[i]?.path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const { method, path, operation } of ops) {
      // API_CONTRACT §27: the token exchange is the one operation that takes no key.
      const keyless = isKeylessOperation(method, path);
      expect(operation.security, `${method} ${path}`).toEqual(keyless ? [] : [{ ApiKey: [] }]);
      expect(Object.keys(RATE_LIMIT_POLICIES)).toContain(operation["x-rate-limit-policy"]);
    }
  });

  it("declares the shared error responses (the Error schema) and one success status on every operation", async () => {
    const doc = await openApiDocument();
    const error = doc.components.schemas?.Error;
    expect(error).toMatchObject({ type: "object", required: ["code", "message"] });
    const errorProps = error?.properties as Record<string, JsonSchema>;
    expect(errorProps.code?.enum).toEqual(ERROR_CODES);
    for (const { method, path, operation } of await operations()) {
      const where = `${method} ${path}`;
      for (const status of SHARED_ERROR_STATUSES) {
        const schema = operation.responses[status]?.content?.["application/json"]?.schema;
        expect(refName(schema), `${where} ${status}`).toBe("Error");
      }
      // One success, but a promotion's: `201` the new deployment, `200` its plan (API_CONTRACT §25).
      if (operation.operationId === "promoteDeployment") {
        expect(successStatuses(operation), where).toEqual(["200", "201"]);
      } else {
        expect(successStatuses(operation), where).toHaveLength(1);
      }
    }
  });

  it("documents the request-id and rate-limit headers on every response, and Retry-After on 429", async () => {
    const rateLimitHeaders = [
      "X-Ratelimit-Limit",
      "X-Ratelimit-Remaining",
      "X-Ratelimit-Reset",
      "RateLimit-Policy",
      "RateLimit",
      "Access-Control-Allow-Origin",
    ];
    const doc = await openApiDocument();
    for (const { method, path, operation } of await operations()) {
      for (const [status, declared] of Object.entries(operation.responses)) {
        // A shared response (the 304) is a reference to components.responses.
        const ref = (declared as { $ref?: string }).$ref;
        const response = ref
          ? doc.components.responses?.[ref.replace("#/components/responses/", "")]
          : declared;
        const headers = Object.keys((response as { headers?: Record<string, unknown> }).headers ?? {});
        expect(headers, `${method} ${path} ${status}`).toEqual(
          expect.arrayContaining(["x-request-id", ...rateLimitHeaders]),
        );
        if (status === "429") expect(headers, `${method} ${path} 429`).toContain("Retry-After");
      }
    }
  });

  it("defines the shared headers and error responses once, in components, and references them", async () => {
    const doc = await openApiDocument();
    // The shared errors: one component per status, referenced by every operation. (Success
    // answers shared by several operations are components too: src/http/openapi-compact.ts.)
    const responseNames = [
      ...new Set(
        Object.values(doc.paths).flatMap((item) =>
          Object.values(item).flatMap((operation) =>
            SHARED_ERROR_STATUSES.map((status) =>
              String((operation.responses[status] as { $ref?: string }).$ref).replace(
                "#/components/responses/",
                "",
              ),
            ),
          ),
        ),
      ),
    ];
    expect(responseNames).toHaveLength(SHARED_ERROR_STATUSES.length);
    for (const name of responseNames) {
      const schema = doc.components.responses?.[name]?.content?.["application/json"]?.schema;
      expect(refName(schema), name).toBe("Error");
    }
    expect(Object.keys(doc.components.headers ?? {})).toEqual(
      expect.arrayContaining(["RequestId", "RateLimitLimit", "RetryAfter", "AccessControlAllowOrigin"]),
    );
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const status of SHARED_ERROR_STATUSES) {
          expect(operation.responses[status], `${method} ${path} ${status}`).toEqual({
            $ref: expect.stringMatching(/^#\/components\/responses\/\w+$/),
          });
        }
        for (const [status, declared] of Object.entries(operation.responses)) {
          // The shared errors and the 304 are written once, by hand, in openapi-components.ts.
          if ((SHARED_ERROR_STATUSES as readonly string[]).includes(status) || status === "304") continue;
          const ref = (declared as { $ref?: string }).$ref;
          const response = ref
            ? doc.components.responses?.[ref.replace("#/components/responses/", "")]
            : (declared as OpenApiResponse);
          expect(response, `${method} ${path} ${status}`).toBeDefined();
          for (const [name, header] of Object.entries(response?.headers ?? {})) {
            expect(header, `${method} ${path} ${status} ${name}`).toEqual({
              $ref: expect.stringMatching(/^#\/components\/headers\/\w+$/),
            });
          }
        }
      }
    }
    // Lean: it was 453 KB with every header copied into every response; issue #16's goal was
    // 150 KB for the 48 operations of then, as served (parameters and responses shared by
    // operations are components): 3.1 KB an operation, as operations are added.
    const res = await request("GET", "/openapi.json");
    const count = (await operations()).length;
    expect(new TextEncoder().encode(res.raw).length / count).toBeLessThan(3_100);
  });

  it("has top-level tags with descriptions for every operation's tag, a contact and a license", async () => {
    const doc = (await openApiDocument()) as Awaited<ReturnType<typeof openApiDocument>> & {
      info: { contact?: unknown; license?: { name?: string } };
      tags?: Array<{ name: string; description?: string }>;
    };
    expect(doc.info.contact).toBeTruthy();
    expect(doc.info.license?.name).toMatch(/\S/);
    const tags = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
    for (const { method, path, operation } of await operations()) {
      for (const tag of (operation as { tags?: string[] }).tags ?? []) {
        expect(tags.get(tag), `${method} ${path} tag ${tag}`).toMatch(/\S/);
      }
    }
  });

  it("describes X-D1-Bookmark once under components and references it from every operation and response", async () => {
    const doc = (await openApiDocument()) as Awaited<ReturnType<typeof openApiDocument>> & {
      components: { parameters?: Record<string, JsonSchema>; headers?: Record<string, JsonSchema> };
    };
    expect(doc.components.parameters?.D1Bookmark).toMatchObject({
      name: "X-D1-Bookmark",
      in: "header",
      required: false,
      schema: { type: "string", pattern: expect.any(String) },
    });
    const component = doc.components.headers?.D1Bookmark;
    expect(component).toMatchObject({ schema: { type: "string" } });
    const schema = (component?.schema ?? {}) as JsonSchema;
    const pattern = new RegExp(String(schema.pattern));
    // What answers carry: the database, the bookmark and its MAC (src/crypto/bookmarks.ts), always.
    const bookmark = "0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b";
    expect(`DB_ORG_2:${bookmark}.${"A".repeat(43)}`).toMatch(pattern);
    expect(bookmark).not.toMatch(pattern);
    expect(`DB:${bookmark}`).not.toMatch(pattern);
    for (const { method, path, operation } of await operations()) {
      // `operations()` follows parameter $refs too: the request header is the one component.
      expect(operation.parameters, `${method} ${path}`).toContain(doc.components.parameters?.D1Bookmark);
      // `operations()` follows the $refs (that every header is one is checked above): each
      // response's X-D1-Bookmark is the one component.
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = (response as { headers?: Record<string, unknown> }).headers ?? {};
        expect(headers["X-D1-Bookmark"], `${method} ${path} ${status}`).toBe(component);
      }
    }
  });

  it("publishes every request body as required (unless every field is optional), JSON only, and strict (no additional properties)", async () => {
    const doc = await openApiDocument();
    const withBody = (await operations()).filter(({ operation }) => operation.requestBody);
    expect(withBody.map(({ operation }) => operation.operationId)).toEqual(
      expect.arrayContaining(["createProject", "replaceProject", "createOrg"]),
    );
    for (const { method, path, operation } of withBody) {
      const where = `${method} ${path}`;
      expect(Object.keys(operation.requestBody?.content ?? {}), where).toEqual(["application/json"]);
      let schema = operation.requestBody?.content?.["application/json"]?.schema;
      const name = refName(schema);
      if (name) schema = doc.components.schemas?.[name];
      expect(schema?.type, where).toBe("object");
      expect(schema?.additionalProperties, where).toBe(false);
      // A body whose fields are all optional (test send, rotate-secret) may be left out entirely.
      const allOptional = ((schema as { required?: string[] } | undefined)?.required ?? []).length === 0;
      if (operation.requestBody?.required !== true)
        expect(allOptional, `${where}: body not required`).toBe(true);
      if (["testIntegration", "rotateIntegrationSecret"].includes(operation.operationId ?? "")) {
        expect(operation.requestBody?.required, where).toBe(false);
      }
    }
  });

  it("requires every response field (null, never omitted), but for next_page, cause and keys inside deployment data", async () => {
    const doc = await openApiDocument();
    const optional: string[] = [];
    const seen = { strict: new Set<unknown>(), omittable: new Set<unknown>() };
    const walk = (schema: JsonSchema | undefined, where: string, omittable: boolean): void => {
      const visited = omittable ? seen.omittable : seen.strict;
      if (!schema || visited.has(schema)) return;
      visited.add(schema);
      const name = refName(schema);
      if (name) {
        walk(doc.components.schemas?.[name], name, omittable);
        return;
      }
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const [prop, sub] of Object.entries(props)) {
        const allowed =
          omittable ||
          (prop === "next_page" && "has_more" in props) ||
          (prop === "cause" && where === "Error");
        if (!required.has(prop) && !allowed) optional.push(`${where}.${prop}`);
        // API_CONTRACT §3 Deployment: optional keys inside `data` are omitted when absent.
        walk(sub, `${where}.${prop}`, omittable || (where === "Deployment" && prop === "data"));
      }
      if (schema.items) walk(schema.items as JsonSchema, `${where}[]`, omittable);
      for (const key of ["anyOf", "oneOf", "allOf"]) {
        for (const sub of (schema[key] as JsonSchema[] | undefined) ?? []) walk(sub, where, omittable);
      }
    };
    for (const { method, path, operation } of await operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        walk(response.content?.["application/json"]?.schema, `${method} ${path} ${status}`, false);
      }
    }
    expect(optional).toEqual([]);
  });

  it("validates every path parameter as an identifier, but a version number (API_CONTRACT §18), a positive integer, and a check's name (§31)", async () => {
    const doc = await openApiDocument();
    for (const { method, path, operation } of await operations()) {
      const names = [...path.matchAll(/{(\w+)}/g)].map((m) => m[1]);
      const params = resolveParameters(doc, operation.parameters).filter((p) => p.in === "path");
      expect(params.map((p) => p.name).sort(), `${method} ${path}`).toEqual([...names].sort());
      for (const p of params) {
        expect(p.required, `${method} ${path} ${p.name}`).toBe(true);
        if (p.name === "version")
          expect(p.schema, `${method} ${path}`).toMatchObject({ type: "integer", minimum: 1 });
        // A check's name, any string: one the deployment's gate does not hold is `404`, however spelled.
        else if (p.name === "name" && path === "/v1/deployments/{id}/checks/{name}")
          expect(p.schema, `${method} ${path}`).toMatchObject({
            type: "string",
            minLength: 1,
            pattern: "^[\\s\\S]+$",
          });
        else expect(p.schema?.pattern, `${method} ${path} ${p.name}`).toBe(ID_PATTERN.source);
      }
    }
  });

  it("gives every list endpoint after/limit/sort_by and a 200 that references the envelope", async () => {
    const doc = await openApiDocument();
    const lists = (await operations()).filter(
      ({ operation }) =>
        resolveParameters(doc, operation.parameters).some((p) => p.in === "query" && p.name === "limit") &&
        !SEQ_ORDERED_LISTS.has(operation.operationId ?? ""),
    );
    const listIds = lists.map(({ operation }) => operation.operationId);
    expect(listIds).toEqual(expect.arrayContaining(["listProjects", "listOrgProjects", "listOrgs"]));
    for (const { method, path, operation } of lists) {
      const where = `${method} ${path}`;
      expect(method).toBe("get");
      // Described once under components.parameters and referenced by every list (keeps the document
      // lean): the document as served, since operations() resolves the references.
      expect(doc.paths[path]?.[method]?.parameters, where).toEqual(
        expect.arrayContaining(
          ["ListAfter", "ListLimit", "ListSortBy"].map((name) => ({
            $ref: `#/components/parameters/${name}`,
          })),
        ),
      );
      const query = Object.fromEntries(
        resolveParameters(doc, operation.parameters)
          .filter((p) => p.in === "query")
          .map((p) => [p.name, p]),
      );
      expect(query.after?.schema?.type, where).toBe("string");
      expect(query.limit?.schema, where).toMatchObject({ type: "integer", minimum: 1, default: 20 });
      expect(query.limit?.schema?.maximum, where).toBeGreaterThanOrEqual(1);
      expect(query.sort_by?.schema?.enum, where).toEqual(
        expect.arrayContaining(["created_at", "-created_at", "+created_at"]),
      );
      const name = refName(operation.responses["200"]?.content?.["application/json"]?.schema);
      expect(name, where).toBeTruthy();
      const envelope = doc.components.schemas?.[name ?? ""];
      expect(envelope, where).toMatchObject({ type: "object", required: ["data", "has_more"] });
      const props = envelope?.properties as Record<string, JsonSchema>;
      expect(props.data?.type, where).toBe("array");
      expect(refName(props.data?.items as JsonSchema), where).toBeTruthy();
      expect(props.has_more?.type, where).toBe("boolean");
      expect(props.next_page, where).toMatchObject({ type: "string", pattern: "^[a-zA-Z0-9+/=]+$" });
    }
    for (const id of ["listProjects", "listOrgProjects"]) {
      const op = lists.find((l) => l.operation.operationId === id)?.operation;
      const limit = resolveParameters(doc, op?.parameters).find((p) => p.name === "limit")?.schema;
      expect(limit?.maximum, id).toBe(240);
    }
  });

  it("declares every repeatable filter so that a validator takes both forms: repeated and comma-separated", async () => {
    const doc = await openApiDocument();
    const filters = (await operations()).flatMap(({ method, path, operation }) =>
      resolveParameters(doc, operation.parameters)
        .filter((p) => p.in === "query" && JSON.stringify(p.schema?.type).includes("array"))
        .map((p) => ({ where: `${method} ${path} ${p.name}`, name: p.name, parameter: p })),
    );
    expect([...new Set(filters.map((f) => f.name))].sort()).toEqual(["action", "status", "type"]);
    const examples: Record<string, [string[], string[]]> = {
      status: [
        ["failed", "failed,cancelled", "queued,queued"],
        ["", "failed,", ",failed", "failed, cancelled", "done"],
      ],
      type: [
        ["service.ok", "deployment.failed,service.in_alarm"],
        ["serviceXok", "service.ok,", "deployment.exploded"],
      ],
      action: [
        ["createProject", "createProject,internal.createApiKey"],
        ["", "a,,b", ",a"],
      ],
    };
    for (const { where, name, parameter } of filters) {
      const schema = parameter.schema as JsonSchema & { items: JsonSchema };
      // A plain array (a query string cannot carry null), exploded: `x=a&x=b` is two items ...
      expect(parameter, where).toMatchObject({ style: "form", explode: true });
      expect(schema.type, where).toBe("array");
      expect(schema.items, where).toMatchObject({ type: "string", maxLength: expect.any(Number) });
      // ... and each item is one value or several joined by commas, as the service reads them.
      const item = new RegExp(String(schema.items.pattern));
      const [valid, invalid] = examples[name] ?? [[], []];
      for (const value of valid) expect(item.test(value), `${where}: ${value}`).toBe(true);
      for (const value of invalid) expect(item.test(value), `${where}: ${value}`).toBe(false);
      if (schema.items.example !== undefined)
        expect(item.test(String(schema.items.example)), where).toBe(true);
    }
  });

  it("gives a list in `seq` order (a deployment's timeline, API_CONTRACT §19) after/after_seq/limit 1–1000, no sort_by, and the envelope", async () => {
    const doc = await openApiDocument();
    const ops = (await operations()).filter(({ operation }) =>
      SEQ_ORDERED_LISTS.has(operation.operationId ?? ""),
    );
    expect(ops.map((op) => op.operation.operationId)).toEqual([...SEQ_ORDERED_LISTS]);
    for (const { method, path, operation } of ops) {
      const where = `${method} ${path}`;
      const query = Object.fromEntries(
        resolveParameters(doc, operation.parameters)
          .filter((p) => p.in === "query")
          .map((p) => [p.name, p]),
      );
      expect(Object.keys(query).sort(), where).toEqual(["after", "after_seq", "limit"]);
      expect(doc.paths[path]?.[method]?.parameters, where).toContainEqual({
        $ref: "#/components/parameters/ListAfter",
      });
      expect(query.after_seq?.schema, where).toMatchObject({ type: "integer", minimum: 0 });
      expect(query.limit?.schema, where).toMatchObject({
        type: "integer",
        minimum: 1,
        maximum: 1000,
        default: 100,
      });
      const name = refName(operation.responses["200"]?.content?.["application/json"]?.schema);
      expect(doc.components.schemas?.[name ?? ""], where).toMatchObject({ required: ["data", "has_more"] });
      expect(Object.keys(operation.responses["200"]?.content ?? {}), where).toEqual([
        "application/json",
        "text/event-stream",
      ]);
    }
  });

  it("serves /docs, an API reference reading /openapi.json", async () => {
    const res = await request("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.raw).toContain("/openapi.json");
  });
});

describe("/openapi.json: safe retries and conditional requests (API_CONTRACT §11, §12)", () => {
  const refTo = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

  it("defines Idempotency-Key, If-Match, If-None-Match, ETag, Idempotent-Replayed and the 304 once, under components", async () => {
    const doc = await openApiDocument();
    expect(doc.components.parameters?.IdempotencyKey).toMatchObject({
      name: "Idempotency-Key",
      in: "header",
    });
    expect(doc.components.parameters?.IfMatch).toMatchObject({ name: "If-Match", in: "header" });
    expect(doc.components.parameters?.IfNoneMatch).toMatchObject({ name: "If-None-Match", in: "header" });
    expect(doc.components.headers?.ETag?.description).toBeTruthy();
    expect(doc.components.headers?.IdempotentReplayed?.description).toBeTruthy();
    expect(doc.components.responses?.NotModified?.headers).toMatchObject({ ETag: refTo("headers", "ETag") });
    // Referenced, never copied: no operation spells a header parameter out.
    expect(JSON.stringify(doc.paths)).not.toMatch(/"in":"header"/);
  });

  it("references them from every operation they apply to", async () => {
    const doc = await openApiDocument();
    // The document as served (operations() resolves references); shared responses are references.
    const resolve = (response: unknown) => {
      const ref = (response as { $ref?: string }).$ref;
      return ref ? doc.components.responses?.[ref.replace("#/components/responses/", "")] : response;
    };
    for (const { method, path } of await operations()) {
      const operation = doc.paths[path]?.[method];
      if (!operation) throw new Error(`${method} ${path} missing`);
      const where = `${method} ${path}`;
      const params = (operation.parameters ?? []) as unknown[];
      const success = Object.keys(operation.responses).find((s) => s.startsWith("2")) ?? "";
      const successHeaders = (resolve(operation.responses[success]) as { headers?: Record<string, unknown> })
        .headers;
      // An answer holding a secret shown once (`Cache-Control: no-store`: a value reveal, a
      // rotated secret) is never tagged, so never 304, unless its route tags it itself (an
      // integration's create tags the record as a GET shows it).
      const secret = successHeaders?.["Cache-Control"] !== undefined && successHeaders.ETag === undefined;
      if (secret)
        expect(successHeaders?.["Cache-Control"], where).toEqual(refTo("headers", "CacheControlNoStore"));
      if (method === "get") {
        expect(params, where).toContainEqual(refTo("parameters", "IfNoneMatch"));
        if (secret) {
          expect(operation.responses["304"], where).toBeUndefined();
          continue;
        }
        expect(operation.responses["304"], where).toEqual(refTo("responses", "NotModified"));
        expect(successHeaders?.ETag, where).toEqual(refTo("headers", "ETag"));
        continue;
      }
      expect(params, where).toContainEqual(refTo("parameters", "IdempotencyKey"));
      for (const [status, response] of Object.entries(operation.responses)) {
        // Never stored, never replayed (a 408 executed nothing: a body cut short, a move's fence).
        if (["401", "408", "429", "500", "501"].includes(status)) continue;
        const headers = (resolve(response) as { headers?: Record<string, unknown> }).headers;
        expect(headers?.["Idempotent-Replayed"], `${where} ${status}`).toEqual(
          refTo("headers", "IdempotentReplayed"),
        );
      }
      if (method !== "post") expect(params, where).toContainEqual(refTo("parameters", "IfMatch"));
      // A record's 200 or 201 carries its ETag; a 204 has no body, a 202 (queued work) no record.
      if ((success === "200" || success === "201") && !secret) {
        expect(successHeaders?.ETag, where).toEqual(refTo("headers", "ETag"));
      }
    }
  });
});

describe("/openapi.json: examples a renderer can show (src/http/openapi-examples.ts)", () => {
  it("sets a referenced schema's example beside every $ref to it, and leaves no allOf of one $ref and a description", async () => {
    const doc = (await openApiDocument()) as unknown as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { example?: unknown }> };
    };
    let refs = 0;
    const visit = (value: unknown, where: string): void => {
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) visit(item, `${where}.${i}`);
        return;
      }
      if (typeof value !== "object" || value === null) return;
      const node = value as Record<string, unknown>;
      const all = node.allOf as Array<Record<string, unknown>> | undefined;
      if (
        all?.length === 2 &&
        typeof all[0]?.$ref === "string" &&
        Object.keys(all[1] ?? {}).join() === "description"
      )
        throw new Error(`${where}: allOf of a $ref and a description`);
      const name =
        typeof node.$ref === "string" ? /^#\/components\/schemas\/(.+)$/.exec(node.$ref)?.[1] : undefined;
      const example = name === undefined ? undefined : doc.components.schemas[name]?.example;
      if (example !== undefined) {
        refs++;
        expect(node.example, where).toEqual(example);
      }
      for (const [key, child] of Object.entries(node)) visit(child, `${where}.${key}`);
    };
    visit(doc.paths, "paths");
    visit(doc.components.schemas, "components.schemas");
    // Every identifier is such a reference (`Id` has an example): dozens, once shared
    // parameters and responses are hoisted into components.
    expect(refs).toBeGreaterThan(30);
    // A record's own fields: the project's identifiers, with their descriptions kept.
    const project = doc.components.schemas.Project as unknown as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(project.properties.id).toEqual({
      $ref: "#/components/schemas/Id",
      example: "7Hq3VnT5m2WcXbQ9pLk4Rz",
    });
    expect(project.properties.org_id).toMatchObject({
      $ref: "#/components/schemas/Id",
      description: expect.any(String),
    });
  });
});
