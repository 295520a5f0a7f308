import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getStackResource } from "../../services/resources";
import { StackResourceParams, StackResourceSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/stacks/{stack_id}/resources/{id}",
    operationId: "getStackResource",
    tags: ["Stack resources"],
    summary: "Read a stack resource of a stack",
    description: "A resource of another stack is `404 not_found`. Needs the project role `viewer` or above.",
    request: { params: StackResourceParams },
    responses: { 200: jsonContent(StackResourceSchema, "The stack resource.") },
  });
  app.openapi(route, async (c) => {
    const { stack_id, id } = c.req.valid("param");
    const resource = await getStackResource(callerContext(c), stack_id, id);
    return c.json(resource, 200);
  });
}
