/**
 * What every public response shares, defined once in `components` and referenced with `$ref`
 * (rather than copied into each of the ~380 responses): the response headers of API_CONTRACT
 * §6, §7 and §16, the `Error` schema and the shared error responses of SPEC.md "Endpoints", and
 * the document's tags.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import { BODY_TIMEOUT_MS, LIVE_STREAMS_PER_FAMILY, STREAM_LEASE_MS } from "../config";
import { ERROR_CODES } from "../errors";
import { API_KEY_CHALLENGE } from "../http/error-handler";

type OpenAPIRegistry = OpenAPIHono["openAPIRegistry"];

export const ErrorSchema = z
  .object({
    code: z.enum(ERROR_CODES).openapi({ description: "One of the ten error codes." }),
    message: z.string().openapi({ description: "Human-readable explanation." }),
    cause: z.unknown().optional().openapi({
      description:
        "Details. For `bad_input` validation failures: an array of `{path, message}`, one per invalid field (at most 100; `message` then says how many there were).",
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorSchema } },
});

/** Every endpoint can answer these (SPEC.md "Endpoints"); public routes reference `components.responses`. */
export const errorResponses = {
  400: errorResponse("`bad_input`: invalid input; `cause` lists the invalid fields."),
  401: errorResponse("`unauthenticated`: missing, malformed, unknown, revoked or expired API key."),
  403: errorResponse("`unauthorized` (organization role too low) or `forbidden` (project role too low)."),
  404: errorResponse("`not_found`: no such resource, or not visible to the caller."),
  408: errorResponse("`timeout`: the request body did not arrive whole in time, or a timeout elsewhere."),
  409: errorResponse(
    "`conflict`: the request conflicts with the current state, or passes an organization limit (cause `limits.<name>`).",
  ),
  429: errorResponse("`rate`: rate limit exceeded; retry after `Retry-After` seconds."),
  500: errorResponse("`internal`: internal failure; a retry may succeed."),
  501: errorResponse("`not_implemented`."),
} as const;

type Ref = { $ref: string };
const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` });

const integerHeader = (description: string, maximum: number) => ({
  description,
  schema: { type: "integer" as const, format: "int32", minimum: 0, maximum },
});
const stringHeader = (description: string, maxLength: number, pattern: string) => ({
  description,
  schema: { type: "string" as const, maxLength, pattern },
});

/**
 * `components.headers`: name in components → header object. Built by the document alone
 * (`registerSharedComponents`), so that a deployed build, whose document is an asset, leaves its
 * prose out.
 */
const sharedHeaders = () => ({
  RequestId: stringHeader(
    "The request's ID: the incoming `x-request-id` if it matches `^[A-Za-z0-9._:-]{1,128}$`, else a new one.",
    128,
    "^[A-Za-z0-9._:-]{1,128}$",
  ),
  RateLimitLimit: integerHeader("Requests allowed per 60 s window by this operation's policy.", 1000),
  RateLimitRemaining: integerHeader("Requests left in the window after this one.", 1000),
  RateLimitReset: integerHeader(
    "Whole seconds until the oldest counted request leaves the window (so Remaining grows again); 0 when it is empty.",
    60,
  ),
  RateLimitPolicy: stringHeader(
    'draft-ietf-httpapi-ratelimit-headers-11, e.g. `"default";q=100;w=60`.',
    64,
    '^"[a-z-]+";q=\\d+;w=\\d+$',
  ),
  RateLimit: stringHeader(
    'draft-ietf-httpapi-ratelimit-headers-11, e.g. `"default";r=99;t=60`.',
    64,
    '^"[a-z-]+";r=\\d+;t=\\d+$',
  ),
  AccessControlAllowOrigin: {
    description: "CORS (API_CONTRACT §16): any origin, without credentials.",
    schema: { type: "string" as const, enum: ["*"] },
  },
  RetryAfter: integerHeader(
    "Seconds to wait before retrying (on a 429: `X-Ratelimit-Reset`, or ≤ " +
      `${STREAM_LEASE_MS / 1000} for a live stream, §33).`,
    60,
  ),
  RetryAfterInFlight: {
    description:
      "`1`, on the `409` of a request whose `Idempotency-Key` is held by an earlier request still executing " +
      "(API_CONTRACT §11): retry it then to get that request's answer. Also when the key's earlier use " +
      "expired (24 h) a moment ago: the retry then executes.",
    schema: { type: "integer" as const, format: "int32", enum: [1] },
  },
  Location: {
    description: "The path of the record this request created; a `GET` of it reads the record.",
    schema: { type: "string" as const },
  },
  ContentLocation: {
    description: "The path where the record this answer carries is read.",
    schema: { type: "string" as const },
  },
  XContentTypeOptions: {
    description: "API_CONTRACT §22: on every response; a browser reads an answer only as its declared type.",
    schema: { type: "string" as const, enum: ["nosniff"] },
  },
  CacheControlNoStore: {
    description: "No cache may keep this answer: a secret shown only here, or a live stream.",
    schema: { type: "string" as const, enum: ["no-store"] },
  },
  WwwAuthenticate: {
    description: `RFC 9110 §11.6.1: the scheme that would authenticate, \`${API_KEY_CHALLENGE}\`.`,
    schema: { type: "string" as const, enum: [API_KEY_CHALLENGE] },
  },
});

/** Headers a route declares on its own success answer (./define-route.ts merges them in). */
export const LOCATION_HEADER = { Location: headerRef("Location") };
export const CONTENT_LOCATION_HEADER = { "Content-Location": headerRef("ContentLocation") };
export const NO_STORE_HEADER = { "Cache-Control": headerRef("CacheControlNoStore") };

/** The headers of every public response, as references. */
export const PUBLIC_RESPONSE_HEADERS: Record<string, Ref> = {
  "x-request-id": headerRef("RequestId"),
  "X-Ratelimit-Limit": headerRef("RateLimitLimit"),
  "X-Ratelimit-Remaining": headerRef("RateLimitRemaining"),
  "X-Ratelimit-Reset": headerRef("RateLimitReset"),
  "RateLimit-Policy": headerRef("RateLimitPolicy"),
  RateLimit: headerRef("RateLimit"),
  "Access-Control-Allow-Origin": headerRef("AccessControlAllowOrigin"),
  "X-Content-Type-Options": headerRef("XContentTypeOptions"),
  // Registered in ./document.ts beside its request parameter.
  "X-D1-Bookmark": headerRef("D1Bookmark"),
};

/** `components.responses`: the shared errors, by status. */
const ERROR_RESPONSES: Record<number, { name: string; code: string; description: string }> = {
  400: {
    name: "BadInput",
    code: "bad_input",
    description: "invalid input; `cause` lists the invalid fields.",
  },
  401: {
    name: "Unauthenticated",
    code: "unauthenticated",
    description: "missing, malformed, unknown, revoked or expired API key.",
  },
  403: {
    name: "Forbidden",
    code: "unauthorized` or `forbidden",
    description:
      "the organization role is too low (`unauthorized`), or the project role or the key's scopes (`forbidden`).",
  },
  404: {
    name: "NotFound",
    code: "not_found",
    description: "no such resource, or not visible to the caller.",
  },
  408: {
    name: "Timeout",
    code: "timeout",
    description: `the request body did not arrive whole within ${BODY_TIMEOUT_MS / 1000} s, or its organization was moving (\`Retry-After\`); nothing changed.`,
  },
  409: {
    name: "Conflict",
    code: "conflict",
    description:
      "the request conflicts with the current state, or passes an organization limit (cause `limits.<name>`).",
  },
  429: {
    name: "RateLimited",
    code: "rate",
    description: `rate limit exceeded, or ${LIVE_STREAMS_PER_FAMILY} live streams of the key family open (§33); retry after \`Retry-After\` seconds.`,
  },
  500: { name: "Internal", code: "internal", description: "internal failure; a retry may succeed." },
  501: { name: "NotImplemented", code: "not_implemented", description: "not implemented." },
};

/** Every public endpoint can answer these; each is a reference to `components.responses`. */
export const errorResponseRefs = Object.fromEntries(
  Object.entries(ERROR_RESPONSES).map(([status, { name }]) => [status, responseRef(name)]),
) as Record<"400" | "401" | "403" | "404" | "408" | "409" | "429" | "500" | "501", Ref>;

/**
 * The errors a write with an Idempotency-Key stores and replays (API_CONTRACT §11): what its route
 * answers. Not 401 and 429 (refused before a key is used), not 408 (nothing executed), not a refusal before the route begins
 * (the scope's 403, a malformed header, the body guard's 400s: the key is released), and no 5xx. Their shared responses list
 * `Idempotent-Replayed` (registered in ./conditional.ts); a GET never sends it.
 */
const REPLAYABLE_ERRORS = new Set(["400", "403", "404", "409"]);

/** Registers the shared headers and error responses (the `Error` schema is registered beside them). */
export function registerSharedComponents(registry: OpenAPIRegistry): void {
  const errorSchema = { $ref: "#/components/schemas/Error" };
  for (const [name, header] of Object.entries(sharedHeaders()))
    registry.registerComponent("headers", name, header);
  for (const [status, { name, code, description }] of Object.entries(ERROR_RESPONSES)) {
    registry.registerComponent("responses", name, {
      description: `\`${code}\`: ${description}`,
      headers:
        status === "429"
          ? { ...PUBLIC_RESPONSE_HEADERS, "Retry-After": headerRef("RetryAfter") }
          : status === "408"
            ? { ...PUBLIC_RESPONSE_HEADERS, "Retry-After": headerRef("RetryAfter") }
            : status === "401"
              ? { ...PUBLIC_RESPONSE_HEADERS, "WWW-Authenticate": headerRef("WwwAuthenticate") }
              : REPLAYABLE_ERRORS.has(status)
                ? {
                    ...PUBLIC_RESPONSE_HEADERS,
                    "Idempotent-Replayed": headerRef("IdempotentReplayed"),
                    ...(status === "409" ? { "Retry-After": headerRef("RetryAfterInFlight") } : {}),
                  }
                : PUBLIC_RESPONSE_HEADERS,
      content: { "application/json": { schema: errorSchema } },
    } as Parameters<OpenAPIRegistry["registerComponent"]>[2]);
  }
}

/** The document's top-level tags, in reading order; every operation names one of them. */
export const API_TAGS = [
  { name: "Organizations", description: "The organization an API key belongs to, and creating new ones." },
  {
    name: "Projects",
    description: "Projects of the organization: create, read, replace, delete, disconnect.",
  },
  { name: "Project members", description: "Who may see and change a project, and with which role." },
  {
    name: "Environments",
    description:
      "A project's environments (find, create, rename, delete), and the components and stacks inside each.",
  },
  {
    name: "Variables",
    description:
      "Configuration of components and environments; `secret` and `secure_string` values are encrypted at rest and revealed one at a time.",
  },
  {
    name: "Stack resources",
    description: "The resources the deployment engine reports for stacks and environments.",
  },
  {
    name: "Deployments",
    description: "Deployments of environments and stacks, their progress, and cancelling them.",
  },
  {
    name: "Notification integrations",
    description:
      "Webhooks (Standard Webhooks signatures) and Slack notifications for a project, and their deliveries.",
  },
  {
    name: "Events",
    description: "A project's event log (kept 30 days) and the webhook deliveries of each event.",
  },
  { name: "API keys", description: "The calling API key: its scopes, project restriction and last use." },
  {
    name: "OpenID Connect",
    description:
      "CI without stored keys: trust an issuer (GitHub Actions, GitLab…) and exchange a run's ID token for a short-lived key.",
  },
  {
    name: "Audit log",
    description: "Who did what: one immutable entry per change, reveal, key creation and revocation.",
  },
];
