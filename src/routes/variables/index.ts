import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerVariableRoutes(_app: OpenAPIHono<AppEnv>) {}
