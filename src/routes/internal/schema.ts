/**
 * The internal API's shared pieces (API_CONTRACT §9): the route definer and the path
 * parameters several resources use. Each resource's own bodies and records sit in its folder.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { bodylessGuard, errorResponses, idParams } from "../../http/openapi";
import { recordInternalRoute } from "../../http/route-meta";
import { freeString } from "../../http/text";

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

export const OrgIdParams = idParams("org_id");
export const ProjectIdParams = idParams("project_id");
export const EnvironmentIdParams = idParams("environment_id");
export const StackIdParams = idParams("stack_id");
export const IdParams = idParams("id");

/** An organization's body: its name, 1–100 characters (API_CONTRACT §3). */
export const OrgNameBody = z.strictObject({ name: z.string().min(1).max(100) });

/** The body of an environment or a component: a name, a plain string (API_CONTRACT §9). */
export const NameBody = z.strictObject({ name: freeString() });
