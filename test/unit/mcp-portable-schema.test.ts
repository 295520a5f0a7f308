/**
 * src/mcp/portable-schema.ts: tool schemas spelled so every MCP client takes them, admitting
 * exactly what they admitted before.
 */
import { describe, expect, it } from "vitest";
import { portableSchema } from "../../src/mcp/portable-schema";

const ANY = [
  { type: "string" },
  { type: "number" },
  { type: "boolean" },
  { type: "object" },
  { type: "array" },
  { type: "null" },
];

describe("portableSchema", () => {
  it("splits a type array into anyOf branches of one type, constraints in the non-null ones", () => {
    expect(portableSchema({ description: "Why.", type: ["string", "null"], maxLength: 500 })).toEqual({
      description: "Why.",
      anyOf: [{ type: "string", maxLength: 500 }, { type: "null" }],
    });
  });

  it("spells out a schema that constrains nothing as any of the six JSON types, keeping its annotations", () => {
    expect(portableSchema({})).toEqual({ anyOf: ANY });
    expect(portableSchema({ description: "The value." })).toEqual({ description: "The value.", anyOf: ANY });
  });

  it("reaches every subschema, and leaves values that are not schemas (defaults, enums) alone", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        patch: {
          type: "array",
          default: [],
          items: { type: "object", properties: { op: { enum: ["add"] }, value: {} }, required: ["op"] },
        },
        reason: { anyOf: [{ type: ["string", "null"] }, { const: 1 }] },
        bag: { type: "object", additionalProperties: {}, default: {} },
      },
      additionalProperties: false,
    };
    expect(portableSchema(schema)).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        patch: {
          type: "array",
          default: [],
          items: {
            type: "object",
            properties: { op: { enum: ["add"] }, value: { anyOf: ANY } },
            required: ["op"],
          },
        },
        reason: { anyOf: [{ anyOf: [{ type: "string" }, { type: "null" }] }, { const: 1 }] },
        bag: { type: "object", additionalProperties: { anyOf: ANY }, default: {} },
      },
      additionalProperties: false,
    });
  });
});
