import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerInternalIntegrationsRoutes(_app: OpenAPIHono<AppEnv>) {}
