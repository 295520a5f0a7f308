import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerResourceRoutes(_app: OpenAPIHono<AppEnv>) {}
