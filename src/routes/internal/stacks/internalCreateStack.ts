import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { StackSchema } from "../../../schemas/topology";
import { StackCreateBody } from "../../../schemas/topology-writes";
import { createStack } from "../../../services/topology";
import { EnvironmentIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/environments/{environment_id}/stacks",
    operationId: "internalCreateStack",
    request: { params: EnvironmentIdParams, body: jsonBody(StackCreateBody) },
    responses: { 201: jsonContent(StackSchema, "The new stack.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await createStack(c.get("ctx"), environment_id, c.req.valid("json")), 201);
  });
}
