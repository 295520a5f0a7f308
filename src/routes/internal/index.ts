import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerInternalIdentityRoutes } from "./identity";
import { registerInternalTopologyRoutes } from "./topology";

/** /internal/v1: the deployment engine's and the dashboard's API (bearer ADMIN_TOKEN, not rate-limited). */
export function registerInternalRoutes(app: OpenAPIHono<AppEnv>) {
  registerInternalIdentityRoutes(app);
  registerInternalTopologyRoutes(app);
}
