import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerMemberRoutes(_app: OpenAPIHono<AppEnv>) {}
