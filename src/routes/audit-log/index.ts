import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerListOrgAuditLog } from "./list-org";
import { registerListProjectAuditLog } from "./list-project";

export function registerAuditLogRoutes(app: OpenAPIHono<AppEnv>) {
  registerListOrgAuditLog(app);
  registerListProjectAuditLog(app);
}
