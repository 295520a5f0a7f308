import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerGetResource } from "./get";
import { registerGetEnvironmentResource } from "./get-environment";
import { registerGetStackResource } from "./get-stack";
import { registerListEnvironmentResources } from "./list-environment";
import { registerListStackResources } from "./list-stack";

export function registerResourceRoutes(app: OpenAPIHono<AppEnv>) {
  registerGetResource(app);
  registerGetStackResource(app);
  registerGetEnvironmentResource(app);
  registerListStackResources(app);
  registerListEnvironmentResources(app);
}
