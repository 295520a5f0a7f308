import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";

export function registerDeploymentRoutes(_app: OpenAPIHono<AppEnv>) {}
