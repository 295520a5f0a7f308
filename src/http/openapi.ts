/** Shared OpenAPI building blocks: error responses, the list envelope, ID params, list query. */
import { createRoute, type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { RateLimitPolicy } from "../config";
import { DEFAULT_LIMIT, MAX_LIMIT, SORT_VALUES } from "../db/pagination";
import { badInput, ERROR_CODES } from "../errors";
import { ID_PATTERN } from "../lib/ids";
import { errorResponseRefs, PUBLIC_RESPONSE_HEADERS } from "./openapi-components";
import {
  conditionalParameters,
  conditionalResponseHeaders,
  conditionalResponses,
} from "./openapi-conditional";
import { ruleScope, SCOPE_EXTENSION, type Scope } from "./scopes";

export const ErrorSchema = z
  .object({
    code: z.enum(ERROR_CODES).openapi({ description: "One of the ten error codes." }),
    message: z.string().openapi({ description: "Human-readable explanation." }),
    cause: z.unknown().optional().openapi({
      description:
        "Details. For `bad_input` validation failures: an array of `{path, message}`, one per invalid field.",
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
  408: errorResponse("`timeout`: a timeout elsewhere in the system."),
  409: errorResponse("`conflict`: the request conflicts with the current state."),
  429: errorResponse("`rate`: rate limit exceeded; retry after `Retry-After` seconds."),
  500: errorResponse("`internal`: internal failure; a retry may succeed."),
  501: errorResponse("`not_implemented`."),
} as const;

const idString = () =>
  z.string().regex(ID_PATTERN, "Must be an identifier (22-char base58, UUID, or 32-char lowercase hex).");
// The pattern bounds the length (a UUID is the longest form); published for clients. Described
// once, as `components.schemas.Id`, and referenced by every identifier (~100 of them).
export const IdSchema = idString().openapi("Id", { example: "7Hq3VnT5m2WcXbQ9pLk4Rz", maxLength: 36 });
/**
 * The same identifier written out inline: for the few request fields that add a description or
 * `null` to it, which would otherwise be an `allOf` around the reference that the OWASP lint of
 * requests (`npm run lint:openapi`) cannot see through.
 */
export const InlineIdSchema = idString().openapi({ example: "7Hq3VnT5m2WcXbQ9pLk4Rz", maxLength: 36 });

/** A template's name (API_CONTRACT §17): any string of 1–255 characters, not an identifier. */
export const TemplateIdSchema = z.string().min(1).max(255).openapi({
  description: "The template's name, chosen by the engine (1–255 characters).",
  example: "tpl-web-1",
});

/** API_CONTRACT: every timestamp is RFC 3339 UTC with milliseconds; the pattern publishes that. */
export const TimestampSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "Must be RFC 3339 UTC with milliseconds.")
  .openapi({ format: "date-time", example: "2026-11-22T10:04:05.123Z", maxLength: 24 });

/** A path parameter holding an identifier. */
export function idParams<K extends string>(...names: K[]) {
  const shape = {} as Record<K, typeof IdSchema>;
  for (const name of names) {
    shape[name] = IdSchema.openapi({ param: { name, in: "path" } }) as typeof IdSchema;
  }
  return z.object(shape);
}

/**
 * The query parameters every list shares, published once under `components.parameters` (each
 * carries its component name; `registerListQueryParameters` registers them) and referenced by
 * every list operation, which keeps /openapi.json small.
 */
const LIST_QUERY_PARAMETERS = { after: "ListAfter", limit: "ListLimit", sort_by: "ListSortBy" } as const;

export const ListQuerySchema = z.object({
  after: z
    .string()
    .max(1024)
    .regex(/^[\w\-+/= ]+$/, "Must be a cursor from a previous `next_page`.")
    .optional()
    .openapi(LIST_QUERY_PARAMETERS.after, {
      param: { name: "after", in: "query" },
      description: "Cursor from a previous `next_page` (standard or URL-safe base64).",
    }),
  // Decimal digits only: `Number()` alone would also take " 5", "0x10" and "1e1".
  limit: z
    .preprocess(
      (value) => (typeof value === "string" && !/^[0-9]+$/.test(value) ? Number.NaN : value),
      z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
    )
    // Spelled out: the generator reads the preprocessed (unknown) input and drops the bounds.
    .openapi(LIST_QUERY_PARAMETERS.limit, {
      param: { name: "limit", in: "query" },
      description: `Page size, 1–${MAX_LIMIT}.`,
      example: DEFAULT_LIMIT,
      type: "integer",
      format: "int64",
      minimum: 1,
      maximum: MAX_LIMIT,
      default: DEFAULT_LIMIT,
    }),
  // A raw `+` in a query string arrives as a space (as for `after`): ` created_at` is `+created_at`.
  sort_by: z
    .preprocess(
      (value) => (value === " created_at" ? "+created_at" : value),
      z.enum(SORT_VALUES).default("-created_at"),
    )
    .openapi(LIST_QUERY_PARAMETERS.sort_by, {
      param: { name: "sort_by", in: "query" },
      description:
        "`created_at` and `+created_at` ascending, `-created_at` descending (default). Ties by `id`.",
    }),
});

/** Registers the shared list query parameters under `components.parameters` (src/app.ts). */
export function registerListQueryParameters(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const [field, name] of Object.entries(LIST_QUERY_PARAMETERS)) {
    registry.registerParameter(name, ListQuerySchema.shape[field as keyof typeof LIST_QUERY_PARAMETERS]);
  }
}

/** The paginated list envelope. */
export function envelope<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      data: z.array(item),
      has_more: z.boolean(),
      next_page: z
        .string()
        .regex(/^[a-zA-Z0-9+/=]+$/)
        .optional()
        .openapi({ description: "Cursor for the next page; present only when `has_more` is true." }),
    })
    .openapi(name);
}

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { "application/json": { schema } },
});

export const RATE_LIMIT_EXTENSION = "x-rate-limit-policy";

type PublicRouteConfig = RouteConfig & {
  rateLimit?: RateLimitPolicy;
  /**
   * The scope the operation needs (API_CONTRACT §15). Omitted: the rule of `ruleScope`.
   * `null`: none at all (only `GET /v1/api-keys/current`, which any valid key may call).
   */
  scope?: Scope | null;
};

/**
 * A route that declares no request body refuses one (API_CONTRACT §6: bodies are strict,
 * so every field of a body nobody reads is unknown). An empty body, or `{}`, is fine.
 * The body guard has already read and parsed any body into Hono's body cache.
 */
export const refuseRequestBody: MiddlewareHandler = async (c, next) => {
  const cache = c.req.bodyCache as unknown as Record<string, Promise<unknown> | undefined>;
  const parsed = cache.json ? await cache.json : undefined;
  if (parsed !== undefined) {
    const keys =
      typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? Object.keys(parsed) : null;
    if (keys === null || keys.length > 0) {
      throw badInput(
        "This endpoint takes no request body.",
        keys?.length
          ? keys.map((key) => ({ path: key, message: "Unknown field." }))
          : [{ path: "", message: "Expected no body." }],
      );
    }
  }
  await next();
};

/** Route-level middleware: `refuseRequestBody` first when the route declares no body. */
export function bodylessGuard(config: RouteConfig): MiddlewareHandler[] {
  const own = config.middleware
    ? Array.isArray(config.middleware)
      ? config.middleware
      : [config.middleware]
    : [];
  return config.request?.body ? own : [refuseRequestBody, ...own];
}

/**
 * A public /v1 route: adds the shared error responses, the security requirement,
 * the route's rate-limit policy (published as the `x-rate-limit-policy` extension
 * and read by the rate-limit middleware), its required scope (`x-required-scope`, read by
 * the scope middleware), and refuses a body when it declares none.
 */
export function defineRoute<R extends PublicRouteConfig>(config: R) {
  const { rateLimit = "default", scope, ...route } = config;
  const required = scope === undefined ? ruleScope(route.method, route.path) : scope;
  return createRoute({
    ...route,
    // References to components (src/app.ts, src/http/openapi-conditional.ts).
    parameters: [
      ...(route.parameters ?? []),
      ...conditionalParameters(route.method),
      { $ref: `#/components/parameters/${D1_BOOKMARK_PARAMETER}` },
    ],
    middleware: bodylessGuard(route),
    security: [{ ApiKey: [] }],
    [RATE_LIMIT_EXTENSION]: rateLimit,
    ...(required ? { [SCOPE_EXTENSION]: required } : {}),
    responses: {
      ...errorResponseRefs,
      ...withPublicHeaders(route.responses, route.method),
      ...conditionalResponses(route.method, route.responses as Record<string, { headers?: unknown }>),
    },
  } as Omit<R, "rateLimit" | "scope">);
}

/** Each route's own (success) responses get the shared headers, by reference. */
/** The `X-D1-Bookmark` request header, registered once under components.parameters (src/app.ts). */
export const D1_BOOKMARK_PARAMETER = "D1Bookmark";

function withPublicHeaders<T extends RouteConfig["responses"]>(responses: T, method: string): T {
  const out: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(responses)) {
    const own = (response as { headers?: Record<string, unknown> }).headers;
    out[status] = {
      ...response,
      headers: { ...PUBLIC_RESPONSE_HEADERS, ...conditionalResponseHeaders(method, status, own), ...own },
    };
  }
  return out as T;
}

/**
 * The read-only fields that identify a record (or its place): echoed, they must be identifiers;
 * those the service compares (`assertEchoMatches`: a project's `id` and `org_id`, a member's
 * `project_id` and `account_id`, a variable's `id`, `environment_id` and `component_id`) must
 * also name this very record. A member's `membership_id` is only checked as an identifier.
 */
const IDENTIFYING_FIELDS = new Set([
  "id",
  "org_id",
  "project_id",
  "account_id",
  "membership_id",
  "environment_id",
  "component_id",
]);

/**
 * SPEC.md: "A PUT replaces the whole record: its body contains the full representation,
 * including fields that do not change." A replace body therefore also accepts the record's
 * read-only fields, as a client echoes them back from a GET. They change nothing. Those that
 * identify the record are identifiers, and those the service compares must name this record;
 * the rest (times, a resource ID, an account's profile…) are taken in any form, since they are
 * ignored: `2026-11-23T09:02:29Z` for a `created_at` read as `…29.000Z` is no error. Any other
 * field is still unknown and refused.
 */
export function echoedReadOnlyFields<T extends Record<string, z.ZodType>, K extends keyof T & string>(
  record: z.ZodObject<T>,
  writable: readonly K[],
): { [P in Exclude<keyof T, K>]: z.ZodOptional<z.ZodType> } {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(record.shape)) {
    if ((writable as readonly string[]).includes(key)) continue;
    shape[key] = IDENTIFYING_FIELDS.has(key)
      ? schema.optional()
      : z.unknown().optional().openapi({ description: "Read-only: may be sent back as read; ignored." });
  }
  return shape as { [P in Exclude<keyof T, K>]: z.ZodOptional<z.ZodType> };
}
