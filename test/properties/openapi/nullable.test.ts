/**
 * `null` in /openapi.json says what the Worker does. The generator (@asteasolutions/zod-to-openapi)
 * renders a component from the first use it meets: when that use wraps it in `.nullable()`, the
 * component itself is published as accepting `null`, for every other use too. `RecordName` was
 * (`name: null` allowed by the document for a project's create, refused by the Worker) because an
 * audit stream's update, a nullable use, happened to come first. A component's schema must
 * therefore be the same whatever order the operations are registered in. And an `allOf` of a
 * `$ref` and a `null` type, the generator's other rendering of a nullable use, never takes `null`:
 * the referenced schema refuses it.
 */
import { describe, expect, it } from "vitest";
import { documentedRoutes } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";
import { openApiDocument } from "../../helpers/openapi";

type Json = Record<string, unknown>;

const DOCUMENT = { openapi: "3.1.0", info: { title: "t", version: "1" } } as const;

async function componentsInOrder(operations: readonly (typeof OPERATIONS)[number][]) {
  const app = await documentedRoutes(operations);
  return (app.getOpenAPI31Document(DOCUMENT).components?.schemas ?? {}) as Record<string, Json>;
}

const propertyOf = (schema: Json | undefined, name: string) =>
  (schema?.properties as Record<string, Json> | undefined)?.[name];

const acceptsNull = (schema: Json | undefined) =>
  Array.isArray(schema?.type) ? (schema.type as unknown[]).includes("null") : schema?.type === "null";

describe("/openapi.json: null where the Worker takes it", () => {
  it("publishes every component schema the same whatever order the operations are registered in", async () => {
    const forward = await componentsInOrder(OPERATIONS);
    const backward = await componentsInOrder([...OPERATIONS].reverse());
    expect(Object.keys(backward).sort()).toEqual(Object.keys(forward).sort());
    for (const [name, schema] of Object.entries(forward)) expect(backward[name], name).toEqual(schema);
  });

  it("publishes a record's name as a string, never null, where a create needs one", async () => {
    const doc = (await openApiDocument()) as unknown as { components: { schemas: Record<string, Json> } };
    const { schemas } = doc.components;
    expect(acceptsNull(schemas.RecordName), "RecordName").toBe(false);
    for (const body of ["ProjectCreate", "EnvironmentCreate", "AuditStreamCreate", "OidcTrustCreate"]) {
      const name = propertyOf(schemas[body], "name");
      expect(name, body).toEqual(expect.objectContaining({ $ref: "#/components/schemas/RecordName" }));
      expect(schemas[body]?.required, body).toContain("name");
    }
    // An update's `null` stands for "left out" (as for every optional field of a write).
    const update = propertyOf(schemas.AuditStreamUpdate, "name");
    expect(acceptsNull(update), "AuditStreamUpdate.name").toBe(true);
  });

  it("has no allOf of a $ref and a null type, which no value of null could pass", async () => {
    const doc = (await openApiDocument()) as unknown as Json;
    const found: string[] = [];
    const visit = (value: unknown, where: string): void => {
      if (Array.isArray(value)) {
        for (const [i, item] of value.entries()) visit(item, `${where}.${i}`);
        return;
      }
      if (typeof value !== "object" || value === null) return;
      const node = value as Json;
      const parts = node.allOf as Json[] | undefined;
      if (parts?.some((p) => typeof p.$ref === "string") && parts.some(acceptsNull)) found.push(where);
      for (const [key, child] of Object.entries(node)) visit(child, `${where}.${key}`);
    };
    visit(doc, "");
    expect(found).toEqual([]);
  });
});
