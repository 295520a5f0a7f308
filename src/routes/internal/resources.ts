import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerInternalResourcesRoutes(_app: OpenAPIHono<AppEnv>) {}
