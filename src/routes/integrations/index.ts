import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerIntegrationRoutes(_app: OpenAPIHono<AppEnv>) {}
