import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getStack } from "../../services/topology";
import { StackParams, StackSchema } from "../environments/schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/stacks/{stack_id}",
    operationId: "getStack",
    tags: ["Environments"],
    summary: "Read a stack",
    description: "Project role `viewer` or above.",
    request: { params: StackParams },
    responses: { 200: jsonContent(StackSchema, "The stack.") },
  });
  app.openapi(route, async (c) => {
    const { stack_id } = c.req.valid("param");
    return c.json(await getStack(callerContext(c), stack_id), 200);
  });
}
