import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { ProtectionSchema } from "../../schemas/protection";
import { getEnvironmentProtection } from "../../services/environments/protection";
import { EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/protection",
    operationId: "getEnvironmentProtection",
    tags: ["Environments"],
    summary: "Read an environment's protection",
    description:
      "Approvals, reviewers, a wait timer, the concurrency policy and the lock; the defaults (nothing required, " +
      "`parallel`, not locked, `updated_at` null) until it is first changed. Project role `viewer` or above.",
    request: { params: EnvironmentParams },
    responses: { 200: jsonContent(ProtectionSchema, "The protection.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await getEnvironmentProtection(callerContext(c), environment_id), 200);
  });
}
