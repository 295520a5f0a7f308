import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getEnvironmentResource } from "../../services/resources";
import { EnvironmentResourceParams, StackResourceSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/resources/{id}",
    operationId: "getEnvironmentResource",
    tags: ["Stack resources"],
    summary: "Read a stack resource of an environment",
    description:
      "A resource of another environment is `404 not_found`. Needs the project role `viewer` or above.",
    request: { params: EnvironmentResourceParams },
    responses: { 200: jsonContent(StackResourceSchema, "The stack resource.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id, id } = c.req.valid("param");
    const resource = await getEnvironmentResource(callerContext(c), environment_id, id);
    return c.json(resource, 200);
  });
}
