/**
 * Makes the generated OpenAPI document lean without changing what it says, so that it stays
 * small enough for clients and renderers to fetch whole. The generator writes each operation's
 * parameters and responses inline; the same path parameter (`project_id`, 20 operations) or the
 * same success answer ("The stack resource.", three operations) is then copied into every
 * operation that uses it. This pass, run once per document (./document.ts caches the result per
 * origin), moves every parameter and every response object that appears in two or more
 * operations into `components` and references it, and drops a parameter schema's `description`
 * when it repeats the parameter's own.
 *
 * A pure function of the document: what a client reads after resolving `$ref`s is unchanged
 * (test/unit/openapi-compact.test.ts), and a new route gets the same treatment without a line.
 */

type Json = Record<string, unknown>;
type Ref = { $ref: string };
type Operation = { operationId?: string; parameters?: unknown[]; responses?: Record<string, unknown> };
type Document = {
  paths?: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown> | undefined>;
};

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

const isRef = (value: unknown): value is Ref =>
  typeof value === "object" && value !== null && typeof (value as Ref).$ref === "string";

const pascal = (text: string): string =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");

function* operations(doc: Document): Generator<Operation> {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.has(method) && typeof operation === "object" && operation !== null) {
        yield operation as Operation;
      }
    }
  }
}

/** A free component name: `base`, else `base2`, `base3`, … */
function freeName(taken: Record<string, unknown>, base: string): string {
  if (!(base in taken)) return base;
  for (let n = 2; ; n++) if (!(`${base}${n}` in taken)) return `${base}${n}`;
}

/**
 * `{ "$ref": "#/components/schemas/Project" }` inside a response's JSON content (else its only
 * content, a dotenv file's `text/plain`) → "Project".
 */
function contentSchemaName(response: Json): string | undefined {
  const content = response.content as Record<string, { schema?: unknown }> | undefined;
  const only = content && Object.keys(content).length === 1 ? Object.values(content)[0] : undefined;
  const schema = (content?.["application/json"] ?? only)?.schema;
  return isRef(schema) ? schema.$ref.split("/").pop() : undefined;
}

function parameterName(parameter: Json): string {
  const name = pascal(String(parameter.name ?? "Parameter"));
  return parameter.in === "path" ? name : `${name}${pascal(String(parameter.in ?? ""))}`;
}

function responseName(response: Json, status: string, operationId: string | undefined): string {
  const schema = contentSchemaName(response);
  if (schema) return status === "201" ? `${schema}Created` : schema;
  if (status === "204") return "NoContent";
  return `${pascal(operationId ?? "Operation")}${status}`;
}

/**
 * Moves every value that occurs (deep-equal) in at least two operations into
 * `components[section]` under a readable name and replaces each occurrence with a `$ref`.
 */
function hoist(
  doc: Document,
  section: "parameters" | "responses",
  occurrences: Array<{ value: Json; replace: (ref: Ref) => void; name: () => string }>,
): void {
  const groups = new Map<string, typeof occurrences>();
  for (const occurrence of occurrences) {
    const key = JSON.stringify(occurrence.value);
    const group = groups.get(key);
    if (group) group.push(occurrence);
    else groups.set(key, [occurrence]);
  }
  for (const group of groups.values()) {
    const [first] = group;
    if (!first || group.length < 2) continue;
    doc.components ??= {};
    doc.components[section] ??= {};
    const components = doc.components[section];
    const name = freeName(components, first.name());
    components[name] = first.value;
    for (const occurrence of group) occurrence.replace({ $ref: `#/components/${section}/${name}` });
  }
}

/** Returns `document`, compacted in place (call it on a freshly generated document). */
export function compactOpenApiDocument<T extends object>(document: T): T {
  const doc = document as Document;
  const parameters: Parameters<typeof hoist>[2] = [];
  const responses: Parameters<typeof hoist>[2] = [];
  for (const operation of operations(doc)) {
    operation.parameters?.forEach((parameter, index, list) => {
      if (isRef(parameter) || typeof parameter !== "object" || parameter === null) return;
      const value = parameter as Json;
      const schema = value.schema as Json | undefined;
      if (schema && !isRef(schema) && schema.description === value.description) delete schema.description;
      parameters.push({ value, replace: (ref) => (list[index] = ref), name: () => parameterName(value) });
    });
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (isRef(response) || typeof response !== "object" || response === null) continue;
      const value = response as Json;
      responses.push({
        value,
        replace: (ref) => {
          if (operation.responses) operation.responses[status] = ref;
        },
        name: () => responseName(value, status, operation.operationId),
      });
    }
  }
  hoist(doc, "parameters", parameters);
  hoist(doc, "responses", responses);
  return document;
}
