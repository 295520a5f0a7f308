import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerGetCurrentApiKey } from "./current";

export function registerApiKeyRoutes(app: OpenAPIHono<AppEnv>) {
  registerGetCurrentApiKey(app);
}
