import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerInternalDeploymentsRoutes(_app: OpenAPIHono<AppEnv>) {}
