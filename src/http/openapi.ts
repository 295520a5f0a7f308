/** Shared OpenAPI building blocks: error responses, the list envelope, ID params, list query. */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { ERROR_CODES } from "./errors";
import { ID_PATTERN } from "./ids";
import { DEFAULT_LIMIT, MAX_LIMIT, SORT_VALUES } from "./pagination";

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

/** Every endpoint can answer these (SPEC.md "Endpoints"). */
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

export const IdSchema = z
  .string()
  .regex(ID_PATTERN, "Must be an identifier (22-char base58, UUID, or 32-char lowercase hex).")
  .openapi({ example: "7Hq3VnT5m2WcXbQ9pLk4Rz" });

export const TimestampSchema = z
  .string()
  .openapi({ format: "date-time", example: "2026-11-22T10:04:05.123Z" });

/** A path parameter holding an identifier. */
export function idParams<K extends string>(...names: K[]) {
  const shape = {} as Record<K, typeof IdSchema>;
  for (const name of names) {
    shape[name] = IdSchema.openapi({ param: { name, in: "path" } }) as typeof IdSchema;
  }
  return z.object(shape);
}

export const ListQuerySchema = z.object({
  after: z
    .string()
    .max(1024)
    .regex(/^[\w\-+/= ]+$/, "Must be a cursor from a previous `next_page`.")
    .optional()
    .openapi({ description: "Cursor from a previous `next_page` (standard or URL-safe base64)." }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    // Spelled out: the generator reads the coerced (unknown) input and drops the bounds.
    .openapi({
      description: `Page size, 1–${MAX_LIMIT}.`,
      example: DEFAULT_LIMIT,
      type: "integer",
      format: "int64",
      minimum: 1,
      maximum: MAX_LIMIT,
      default: DEFAULT_LIMIT,
    }),
  sort_by: z.enum(SORT_VALUES).default("-created_at").openapi({
    description:
      "`created_at` and `+created_at` ascending, `-created_at` descending (default). Ties by `id`.",
  }),
});

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

/** Rate-limit policies (API_CONTRACT §7). Each route declares its own. */
export const RATE_LIMIT_POLICIES = {
  default: 100,
  reveal: 20,
  "orgs-create": 10,
  anonymous: 60,
} as const;
export type RateLimitPolicy = keyof typeof RATE_LIMIT_POLICIES;
export const RATE_LIMIT_WINDOW_SECONDS = 60;

export const RATE_LIMIT_EXTENSION = "x-rate-limit-policy";

type PublicRouteConfig = RouteConfig & { rateLimit?: RateLimitPolicy };

/**
 * A public /v1 route: adds the shared error responses, the security requirement
 * and the route's rate-limit policy (published as the `x-rate-limit-policy` extension
 * and read by the rate-limit middleware).
 */
export function defineRoute<R extends PublicRouteConfig>(config: R) {
  const { rateLimit = "default", ...route } = config;
  return createRoute({
    ...route,
    security: [{ ApiKey: [] }],
    [RATE_LIMIT_EXTENSION]: rateLimit,
    responses: { ...errorResponses, ...route.responses },
  } as Omit<R, "rateLimit">);
}
