/**
 * Tool schemas every MCP client takes (`tools/list`). zod writes some nullable fields as
 * `"type": ["string", "null"]` and an unconstrained value (a JSON Patch operation's `value`) as
 * `{}`: both legal JSON Schema, but a client that maps tool schemas onto a single-`type` dialect
 * (Gemini's function declarations, the MCP Inspector's portability check: 17 warnings) rejects the
 * tool or drops the constraint. Here each is spelled out without changing what it admits:
 * - a `type` array becomes `anyOf` branches of one `type` each, the constraints in the non-null ones;
 * - a schema with no validation keyword becomes `anyOf` of the six JSON types.
 * Annotations (`description`, `default`…) stay where they were. Nothing else is touched.
 */

type Schema = Record<string, unknown>;

const JSON_TYPES = ["string", "number", "boolean", "object", "array", "null"] as const;
/** Keywords that describe a schema without constraining its values. */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const ONE = ["items", "additionalProperties", "propertyNames", "not", "contains", "if", "then", "else"];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "$defs", "definitions"];

const isSchema = (value: unknown): value is Schema =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const mapValues = (map: Schema, f: (value: unknown) => unknown): Schema =>
  Object.fromEntries(Object.entries(map).map(([name, value]) => [name, f(value)]));

/** `schema` with every type array split and every unconstrained schema spelled out, at any depth. */
export function portableSchema(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (ONE.includes(keyword)) out[keyword] = portableSchema(value);
    else if (LIST.includes(keyword) && Array.isArray(value)) out[keyword] = value.map(portableSchema);
    else if (MAP.includes(keyword) && isSchema(value)) out[keyword] = mapValues(value, portableSchema);
    else out[keyword] = value;
  }
  const annotations = Object.fromEntries(Object.entries(out).filter(([k]) => ANNOTATIONS.has(k)));
  const constraints = Object.fromEntries(Object.entries(out).filter(([k]) => !ANNOTATIONS.has(k)));
  if (Array.isArray(out.type)) {
    const { type: types, ...rest } = constraints;
    const branches = (types as string[]).map((type) => (type === "null" ? { type } : { type, ...rest }));
    return { ...annotations, anyOf: branches };
  }
  if (Object.keys(constraints).length === 0) {
    return { ...annotations, anyOf: JSON_TYPES.map((type) => ({ type })) };
  }
  return out;
}
