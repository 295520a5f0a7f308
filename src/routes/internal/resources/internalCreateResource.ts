import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { StackResourceSchema } from "../../../schemas/resource";
import { ResourceCreateBody } from "../../../schemas/resource-writes";
import { createResource } from "../../../services/resources";
import { StackIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/stacks/{stack_id}/resources",
    operationId: "internalCreateResource",
    request: { params: StackIdParams, body: jsonBody(ResourceCreateBody) },
    responses: { 201: jsonContent(StackResourceSchema, "The new stack resource.") },
  });
  app.openapi(route, async (c) => {
    const { stack_id } = c.req.valid("param");
    return c.json(await createResource(c.get("ctx"), stack_id, c.req.valid("json")), 201);
  });
}
