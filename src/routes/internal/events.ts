import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerInternalEventsRoutes(_app: OpenAPIHono<AppEnv>) {}
