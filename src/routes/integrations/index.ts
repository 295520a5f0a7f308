import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateIntegration } from "./create";
import { registerListIntegrationDeliveries } from "./deliveries";
import { registerGetIntegration } from "./get";
import { registerListIntegrations } from "./list";
import { registerIntegrationOperations } from "./operations";
import { registerUpdateIntegration } from "./update";

export function registerIntegrationRoutes(app: OpenAPIHono<AppEnv>) {
  registerListIntegrations(app);
  registerCreateIntegration(app);
  registerGetIntegration(app);
  registerUpdateIntegration(app);
  registerListIntegrationDeliveries(app);
  registerIntegrationOperations(app);
}
