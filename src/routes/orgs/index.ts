import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateOrg } from "./create";
import { registerListOrgs } from "./list";

export function registerOrgRoutes(app: OpenAPIHono<AppEnv>) {
  registerListOrgs(app);
  registerCreateOrg(app);
}
