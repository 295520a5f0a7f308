/**
 * The compaction of /openapi.json (src/http/openapi-compact.ts) changes the document's size, not
 * what it says: resolving the `$ref`s it introduced gives back the generator's own document.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { compactOpenApiDocument } from "../../src/openapi/compact";
import { documentedRoutes } from "../../src/openapi/document";
import { OPERATIONS } from "../../src/routes";

type Json = Record<string, unknown>;
const CONFIG = { openapi: "3.1.0", info: { title: "t", version: "1" } };

/**
 * Replaces every `#/components/{parameters,responses}/…` reference under `value` that the
 * generator did not write itself (not in `before`) by its target.
 */
function inline(value: unknown, components: Json, before: Json): unknown {
  if (Array.isArray(value)) return value.map((item) => inline(item, components, before));
  if (typeof value !== "object" || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  const match = typeof ref === "string" ? /^#\/components\/(parameters|responses)\/(.+)$/.exec(ref) : null;
  if (match && !((match[2] as string) in ((before[match[1] as string] ?? {}) as Json))) {
    const target = (components[match[1] as string] as Json)[match[2] as string];
    expect(target, ref as string).toBeDefined();
    return structuredClone(target);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, components, before)]));
}

/** The generator's document, with a parameter schema's description dropped where it repeats the parameter's. */
function withoutRepeatedDescriptions(paths: Json): Json {
  for (const item of Object.values(paths) as Json[]) {
    for (const operation of Object.values(item) as Array<{ parameters?: Json[] }>) {
      for (const parameter of operation.parameters ?? []) {
        const schema = parameter.schema as Json | undefined;
        if (schema && schema.description === parameter.description) delete schema.description;
      }
    }
  }
  return paths;
}

describe("compactOpenApiDocument", () => {
  let app: Awaited<ReturnType<typeof documentedRoutes>>;
  beforeAll(async () => {
    app = await documentedRoutes(OPERATIONS);
  });

  it("says what the generated document says, once its new $refs are resolved", () => {
    const original = app.getOpenAPI31Document(CONFIG) as unknown as { paths: Json; components: Json };
    const compacted = compactOpenApiDocument(app.getOpenAPI31Document(CONFIG)) as unknown as {
      paths: Json;
      components: Json;
    };
    expect(JSON.stringify(compacted).length).toBeLessThan(JSON.stringify(original).length * 0.95);
    expect(inline(compacted.paths, compacted.components, original.components)).toEqual(
      withoutRepeatedDescriptions(original.paths),
    );
    // Components of the generator are kept as they were; only new ones are added.
    for (const [section, entries] of Object.entries(original.components) as Array<[string, Json]>) {
      for (const [name, entry] of Object.entries(entries)) {
        expect((compacted.components[section] as Json)[name], `${section}.${name}`).toEqual(entry);
      }
    }
  });

  it("hoists a parameter or response used twice, names it, and leaves a single use inline", () => {
    const response = (description: string) => ({
      description,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
    });
    const param = { name: "thing_id", in: "path", required: true, schema: { type: "string" } };
    const file = {
      description: "A file.",
      content: { "text/plain": { schema: { $ref: "#/components/schemas/File" } } },
    };
    const query = {
      name: "q",
      in: "query",
      description: "Search.",
      schema: { type: "string", description: "Search." },
    };
    const doc = compactOpenApiDocument({
      paths: {
        "/a/{thing_id}": {
          get: { parameters: [structuredClone(param)], responses: { 200: response("A thing.") } },
          put: { parameters: [structuredClone(param)], responses: { 200: response("A thing.") } },
        },
        "/b": {
          get: { parameters: [query], responses: { 201: response("Made."), 204: { description: "Gone." } } },
          delete: { responses: { 201: response("Made."), 204: { description: "Gone." } } },
        },
        "/c": { get: { operationId: "getC", responses: { 200: structuredClone(file) } } },
        "/d": { get: { operationId: "getD", responses: { 200: structuredClone(file) } } },
      },
      components: { responses: { Thing: { description: "taken" } } } as Record<
        string,
        Record<string, unknown>
      >,
    });
    expect(doc.components.parameters).toEqual({ ThingId: param });
    expect(doc.paths["/a/{thing_id}"].get.parameters).toEqual([{ $ref: "#/components/parameters/ThingId" }]);
    // "Thing" is taken: the next free name.
    expect(doc.components.responses).toMatchObject({
      Thing: { description: "taken" },
      Thing2: response("A thing."),
      ThingCreated: response("Made."),
      NoContent: { description: "Gone." },
    });
    expect(doc.paths["/a/{thing_id}"].put.responses[200]).toEqual({ $ref: "#/components/responses/Thing2" });
    // Another media type's named schema names it too, not the first operation that answers it.
    expect(doc.components.responses).toMatchObject({ File: file });
    expect(doc.paths["/c"].get.responses[200]).toEqual({ $ref: "#/components/responses/File" });
    // Used once: inline, its schema's repeated description dropped.
    expect(doc.paths["/b"].get.parameters).toEqual([
      { name: "q", in: "query", description: "Search.", schema: { type: "string" } },
    ]);
  });
});
