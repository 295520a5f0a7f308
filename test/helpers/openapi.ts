/**
 * Responses checked against the published OpenAPI document (ARCHITECTURE "Tests"): the
 * document is fetched once from the running Worker (`GET /openapi.json`), and a response
 * body is validated against the schema that the operation declares for that status.
 *
 * The schema is turned into a validator by zod 4's `z.fromJSONSchema` (the document's
 * `#/components/schemas/X` references are re-pointed to `#/$defs/X` for it). One deliberate
 * tightening: an object schema that does not say `additionalProperties` is treated as
 * closed, so a field the service sends but the document does not describe fails the
 * check — the document may not drift from what the service sends, in either direction.
 */
import { exports } from "cloudflare:workers";
// zod's whole entry: the Worker's (src/lib/zod/index.ts, what "zod" resolves to) has no fromJSONSchema.
import { z } from "zod/v4";
import type { ApiResponse } from "./api";

export type JsonSchema = { [key: string]: unknown };

export type OpenApiMediaType = { schema?: JsonSchema };
export type OpenApiResponse = {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, OpenApiMediaType>;
};
export type OpenApiRef = { $ref: string };
export type OpenApiParameter = { name: string; in: string; required?: boolean; schema?: JsonSchema };
export type OpenApiOperation = {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<OpenApiParameter | OpenApiRef>;
  requestBody?: { required?: boolean; content?: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse | OpenApiRef>;
  [extension: `x-${string}`]: unknown;
};
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas?: Record<string, JsonSchema>;
    securitySchemes?: Record<string, { type: string; in?: string; name?: string }>;
    parameters?: Record<string, OpenApiParameter & { description?: string }>;
    headers?: Record<string, { description?: string; schema?: JsonSchema }>;
    responses?: Record<string, OpenApiResponse & { headers?: Record<string, unknown> }>;
  };
};

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

let documentPromise: Promise<OpenApiDocument> | undefined;

/**
 * The published document, fetched once per runtime. Fetched straight from the Worker, not
 * through `request`: `request` checks its responses against this very document.
 */
export function openApiDocument(): Promise<OpenApiDocument> {
  documentPromise ??= exports.default
    .fetch(new Request("http://api.test/openapi.json", { headers: { accept: "application/json" } }))
    .then(async (res) => {
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /openapi.json → ${res.status} ${text}`);
      return JSON.parse(text) as OpenApiDocument;
    });
  documentPromise.catch(() => {
    documentPromise = undefined;
  });
  return documentPromise;
}

/**
 * A response with its `$ref`s followed: the response itself (`#/components/responses/X`) and
 * each of its headers (`#/components/headers/X`), as a client reading the document sees it.
 */
export function resolveResponse(
  doc: OpenApiDocument,
  response: OpenApiResponse | OpenApiRef,
): OpenApiResponse {
  let resolved = response;
  if ("$ref" in resolved) {
    const name = /^#\/components\/responses\/(.+)$/.exec(resolved.$ref)?.[1];
    const target = name ? doc.components.responses?.[name] : undefined;
    if (!target) throw new Error(`unresolvable response $ref ${resolved.$ref}`);
    resolved = target;
  }
  if (!resolved.headers) return resolved;
  const headers = Object.fromEntries(
    Object.entries(resolved.headers).map(([headerName, header]) => {
      const ref = (header as Partial<OpenApiRef>).$ref;
      if (typeof ref !== "string") return [headerName, header];
      const name = /^#\/components\/headers\/(.+)$/.exec(ref)?.[1];
      const target = name ? doc.components.headers?.[name] : undefined;
      if (!target) throw new Error(`unresolvable header $ref ${ref}`);
      return [headerName, target];
    }),
  );
  return { ...resolved, headers };
}

/**
 * A parameter with its `$ref`s followed: the parameter (`#/components/parameters/X`) and its
 * schema when that is a component (`#/components/schemas/X`, as for the shared list parameters).
 */
export function resolveParameter(
  doc: OpenApiDocument,
  parameter: OpenApiParameter | OpenApiRef,
): OpenApiParameter {
  let resolved = parameter;
  if ("$ref" in resolved) {
    const name = /^#\/components\/parameters\/(.+)$/.exec(resolved.$ref)?.[1];
    const target = name ? doc.components.parameters?.[name] : undefined;
    if (!target) throw new Error(`unresolvable parameter $ref ${resolved.$ref}`);
    resolved = target;
  }
  const schemaRef = resolved.schema?.$ref;
  if (typeof schemaRef !== "string") return resolved;
  const name = /^#\/components\/schemas\/(.+)$/.exec(schemaRef)?.[1];
  const schema = name ? doc.components.schemas?.[name] : undefined;
  if (!schema) throw new Error(`unresolvable schema $ref ${schemaRef}`);
  return { ...resolved, schema };
}

/** An operation's parameters with their `$ref`s followed (see `resolveParameter`). */
export function resolveParameters(
  doc: OpenApiDocument,
  parameters: Array<OpenApiParameter | OpenApiRef> | undefined,
): OpenApiParameter[] {
  return (parameters ?? []).map((p) => resolveParameter(doc, p));
}

export type ResolvedOperation = Omit<OpenApiOperation, "responses" | "parameters"> & {
  parameters: OpenApiParameter[];
  responses: Record<string, OpenApiResponse>;
};

/** Every operation of the document, with its path template, lower-case method and resolved parameters and responses. */
export async function operations(): Promise<
  Array<{ method: string; path: string; operation: ResolvedOperation }>
> {
  const doc = await openApiDocument();
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => (HTTP_METHODS as readonly string[]).includes(method))
      .map(([method, operation]) => ({
        method,
        path,
        operation: {
          ...operation,
          parameters: (operation.parameters ?? []).map((p) => resolveParameter(doc, p)),
          responses: Object.fromEntries(
            Object.entries(operation.responses).map(([status, r]) => [status, resolveResponse(doc, r)]),
          ),
        },
      })),
  );
}

const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

/**
 * Re-points component references to `$defs` and closes open objects (see the file comment).
 * Only schema positions are walked, so `example`, `default` and `enum` values stay as they are.
 * Members of an `allOf` are left open: closing each part would refuse the other parts' fields.
 */
function prepare(schema: unknown, closable = true): unknown {
  if (Array.isArray(schema) || typeof schema !== "object" || schema === null) return schema;
  const src = schema as JsonSchema;
  const out: JsonSchema = { ...src };
  if (typeof src.$ref === "string") {
    const match = COMPONENT_REF.exec(src.$ref);
    if (!match) throw new Error(`unsupported $ref ${src.$ref}`);
    out.$ref = `#/$defs/${match[1]}`;
  }
  if (src.properties && typeof src.properties === "object") {
    out.properties = Object.fromEntries(
      Object.entries(src.properties as Record<string, unknown>).map(([k, v]) => [k, prepare(v)]),
    );
    if (closable && src.additionalProperties === undefined) out.additionalProperties = false;
  }
  if (typeof src.additionalProperties === "object")
    out.additionalProperties = prepare(src.additionalProperties);
  if (Array.isArray(src.items)) out.items = src.items.map((s) => prepare(s));
  else if (src.items !== undefined) out.items = prepare(src.items);
  if (Array.isArray(src.prefixItems)) out.prefixItems = src.prefixItems.map((s) => prepare(s));
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = src[key];
    if (Array.isArray(list)) out[key] = list.map((s) => prepare(s, closable));
  }
  if (Array.isArray(src.allOf)) out.allOf = src.allOf.map((s) => prepare(s, false));
  if (src.not !== undefined) out.not = prepare(src.not);
  return out;
}

const validators = new Map<string, z.ZodType | null>();

/**
 * The validator for `method pathTemplate status`: a zod schema, or null when the
 * response is declared without content (e.g. 204). Throws when the operation or the
 * status is not in the document.
 */
export async function responseValidator(
  method: string,
  pathTemplate: string,
  status: number,
): Promise<z.ZodType | null> {
  const cacheKey = `${method.toLowerCase()} ${pathTemplate} ${status}`;
  const cached = validators.get(cacheKey);
  if (cached !== undefined) return cached;
  const doc = await openApiDocument();
  const operation = doc.paths[pathTemplate]?.[method.toLowerCase()];
  if (!operation) throw new Error(`${method.toUpperCase()} ${pathTemplate} is not in /openapi.json`);
  const declared = operation.responses[String(status)];
  const response = declared && resolveResponse(doc, declared);
  if (!response) {
    throw new Error(
      `${method.toUpperCase()} ${pathTemplate} does not declare status ${status} ` +
        `(declares ${Object.keys(operation.responses).join(", ")})`,
    );
  }
  const schema = response.content?.["application/json"]?.schema;
  let validator: z.ZodType | null = null;
  if (schema) validator = validatorOf(doc, schema);
  else if (response.content && Object.keys(response.content).length > 0) {
    throw new Error(`${cacheKey}: only application/json responses are checked`);
  }
  validators.set(cacheKey, validator);
  return validator;
}

/** A zod validator of a schema of the document (see `prepare`). */
function validatorOf(doc: OpenApiDocument, schema: JsonSchema): z.ZodType {
  const defs = Object.fromEntries(
    Object.entries(doc.components.schemas ?? {}).map(([name, s]) => [name, prepare(s)]),
  );
  const root = { ...(prepare(schema) as JsonSchema), $defs: defs as Record<string, JsonSchema> };
  return z.fromJSONSchema(root, { registry: z.registry() });
}

/** One Server-Sent Event as received: its fields (`id` absent when the event set none). */
export type StreamEvent = { id?: string; event: string; data: string };

/** The events of a `text/event-stream` text (comments and the unfinished tail left out). */
export function parseEventStream(text: string): StreamEvent[] {
  return text
    .split("\n\n")
    .slice(0, -1)
    .flatMap((block) => {
      const event: StreamEvent = { event: "message", data: "" };
      let fields = 0;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const at = line.indexOf(":");
        const name = at < 0 ? line : line.slice(0, at);
        const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
        fields++;
        if (name === "id") event.id = value;
        else if (name === "event") event.event = value;
        else if (name === "data") event.data = event.data ? `${event.data}\n${value}` : value;
      }
      return fields ? [event] : [];
    });
}

const eventValidators = new Map<string, z.ZodType>();

/**
 * Fails unless `method pathTemplate status` declares `text/event-stream` and every event is one
 * its `x-sse-events` names, with `data` JSON matching that event's schema.
 */
export async function expectDocumentedEvents(
  method: string,
  pathTemplate: string,
  status: number,
  events: readonly StreamEvent[],
): Promise<void> {
  const doc = await openApiDocument();
  const where = `${method.toUpperCase()} ${pathTemplate} → ${status}`;
  const declared = doc.paths[pathTemplate]?.[method.toLowerCase()]?.responses[String(status)];
  const media = declared && resolveResponse(doc, declared).content?.["text/event-stream"];
  const named = (media as { "x-sse-events"?: Record<string, JsonSchema> } | undefined)?.["x-sse-events"];
  if (!named) throw new Error(`${where}: /openapi.json declares no text/event-stream with x-sse-events`);
  for (const event of events) {
    const schema = named[event.event];
    if (!schema) throw new Error(`${where}: event \`${event.event}\` is not declared in x-sse-events`);
    const key = `${where} ${event.event}`;
    let validator = eventValidators.get(key);
    if (!validator) {
      validator = validatorOf(doc, schema);
      eventValidators.set(key, validator);
    }
    const result = validator.safeParse(JSON.parse(event.data));
    if (!result.success) {
      throw new Error(
        `${where}: event ${event.event} does not match /openapi.json\n${z.prettifyError(result.error)}`,
      );
    }
  }
}

/**
 * Fails unless `body` is what the document promises for `method pathTemplate status`.
 * A response declared without content must have an empty body (the api helper reads it as null).
 */
export async function expectMatchesOpenApi(
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
): Promise<void> {
  const validator = await responseValidator(method, pathTemplate, status);
  const where = `${method.toUpperCase()} ${pathTemplate} → ${status}`;
  if (validator === null) {
    if (body !== null && body !== "")
      throw new Error(`${where}: declared without content, got ${JSON.stringify(body)}`);
    return;
  }
  const result = validator.safeParse(body);
  if (!result.success) {
    throw new Error(
      `${where}: the body does not match /openapi.json\n${z.prettifyError(result.error)}\n` +
        `body: ${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

/** A path template's segments: a literal, or null for a parameter (`{id}`). */
type TemplateSegments = { template: string; parts: Array<string | null>; literals: number };

/** The document's templates by lower-case method, split once (every `request` looks one up). */
const templatesByMethod = new WeakMap<OpenApiDocument, Map<string, TemplateSegments[]>>();

function templatesOf(doc: OpenApiDocument, method: string): TemplateSegments[] {
  let byMethod = templatesByMethod.get(doc);
  if (!byMethod) {
    byMethod = new Map();
    for (const [template, item] of Object.entries(doc.paths)) {
      const parts = template.split("/").map((part) => (/^{[^}]+}$/.test(part) ? null : part));
      const entry = { template, parts, literals: parts.filter((part) => part !== null).length };
      for (const m of Object.keys(item)) byMethod.set(m, [...(byMethod.get(m) ?? []), entry]);
    }
    templatesByMethod.set(doc, byMethod);
  }
  return byMethod.get(method.toLowerCase()) ?? [];
}

/** The document's path template that a concrete path (no query) falls under; literal segments win. */
export async function pathTemplateOf(method: string, path: string): Promise<string | undefined> {
  const doc = await openApiDocument();
  const segments = path.split("?")[0]?.split("/") ?? [];
  let best: TemplateSegments | undefined;
  for (const entry of templatesOf(doc, method)) {
    if (entry.parts.length !== segments.length) continue;
    const fits = entry.parts.every((part, i) =>
      part === null ? (segments[i] ?? "") !== "" : part === segments[i],
    );
    if (fits && (!best || entry.literals > best.literals)) best = entry;
  }
  return best?.template;
}

/**
 * Fails unless a response of `method path` is what the document declares, when the path falls
 * under an operation of the document: the status is declared, a body is JSON and matches the
 * status's schema. Paths that are no operation of the document (unknown routes, /internal,
 * /openapi.json, /docs) are not checked. `request` calls this on every response.
 */
export async function expectDocumentedResponse(
  method: string,
  path: string,
  res: Pick<ApiResponse, "status" | "body" | "headers" | "raw">,
): Promise<void> {
  const template = await pathTemplateOf(method, path);
  if (!template) return;
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    await expectDocumentedEvents(method, template, res.status, parseEventStream(res.raw));
    await expectDocumentedHeaders(method, template, res.status, res.headers);
    return;
  }
  // A stream is checked above; a list that can also be a stream answers JSON otherwise.
  const textual = (await declaredTextTypes(method, template, res.status)).filter(
    (t) => t !== "text/event-stream",
  );
  if (textual.length > 0) {
    // A text answer (a dotenv export): its declared media type, a string body.
    if (!textual.some((declared) => type.startsWith(declared)))
      throw new Error(`${method} ${path} → ${res.status}: content-type ${type}, not ${textual.join(" or ")}`);
  } else {
    if (res.raw !== "" && !type.startsWith("application/json"))
      throw new Error(`${method} ${path} → ${res.status}: content-type ${type}, not application/json`);
    await expectMatchesOpenApi(method, template, res.status, res.body);
  }
  await expectDocumentedHeaders(method, template, res.status, res.headers);
}

/** The `text/*` media types a response declares (none for a JSON answer). */
async function declaredTextTypes(method: string, pathTemplate: string, status: number): Promise<string[]> {
  const doc = await openApiDocument();
  const declared = doc.paths[pathTemplate]?.[method.toLowerCase()]?.responses[String(status)];
  if (!declared) return [];
  return Object.keys(resolveResponse(doc, declared).content ?? {}).filter((t) => t.startsWith("text/"));
}

/** Headers that say something about one answer; each one sent must be declared on that answer. */
const ANSWER_HEADERS = [
  "etag",
  "location",
  "content-location",
  "cache-control",
  "retry-after",
  "idempotent-replayed",
];

/**
 * Fails when an answer carries one of `ANSWER_HEADERS` that its status's response in the
 * document does not declare, or when the document declares an `ETag` on a 200, 201 or 304 that
 * the answer lacks (a client reading the document relies on both).
 */
export async function expectDocumentedHeaders(
  method: string,
  pathTemplate: string,
  status: number,
  headers: Headers,
): Promise<void> {
  const doc = await openApiDocument();
  const operation = doc.paths[pathTemplate]?.[method.toLowerCase()];
  const declared = operation?.responses?.[String(status)];
  if (!declared) return;
  const names = new Set(
    Object.keys(resolveResponse(doc, declared).headers ?? {}).map((h) => h.toLowerCase()),
  );
  const where = `${method.toUpperCase()} ${pathTemplate} → ${status}`;
  for (const name of ANSWER_HEADERS) {
    if (headers.has(name) && !names.has(name))
      throw new Error(`${where}: sends ${name} (${headers.get(name)}), which /openapi.json does not declare`);
  }
  // The ETag of an operation that also answers a stream is its JSON answer's: a stream has none.
  const stream = headers.get("content-type")?.startsWith("text/event-stream");
  if ([200, 201, 304].includes(status) && names.has("etag") && !headers.has("etag") && !stream)
    throw new Error(`${where}: /openapi.json declares an ETag, but the answer has none`);
}
