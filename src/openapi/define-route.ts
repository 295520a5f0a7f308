/**
 * How a route is declared: `defineRoute` for /v1 (shared error responses, headers, the rate-limit
 * policy and the scope it publishes and the middleware read) and `defineInternalRoute` for
 * /internal/v1 (validated alike, never published); the JSON request and response helpers.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type * as z from "zod";
import { LIVE_STREAMS_PER_FAMILY, type RateLimitPolicy } from "../config";
import { badInput } from "../errors";
import { isKeylessOperation } from "../http/keyless";
import {
  LIVE_STREAM_EXTENSION,
  LOST_ANSWER_EXTENSION,
  type LostAnswer,
  RATE_LIMIT_EXTENSION,
  recordInternalRoute,
} from "../http/route-meta";
import { ruleScope, SCOPE_EXTENSION, type Scope } from "../http/scopes";
import { errorResponseRefs, errorResponses, PUBLIC_RESPONSE_HEADERS } from "./components";
import { conditionalParameters, conditionalResponseHeaders, conditionalResponses } from "./conditional";

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { "application/json": { schema } },
});

/** A JSON body that may be left out: absent, it is `{}` (the body guard), so its defaults apply. */
export const optionalJsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  ...jsonBody(schema, description),
  required: false,
});

type PublicRouteConfig = RouteConfig & {
  rateLimit?: RateLimitPolicy;
  /**
   * The scope the operation needs (API_CONTRACT §15). Omitted: the rule of `ruleScope`.
   * `null`: none at all (only `GET /v1/api-keys/current`, which any valid key may call).
   */
  scope?: Scope | null;
  /**
   * Takes no API key (API_CONTRACT §27's token exchange): published without a security requirement
   * and without a scope. Only an operation listed in src/http/keyless.ts, which the middleware read.
   */
  keyless?: true;
  /**
   * A POST that writes one record and honours `If-Match` as §12's PUT, PATCH and DELETE do (an
   * environment's lock writes its protection): published with the `If-Match` parameter.
   */
  ifMatch?: true;
  /**
   * Answers live streams (`Accept: text/event-stream`, API_CONTRACT §19): each holds one of its key
   * family's places (§33) while it lasts. Published as `x-live-stream-limit`, the places a family has.
   */
  liveStream?: true;
};

/**
 * What a write must declare beside its scope and policy: how its answer is rebuilt when a crash
 * lost it after the write committed (API_CONTRACT §11; src/idempotency/executed.ts). A read
 * declares none. Published as `x-lost-answer`; test/properties/idempotency-lost-answers.test.ts
 * walks /openapi.json and fails for a write without it.
 */
type WriteDeclarations<R> = R extends { method: "get" }
  ? { lostAnswer?: undefined }
  : { lostAnswer: LostAnswer };

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
export function defineRoute<R extends PublicRouteConfig>(config: R & WriteDeclarations<R>) {
  const { rateLimit = "default", scope, lostAnswer, keyless, ifMatch, liveStream, ...route } = config;
  if (keyless && !isKeylessOperation(route.method, route.path)) {
    throw new Error(
      `${route.method.toUpperCase()} ${route.path}: a keyless route is listed in src/http/keyless.ts`,
    );
  }
  const required = keyless ? null : scope === undefined ? ruleScope(route.method, route.path) : scope;
  if (route.method !== "get") checkLostAnswer(route, lostAnswer);
  return createRoute({
    ...route,
    // References to components (./document.ts, ./conditional.ts).
    parameters: [
      ...(route.parameters ?? []),
      ...conditionalParameters(route.method, ifMatch),
      { $ref: `#/components/parameters/${D1_BOOKMARK_PARAMETER}` },
    ],
    middleware: bodylessGuard(route),
    security: keyless ? [] : [{ ApiKey: [] }],
    [RATE_LIMIT_EXTENSION]: rateLimit,
    ...(required ? { [SCOPE_EXTENSION]: required } : {}),
    ...(lostAnswer ? { [LOST_ANSWER_EXTENSION]: lostAnswer } : {}),
    ...(liveStream ? { [LIVE_STREAM_EXTENSION]: LIVE_STREAMS_PER_FAMILY } : {}),
    responses: {
      ...errorResponseRefs,
      ...withPublicHeaders(route.responses, route.method),
      ...conditionalResponses(route.method, route.responses as Record<string, { headers?: unknown }>),
    },
  } as Omit<R, "rateLimit" | "scope" | "lostAnswer" | "keyless" | "ifMatch" | "liveStream">);
}

/** A declaration its answers cannot honour is a programming error, found when the route is defined. */
function checkLostAnswer(route: RouteConfig, lostAnswer: LostAnswer | undefined): void {
  const where = `${route.method.toUpperCase()} ${route.path}`;
  if (!lostAnswer) throw new Error(`${where}: a write declares how its lost answer is rebuilt (lostAnswer)`);
  const success = Object.keys(route.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300);
  if (lostAnswer.rebuild === "status" && !success.includes(204)) {
    throw new Error(`${where}: only a 204 is rebuilt from its status alone`);
  }
  if (lostAnswer.rebuild === "record" && !success.some((s) => s === 200 || s === 201)) {
    throw new Error(`${where}: a record is rebuilt only for a 200 or 201 answer`);
  }
}

/** The `X-D1-Bookmark` request header, registered once under components.parameters (./document.ts). */
export const D1_BOOKMARK_PARAMETER = "D1Bookmark";

/** Each route's own (success) responses get the shared headers, by reference. */
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
 * An internal route: validated like the public ones (a body it does not declare is refused),
 * never published in /openapi.json. Its `operationId` (`internal…`) matches its `register…`;
 * the route is recorded in the internal route table (src/http/route-meta.ts), so its audit
 * entries are named after it (`internalCreateStack` → action `internal.createStack`).
 */
export function defineInternalRoute<R extends RouteConfig & { operationId: `internal${string}` }>(config: R) {
  recordInternalRoute(config);
  return createRoute({
    ...config,
    middleware: bodylessGuard(config),
    hide: true,
    responses: { ...errorResponses, ...config.responses },
  } as R & { hide: true });
}
