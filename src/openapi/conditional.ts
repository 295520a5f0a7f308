/**
 * The headers of API_CONTRACT §11 and §12 in /openapi.json, defined once under `components`
 * and referenced from each operation they apply to:
 * - parameters: `Idempotency-Key` on every POST, PUT, PATCH and DELETE; `If-Match` on every
 *   PUT, PATCH and DELETE (each of them writes one record and honours it), and on a POST that
 *   writes one record and honours it too (`ifMatch` of its route: an environment's lock);
 *   `If-None-Match` on every GET;
 * - response headers: `ETag` on the 200/201 of GET, PUT, PATCH and POST; `Idempotent-Replayed`
 *   on every answer of a write that can be stored (not 401, 429 or 5xx); and a `304` response
 *   on every GET.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { HEADER_VALUE_PATTERN, MAX_HEADER_BYTES } from "./primitives";

type Ref = { $ref: string };
const ref = (kind: "parameters" | "headers" | "responses", name: string): Ref => ({
  $ref: `#/components/${kind}/${name}`,
});

const WRITE_METHODS = new Set(["post", "put", "patch", "delete"]);
const IF_MATCH_METHODS = new Set(["put", "patch", "delete"]);

export function registerConditionalComponents(
  registry: OpenAPIHono["openAPIRegistry"],
  sharedHeaders: Record<string, unknown>,
): void {
  // Any header value (a value that names no ETag is refused or ignored as described, never 400):
  // bounded only by what the platform lets through. No `example`: /docs ("Try it") and its
  // snippets send an optional header's example as its value, and a made-up ETag turns a first try
  // into a 304 (If-None-Match) or a 409 (If-Match). The descriptions show the form.
  const etagList = { type: "string" as const, maxLength: MAX_HEADER_BYTES, pattern: HEADER_VALUE_PATTERN };
  registry.registerComponent("parameters", "IdempotencyKey", {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes the request safe to retry (API_CONTRACT §11): 1–255 characters from 0x21–0x7E, scoped to the " +
      "API key and remembered 24 h. A retry with the same key, method, path, query and body answers the " +
      "stored answer with `Idempotent-Replayed: true`; the same key with another request is `400`; while " +
      "the first is executing, `409` with `Retry-After: 1`. Answers of 500 and above are not stored, and a " +
      "request refused before it runs (`401`, `429`, a key without the operation's scope, a malformed header, " +
      "a body that is not JSON in UTF-8) leaves the key unused. Other headers (`If-Match`) are not compared. " +
      "The key commits with the write itself: a write whose answer was lost after it committed (a dropped " +
      "connection, a failure of the service) never executes again; a retry answers what it did, with the " +
      "record as it is now, or `409` saying so when that answer cannot be rebuilt (a secret shown once, a count).",
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
  });
  registry.registerComponent("parameters", "IfMatch", {
    name: "If-Match",
    in: "header",
    required: false,
    description:
      "Write only if the record's current ETag is listed (strong comparison; `*` matches any existing " +
      'record). Otherwise `409 conflict` with `cause [{path: "header.if-match"}]` and nothing changes; ' +
      "the comparison and the write are one atomic step. A value that is neither `*` nor a list of ETags " +
      'names none (RFC 9110 §13.1.1): `409`. Send a read\'s `ETag` as it came (`"3f2a…"`).',
    schema: etagList,
  });
  registry.registerComponent("parameters", "IfNoneMatch", {
    name: "If-None-Match",
    in: "header",
    required: false,
    description:
      "`304 Not Modified` (no body) when the current ETag is listed (weak comparison; `*` matches any). A " +
      "value that is neither `*` nor a list of ETags names none (RFC 9110 §13.1.2): the usual answer. Send " +
      'an earlier answer\'s `ETag` as it came (`"3f2a…"`).',
    schema: etagList,
  });
  registry.registerComponent("headers", "ETag", {
    description:
      'Strong for one record (the same for every caller, changing with any field), weak (`W/"…"`) for a list.',
    schema: { type: "string" },
  });
  registry.registerComponent("headers", "IdempotentReplayed", {
    description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  });
  registry.registerComponent("responses", "NotModified", {
    description: "Not modified: `If-None-Match` lists the current ETag. No body.",
    headers: { ...sharedHeaders, ETag: ref("headers", "ETag") },
  });
}

/** The parameter references of an operation (`ifMatch`: a POST that honours `If-Match`). */
export function conditionalParameters(method: string, ifMatch = false): Ref[] {
  const m = method.toLowerCase();
  if (m === "get") return [ref("parameters", "IfNoneMatch")];
  if (!WRITE_METHODS.has(m)) return [];
  return IF_MATCH_METHODS.has(m) || ifMatch
    ? [ref("parameters", "IdempotencyKey"), ref("parameters", "IfMatch")]
    : [ref("parameters", "IdempotencyKey")];
}

/**
 * An answer marked `Cache-Control: no-store` gets no ETag unless its route tags it itself
 * (src/middleware/etag.ts): so it is declared, from the headers the route declares on it.
 */
const untagged = (own: Record<string, unknown> | undefined) =>
  own !== undefined && "Cache-Control" in own && !("ETag" in own);

/** The header references of one response of an operation (`own`: those its route declares). */
export function conditionalResponseHeaders(
  method: string,
  status: string,
  own?: Record<string, unknown>,
): Record<string, Ref> {
  const m = method.toLowerCase();
  const headers: Record<string, Ref> = {};
  if ((status === "200" || status === "201") && m !== "delete" && !untagged(own))
    headers.ETag = ref("headers", "ETag");
  // Every stored answer can be replayed: all but 401 and 429 (refused before a key is used) and 5xx.
  const replayable = status !== "401" && status !== "429" && Number(status) < 500;
  if (WRITE_METHODS.has(m) && replayable)
    headers["Idempotent-Replayed"] = ref("headers", "IdempotentReplayed");
  return headers;
}

/** Extra responses of an operation: the 304 of a GET whose answer has an ETag. */
export function conditionalResponses(
  method: string,
  responses: Record<string, { headers?: unknown }>,
): Record<string, Ref> {
  if (method.toLowerCase() !== "get") return {};
  return untagged(responses["200"]?.headers as Record<string, unknown> | undefined)
    ? {}
    : { 304: ref("responses", "NotModified") };
}

/** The header reference that declares a route's own ETag (a no-store answer it tags itself). */
export const ETAG_HEADER = { ETag: ref("headers", "ETag") };
