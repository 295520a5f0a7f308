import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getEnvironment } from "../../services/environments/environments";
import { EnvironmentParams, EnvironmentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}",
    operationId: "getEnvironment",
    tags: ["Environments"],
    summary: "Read an environment",
    description:
      "With `current_deployment_id` (its latest succeeded deployment, by `finished_at`) and `config_pending`. " +
      "Project role `viewer` or above.",
    request: { params: EnvironmentParams },
    responses: { 200: jsonContent(EnvironmentSchema, "The environment.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await getEnvironment(callerContext(c), environment_id), 200);
  });
}
