import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateIntegration } from "./create";
import { registerGetIntegration } from "./get";
import { registerListIntegrations } from "./list";
import { registerListIntegrationDeliveries } from "./list-deliveries";
import { registerRecoverIntegration } from "./recover";
import { registerRedeliverDelivery } from "./redeliver";
import { registerRotateIntegrationSecret } from "./rotate-secret";
import { registerTestIntegration } from "./test";
import { registerUpdateIntegration } from "./update";

export function registerIntegrationRoutes(app: OpenAPIHono<AppEnv>) {
  registerListIntegrations(app);
  registerCreateIntegration(app);
  registerGetIntegration(app);
  registerUpdateIntegration(app);
  registerListIntegrationDeliveries(app);
  registerTestIntegration(app);
  registerRedeliverDelivery(app);
  registerRecoverIntegration(app);
  registerRotateIntegrationSecret(app);
}
