/**
 * The malformed requests of the fuzzer (test/properties/fuzz-openapi.test.ts): read from an operation's
 * description in /openapi.json, each request is malformed in exactly one way the operation makes
 * refusable (see the test file's opening comment for the list).
 */
import fc from "fast-check";
import { ID_PATTERN } from "../../src/lib/ids";
import type { JsonSchema, OpenApiDocument, OpenApiOperation } from "./openapi";

// ---------------------------------------------------------------------------------------
// Reading the document's schemas.

export type Op = { method: string; path: string; operation: OpenApiOperation };
let doc: OpenApiDocument;
/** Path parameters by name, and `{id}` by the collection segment before it. */
let ids: Record<string, string> = {};

/** Points the generators at the document and at the IDs of the fuzzer's world. */
export function aimAt(target: { doc: OpenApiDocument; ids: Record<string, string> }): void {
  doc = target.doc;
  ids = target.ids;
}

function resolve(schema: JsonSchema | undefined): JsonSchema {
  let current = schema ?? {};
  for (let i = 0; i < 10 && typeof current.$ref === "string"; i++) {
    const name = current.$ref.replace("#/components/schemas/", "");
    current = doc.components.schemas?.[name] ?? {};
  }
  return current;
}

/** The JSON types a schema admits (empty: anything). */
function typesOf(schema: JsonSchema | undefined): Set<string> {
  const s = resolve(schema);
  const out = new Set<string>();
  const type = s.type;
  if (typeof type === "string") out.add(type);
  if (Array.isArray(type)) for (const t of type) out.add(String(t));
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = s[key];
    if (Array.isArray(list)) {
      for (const member of list as JsonSchema[]) {
        const inner = typesOf(member);
        if (inner.size === 0) return new Set();
        for (const t of inner) out.add(t);
      }
    }
  }
  if (out.has("integer")) out.add("number");
  return out;
}

/** A plausible value of a schema (it need not pass validation: every request gets a defect). */
function sample(schema: JsonSchema | undefined, depth = 0): unknown {
  const s = resolve(schema);
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = s[key];
    if (Array.isArray(list)) {
      const first = (list as JsonSchema[]).find((m) => resolve(m).type !== "null");
      if (first) return sample(first, depth + 1);
    }
  }
  const types = typesOf(s);
  if (types.has("object") && depth < 4) return objectSample(s, depth);
  if (types.has("array")) return depth < 4 ? [sample(s.items as JsonSchema, depth + 1)] : [];
  if (types.has("string")) return "x";
  if (types.has("number")) return 1;
  if (types.has("boolean")) return true;
  return null;
}

function objectSample(schema: JsonSchema, depth = 0): Record<string, unknown> {
  const s = resolve(schema);
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(props)) {
    if (required.has(name)) out[name] = sample(prop, depth + 1);
  }
  return out;
}

const WRONG_VALUES: Array<[string, unknown]> = [
  ["string", "not-the-right-type"],
  ["number", 12345.5],
  ["boolean", false],
  ["array", [1, "two"]],
  ["object", { nested: true }],
  ["null", null],
];

// ---------------------------------------------------------------------------------------
// Generators of malformed requests.

export type Malformed = {
  kind: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  /** The raw body text; undefined sends none. */
  body?: string;
};

const hex = (n: number) => `%${n.toString(16).toUpperCase().padStart(2, "0")}`;
/** Percent-encodes any string, a lone surrogate included (as its WTF-8 bytes). */
function encode(value: string): string {
  let out = "";
  for (const ch of value) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += hex(0xe0 | (cp >> 12)) + hex(0x80 | ((cp >> 6) & 0x3f)) + hex(0x80 | (cp & 0x3f));
    else out += encodeURIComponent(ch);
  }
  return out;
}

const LONE = fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "a\ud83d", "\ude00b");
const withLone = fc
  .tuple(fc.string({ maxLength: 8 }), LONE, fc.string({ maxLength: 8 }))
  .map(([a, l, b]) => `${a}${l}${b}`);

/** Strings that fit no identifier form (and are not `.`/`..`, which the URL parser resolves away). */
const badId = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ minLength: 1, maxLength: 40, unit: "binary" }),
    withLone,
    fc.constantFrom(
      "0",
      "null",
      "undefined",
      "1".repeat(21),
      "1".repeat(23),
      "0OIl0OIl0OIl0OIl0OIl0O",
      "ABCDEF01-2345-6789-ABCD-EF0123456789",
      "abcdef0123456789abcdef012345678",
      "abcdef0123456789abcdef0123456789a",
      "x".repeat(2000),
      "%00",
      "../../v1/orgs",
      "' OR 1=1 --",
    ),
  )
  .filter((s) => !ID_PATTERN.test(s) && !/^\.+$/.test(s));

export function fillPath(path: string, corrupt?: { name: string; value: string }): string {
  const segments = path.split("/");
  return segments
    .map((segment, i) => {
      const m = /^{(\w+)}$/.exec(segment);
      if (!m?.[1]) return segment;
      const name = m[1];
      if (corrupt?.name === name) return encode(corrupt.value);
      const byName = ids[name];
      const byCollection = ids[segments[i - 1] ?? ""];
      // An operation added later whose parameter this file does not know: a well-formed ID.
      return byName ?? byCollection ?? "7Hq3VnT5m2WcXbQ9pLk4Rz";
    })
    .join("/");
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const json = (value: unknown) => JSON.stringify(value);

/**
 * Malformed values of the request headers the document declares (by `$ref` into
 * `components.parameters`); a header this file does not know is left alone. Header values are
 * byte strings, so no lone surrogate here: non-ASCII, over-long and ill-shaped values instead.
 */
const BAD_HEADER_VALUES: Record<string, string[]> = {
  "x-d1-bookmark": ["nope", "0000007b-0000b26e", "zzzzzzzz-zzzzzzzz-zzzzzzzz-zzzzzzzz", "0".repeat(300)],
  "idempotency-key": ["x".repeat(256), "a b", "caf\u00e9"],
};

type Param = { name: string; in: string; schema?: JsonSchema };

/** An operation's parameters with their `$ref`s into `components.parameters` followed. */
function parametersOf(operation: OpenApiOperation): Param[] {
  const components = (doc as { components?: { parameters?: Record<string, Param> } } | undefined)?.components
    ?.parameters;
  return ((operation.parameters ?? []) as Array<Param | { $ref: string }>).flatMap((p) => {
    if (!("$ref" in p)) return [p];
    const name = /^#\/components\/parameters\/(.+)$/.exec(p.$ref)?.[1];
    const target = name ? components?.[name] : undefined;
    return target ? [target] : [];
  });
}

/** One arbitrary per kind of defect that applies to the operation. */
export function generators(op: Op): fc.Arbitrary<Malformed>[] {
  const { method, path, operation } = op;
  const gens: fc.Arbitrary<Malformed>[] = [];
  const params = parametersOf(operation);
  const pathParams = params.filter((p) => p.in === "path").map((p) => p.name);
  const queryParams = params.filter((p) => p.in === "query");
  const filled = fillPath(path);

  for (const param of params.filter((p) => p.in === "header")) {
    const bad = BAD_HEADER_VALUES[param.name.toLowerCase()];
    if (!bad) continue;
    gens.push(
      fc.constantFrom(...bad).map((value) => ({
        kind: `bad header ${param.name}`,
        path: filled,
        headers: { [param.name]: value },
      })),
    );
  }

  if (pathParams.length > 0) {
    // An integer parameter (a version number) is malformed by what is no positive integer.
    const integers = new Set(
      params.filter((p) => p.in === "path" && typesOf(p.schema).has("integer")).map((p) => p.name),
    );
    const badInteger = badId.filter((s) => !/^[0-9]*[1-9][0-9]*$/.test(s));
    gens.push(
      fc
        .constantFrom(...pathParams)
        .chain((name) => (integers.has(name) ? badInteger : badId).map((value) => [name, value] as const))
        .map(([name, value]) => ({ kind: `bad path ${name}`, path: fillPath(path, { name, value }) })),
    );
  }

  for (const param of queryParams) {
    const schema = resolve(param.schema);
    const types = typesOf(param.schema);
    const enumValues = Array.isArray(schema.enum)
      ? schema.enum
      : Array.isArray(resolve(schema.items as JsonSchema).enum)
        ? (resolve(schema.items as JsonSchema).enum as unknown[])
        : undefined;
    let values: fc.Arbitrary<string> | undefined;
    if (param.name === "limit" || types.has("number")) {
      const min = typeof schema.minimum === "number" ? schema.minimum : 1;
      const max = typeof schema.maximum === "number" ? schema.maximum : 240;
      // Decimal notation within the bounds (a whole number where the schema says integer) is
      // what the parameter takes: never a defect.
      const admitted = (v: string) =>
        /^[0-9]+(\.[0-9]+)?$/.test(v) &&
        Number(v) >= min &&
        Number(v) <= max &&
        (!types.has("integer") || Number.isInteger(Number(v)));
      const above = max + 1 <= 1_000_000 ? [fc.integer({ min: max + 1, max: 1_000_000 }).map(String)] : [];
      values = fc
        .oneof(
          fc.constantFrom(
            "0",
            "-1",
            String(max + 1),
            "1e1",
            " 5",
            "0x10",
            "1.5",
            "abc",
            "",
            "NaN",
            "9".repeat(30),
          ),
          fc.integer({ min: -1_000_000, max: min - 1 }).map(String),
          ...above,
        )
        .filter((v) => !admitted(v));
    } else if (param.name === "after") {
      values = fc.oneof(
        fc.constantFrom("", "%%%", "not base64!", "====", "e30=", "eyJ4IjoxfQ", "AAAA", "x".repeat(1025)),
        fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes) => btoa(String.fromCharCode(...bytes))),
        fc.string({ minLength: 1, maxLength: 30 }),
        withLone,
      );
    } else if (enumValues) {
      const allowed = new Set(enumValues.map(String));
      values = fc
        .oneof(fc.string({ minLength: 1, maxLength: 20 }), withLone, fc.constantFrom("NULL", "*", "0"))
        .filter(
          (v) =>
            !v.split(",").every((part) => allowed.has(part.trim())) && v.trim() !== "" && v !== " created_at",
        );
    }
    if (values) {
      gens.push(
        values.map((value) => ({
          kind: `bad query ${param.name}`,
          path: filled,
          query: `${encodeURIComponent(param.name)}=${encode(value)}`,
        })),
      );
    }
  }

  const bodySchema = operation.requestBody?.content?.["application/json"]?.schema;
  const canHaveBody = method !== "get" && method !== "head";
  if (bodySchema) {
    const s = resolve(bodySchema);
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = (s.required ?? []) as string[];
    const base = objectSample(s);
    const jsonBody = (kind: string, body: string, headers?: Record<string, string>) => ({
      kind,
      path: filled,
      body,
      headers: { "content-type": "application/json", ...headers },
    });
    gens.push(
      fc
        .tuple(
          fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in props)),
          fc.jsonValue({ maxDepth: 2 }),
        )
        .map(([key, value]) => jsonBody("unknown field", json({ ...base, [key]: value }))),
    );
    const typed = Object.entries(props).filter(([, p]) => typesOf(p).size > 0);
    if (typed.length > 0) {
      gens.push(
        fc.constantFrom(...typed).chain(([name, prop]) => {
          const allowed = typesOf(prop);
          const wrong = WRONG_VALUES.filter(([t]) => !allowed.has(t)).map(([, v]) => v);
          return fc
            .constantFrom(...wrong)
            .map((value) => jsonBody(`wrong type ${name}`, json({ ...base, [name]: value })));
        }),
      );
    }
    if (required.length > 0) {
      gens.push(
        fc.constantFrom(...required).map((name) => {
          const { [name]: _left, ...rest } = base;
          return jsonBody(`missing ${name}`, json(rest));
        }),
      );
    }
    const strings = Object.entries(props).filter(([, p]) => typesOf(p).has("string"));
    gens.push(
      fc
        .tuple(
          strings.length ? fc.constantFrom(...strings.map(([n]) => n)) : fc.constant("k"),
          withLone,
          fc.boolean(),
        )
        .map(([name, bad, inKey]) =>
          jsonBody("lone surrogate", json(inKey ? { ...base, [bad]: "v" } : { ...base, [name]: bad })),
        ),
    );
    gens.push(
      fc
        .tuple(fc.integer({ min: 64, max: 20_000 }), fc.boolean())
        .map(([depth, whole]) =>
          jsonBody(
            "deep nesting",
            whole
              ? nested(depth + 1)
              : `${json(base).slice(0, -1)}${Object.keys(base).length ? "," : ""}"deep":${nested(depth)}}`,
          ),
        ),
    );
    gens.push(
      fc
        .oneof(
          fc.constantFrom("[]", "null", "42", '"text"', "true", "{", '{"a":}', "{'a':1}", "\u0000"),
          fc
            .jsonValue({ maxDepth: 2 })
            .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
            .map(json),
        )
        .map((body) => jsonBody("not a JSON object", body)),
    );
    gens.push(
      fc
        .constantFrom(
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/json; charset=latin1",
          'application/json; charset="utf-16"',
          "application/jsonx",
          "json",
        )
        .map((contentType) =>
          jsonBody(`content-type ${contentType}`, json(base), { "content-type": contentType }),
        ),
    );
  } else if (canHaveBody) {
    gens.push(
      fc
        .oneof(
          fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), {
            minKeys: 1,
            maxKeys: 3,
          }),
          fc.constantFrom<unknown>([], [1], 42, "body", true, null),
        )
        .map((value) => ({
          kind: "body on a bodyless operation",
          path: filled,
          body: json(value),
          headers: { "content-type": "application/json" },
        })),
    );
  }
  return gens;
}

/** A GET with no parameter: nothing of its input can be malformed (a GET carries no body). */
export const takesNoInput = (op: Op) => op.method === "get" && parametersOf(op.operation).length === 0;
