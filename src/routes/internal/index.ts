import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerInternalDeploymentsRoutes } from "./deployments";
import { registerInternalEventsRoutes } from "./events";
import { registerInternalIdentityRoutes } from "./identity";
import { registerInternalIntegrationsRoutes } from "./integrations";
import { registerInternalResourcesRoutes } from "./resources";
import { registerInternalTopologyRoutes } from "./topology";
import { registerInternalVariablesRoutes } from "./variables";

/** /internal/v1: the deployment engine's and the dashboard's API (bearer ADMIN_TOKEN, not rate-limited). */
export function registerInternalRoutes(app: OpenAPIHono<AppEnv>) {
  registerInternalIdentityRoutes(app);
  registerInternalTopologyRoutes(app);
  registerInternalResourcesRoutes(app);
  registerInternalDeploymentsRoutes(app);
  registerInternalEventsRoutes(app);
  registerInternalIntegrationsRoutes(app);
  registerInternalVariablesRoutes(app);
}
